// Issue 30.6: replay walks a log from its file instead of holding it. The source opened on a file
// must give exactly what readLog gives (the same lines in the same order, the same skipped lines,
// the same error for the same line), whether it walks the file (in time order, no id twice) or
// falls back to reading it whole (out of order, an id on two lines). Real files. The memory
// figures are in `npm run bench -- replay-memory` (peak RSS against the log's size).
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { LogParseError, readLog } from "../../src/replay/log.ts";
import { openLogSource } from "../../src/replay/log-source.ts";
import { tempDir } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});
const file = (text: string): string => {
  const d = tempDir("log-source");
  dirs.push(d);
  const f = join(d.dir, "chat.jsonl");
  writeFileSync(f, text);
  return f;
};
const ok = (id: string, ts: number, sender = "bob") => JSON.stringify({ id, ts, sender, content: `hi ${id}` });
const outcome = <T>(read: () => T): T | string => {
  try {
    return read();
  } catch (e) {
    if (e instanceof LogParseError) return e.message;
    throw e;
  }
};

describe("openLogSource", () => {
  it("a log in time order is walked from the file, as often as asked, giving readLog's lines and senders", () => {
    const f = file([ok("a", 1, "ann"), ok("b", 2), ok("c", 2, "ann"), "", ok("d", 5, "cy")].join("\n"));
    const src = openLogSource(f);
    expect(src.inMemory).toBe(false);
    expect(src.count).toBe(4);
    expect(src.firstTs).toBe(1);
    expect(src.senders).toEqual(["ann", "bob", "cy"]);
    expect([...src.lines()]).toEqual(readLog(f).lines);
    expect([...src.lines()]).toEqual(readLog(f).lines);
  });

  it("out of time order, or an id on two lines: read whole, sorted, the repeat refused naming its line (or skipped)", () => {
    const unsorted = file([ok("a", 5), ok("b", 1)].join("\n"));
    expect(openLogSource(unsorted).inMemory).toBe(true);
    expect([...openLogSource(unsorted).lines()].map((l) => l.id)).toEqual(["b", "a"]);
    const repeated = file([ok("a", 1), "not json", ok("a", 2), ok("b", 3)].join("\n"));
    expect(outcome(() => openLogSource(repeated))).toBe("line 2: not valid JSON");
    const dupFirst = file([ok("a", 1), ok("a", 2), "not json"].join("\n"));
    expect(outcome(() => openLogSource(dupFirst))).toBe('line 2: duplicate id "a"');
    const skipped = openLogSource(dupFirst, { skipBad: true });
    expect(skipped.inMemory).toBe(true);
    expect(skipped.skipped).toEqual([
      { line: 2, reason: 'duplicate id "a"' },
      { line: 3, reason: "not valid JSON" },
    ]);
  });

  it("property: whatever the lines (bad, blank, repeated ids, any order), it gives what readLog gives", () => {
    const row = fc.oneof(
      fc.tuple(fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h"), fc.integer({ min: 0, max: 20 }), fc.constantFrom("ann", "bob")).map(([id, ts, s]) => ok(id, ts, s)),
      fc.constantFrom("", "  ", "not json", "[1]", '{"id":"x"}'),
    );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 12 }), fc.boolean(), (rows, skipBad) => {
        const f = file(rows.join("\n"));
        const want = outcome(() => readLog(f, { skipBad }));
        const got = outcome(() => {
          const src = openLogSource(f, { skipBad });
          return { lines: [...src.lines()], skipped: src.skipped, skippedCount: src.skippedCount };
        });
        expect(got).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });
});

describe("replay --json written as it goes", () => {
  it("is byte for byte the report built whole, and leaves no temp file behind", async () => {
    const f = file([ok("a", 1_000, "ann"), JSON.stringify({ id: "b", ts: 2_000, sender: "bob", content: "dave: are you there?" }), ok("c", 9_000, "ann")].join("\n"));
    const whole: string[] = [];
    const pieces: string[] = [];
    const args = ["replay", f, "--persona", "dave", "--responder", "mention", "--json"];
    // The dispatches and drops go to a temp file while the replay runs: a folder of its own here.
    const tmp = tempDir("replay-tmp");
    dirs.push(tmp);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp.dir;
    try {
      expect(await main(args, { out: (s) => void whole.push(s), err: () => {} })).toBe(0);
      expect(await main(args, { out: () => {}, write: (s) => void pieces.push(s), err: () => {} })).toBe(0);
      expect(await main(["replay", f, "--persona", "dave", "--persona", "erin", "--responder", "mention"], { out: () => {}, err: () => {} })).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(readdirSync(tmp.dir)).toEqual([]);
    expect(pieces.join("")).toBe(`${whole.join("\n")}\n`);
    const report = JSON.parse(whole[0]!) as { messages: Array<{ id: string; isMention: boolean }>; dispatches: unknown[] };
    expect(report.messages.map((m) => [m.id, m.isMention])).toEqual([
      ["a", false],
      ["b", true],
      ["c", false],
    ]);
    expect(report.dispatches.length).toBeGreaterThan(0);
  });
});
