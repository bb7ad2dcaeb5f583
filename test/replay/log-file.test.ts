// Issue 30.6: a log is read from its file a line at a time (a 300 MB line took 992 MB): no line
// longer than the limit is held (one error naming the line, or skipped with --skip-bad), lines
// split across reads and multi-byte characters split across reads come out whole, and the
// result is exactly what parsing the whole text gives. Real files. The memory figures are in
// `npm run bench -- logs` (RSS against the log's size).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { LogParseError, MAX_LOG_LINE_BYTES, parseLog, readLog } from "../../src/replay/log.ts";
import { tempDir } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});
const file = (name: string, text: string | Buffer): string => {
  const d = tempDir("log-file");
  dirs.push(d);
  const f = join(d.dir, name);
  writeFileSync(f, text);
  return f;
};
const ok = (id: string, ts: number, content = "hi") => JSON.stringify({ id, ts, sender: "bob", content });

describe("readLog", () => {
  it("a line longer than the limit is refused naming it, never held; with skipBad it is skipped and the lines after it are read", () => {
    const f = file("chat.jsonl", [ok("a", 1), ok("b", 2, "x".repeat(5000)), ok("c", 3)].join("\n"));
    const err = (() => {
      try {
        readLog(f, { maxLineBytes: 1000, chunkBytes: 256 });
      } catch (e) {
        return e as LogParseError;
      }
      throw new Error("accepted");
    })();
    expect(err).toBeInstanceOf(LogParseError);
    expect(err.message).toBe("line 2: longer than 1,000 bytes: not a chat message (is this a JSON Lines log, one message a line?)");
    const skipped = readLog(f, { maxLineBytes: 1000, chunkBytes: 256, skipBad: true });
    expect(skipped.lines.map((l) => l.id)).toEqual(["a", "c"]);
    expect(skipped.skipped).toEqual([{ line: 2, reason: "longer than 1,000 bytes: not a chat message (is this a JSON Lines log, one message a line?)" }]);
    expect(skipped.skippedCount).toBe(1);
  });

  it("a reason never carries a whole field (a 100 KB bad value is cut to 60 characters)", () => {
    const f = file("chat.jsonl", JSON.stringify({ id: "a", ts: "t".repeat(100_000), sender: "bob", content: "x" }));
    const parsed = readLog(f, { skipBad: true });
    expect(parsed.skipped[0]!.reason.length).toBeLessThan(120);
  });

  it("property: read in chunks of any size (lines and UTF-8 characters split across reads), it gives what parsing the whole text gives", () => {
    const content = fc.string({ unit: fc.constantFrom("a", "é", "漢", "👍", " ", "\\", '"', "\u2028"), maxLength: 40 });
    const line = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 1e6 }), content).map(([ts, c]) => ({ ts, c })),
      fc.constantFrom("", "   ", "not json", "[1]", '{"id":"x"}'),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.integer({ min: 1, max: 64 }), fc.constantFrom("\n", "\r\n"), fc.boolean(), (rows, chunkBytes, eol, trailing) => {
        const text = rows.map((r, i) => (typeof r === "string" ? r : ok(`m${i}`, r.ts, r.c))).join(eol) + (trailing ? eol : "");
        const f = file("p.jsonl", text);
        const whole = (() => {
          try {
            return parseLog(text, { skipBad: true });
          } catch (e) {
            return e;
          }
        })();
        expect(readLog(f, { skipBad: true, chunkBytes })).toEqual(whole);
        if (!(whole as { skippedCount: number }).skippedCount) expect(readLog(f, { chunkBytes })).toEqual(whole);
      }),
      { numRuns: 150 },
    );
  });
});

describe("acp-group replay on a log with one line past the limit (the CLI, real files)", () => {
  it(`a ${(2 * MAX_LOG_LINE_BYTES).toLocaleString("en")}-byte line: one error line naming the file and the line, exit 1; --skip-bad replays the rest`, async () => {
    const big = JSON.stringify({ id: "big", ts: 2, sender: "bob", content: "x".repeat(2 * MAX_LOG_LINE_BYTES) });
    const f = file("big.jsonl", [ok("a", 1, "alice: hello"), big, ok("c", 3, "alice: still there?")].join("\n"));
    const err: string[] = [];
    const out: string[] = [];
    const code = await main(["replay", f, "--persona", "alice"], { out: (s) => void out.push(s), err: (s) => void err.push(s) });
    expect(err).toEqual([`acp-group: ${f} line 2: longer than 1,048,576 bytes: not a chat message (is this a JSON Lines log, one message a line?)`]);
    expect(code).toBe(1);
    const skipping: string[] = [];
    expect(await main(["replay", f, "--persona", "alice", "--skip-bad"], { out: (s) => void skipping.push(s), err: () => {} })).toBe(0);
    expect(skipping.at(-1)).toBe("skipped 1 bad line(s): line 2 (longer than 1,048,576 bytes: not a chat message (is this a JSON Lines log, one message a line?))");
  });
});
