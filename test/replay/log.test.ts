// The JSON Lines reader behind `replay` and `inspect`.
import { describe, expect, it } from "vitest";
import { batchByTimestamp, LogParseError, parseLog } from "../../src/replay/log.ts";

const ok = (id: string, ts: number | string, sender = "bob", content = "hi") => JSON.stringify({ id, ts, sender, content });

function parseError(text: string): LogParseError {
  try {
    parseLog(text);
  } catch (err) {
    if (err instanceof LogParseError) return err;
    throw err;
  }
  throw new Error("parseLog accepted the input");
}

describe("parseLog", () => {
  it("reads id/ts/sender/content, numbers lines from 1, ignores blank lines and extra fields", () => {
    const text = [ok("a", 1000), "", `{"id":7,"ts":"2000","sender":"carol","content":"yo","kind":"message","replyTo":["a",3]}`, "   "].join("\n");
    expect(parseLog(text)).toEqual({
      lines: [
        { id: "a", ts: 1000, sender: "bob", content: "hi", line: 1 },
        { id: "7", ts: 2000, sender: "carol", content: "yo", line: 3, replyTo: ["a"] },
      ],
      skipped: [],
      skippedCount: 0,
    });
  });

  it("accepts CRLF line ends", () => {
    expect(parseLog(`${ok("a", 1)}\r\n${ok("b", 2)}\r\n`).lines.map((l) => [l.id, l.line])).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
  });

  it("sorts by ts and keeps file order for equal ts", () => {
    const text = [ok("late", 3000), ok("x", 1000), ok("y", 1000), ok("mid", 2000), ok("z", 1000)].join("\n");
    expect(parseLog(text).lines.map((l) => l.id)).toEqual(["x", "y", "z", "mid", "late"]);
  });

  it.each([
    ["not JSON", `${ok("a", 1)}\n{"id":"b",`, 2, "line 2: not valid JSON"],
    ["a JSON array", `${ok("a", 1)}\n${ok("b", 2)}\n[1,2]`, 3, "line 3: expected a JSON object"],
    ["a missing field", `${ok("a", 1)}\n{"id":"b","ts":2,"content":"x"}`, 2, "line 2: missing field `sender`"],
    ["a null field", `{"id":"a","ts":1,"sender":"bob","content":null}`, 1, "line 1: missing field `content`"],
    ["a non-numeric ts", `${ok("a", 1)}\n${ok("b", "yesterday")}`, 2, 'line 2: expected `ts` to be epoch milliseconds, got "yesterday"'],
    ["an empty ts string", ok("a", ""), 1, 'line 1: expected `ts` to be epoch milliseconds, got ""'],
    ["an empty sender", `{"id":"a","ts":1,"sender":"","content":"x"}`, 1, 'line 1: expected `sender` to be a non-empty string, got ""'],
    ["a non-string content", `{"id":"a","ts":1,"sender":"bob","content":5}`, 1, "line 1: expected `content` to be a string, got 5"],
    ["an object id", `{"id":{},"ts":1,"sender":"bob","content":"x"}`, 1, "line 1: expected `id` to be a string or number, got {}"],
    ["a duplicate id", `${ok("a", 1)}\n\n${ok("a", 2)}`, 3, 'line 3: duplicate id "a"'],
  ])("rejects %s with the line number", (_name, text, lineNo, message) => {
    const err = parseError(text);
    expect(err.code).toBe("LOG_INVALID");
    expect(err.line).toBe(lineNo);
    expect(err.message).toBe(message);
  });

  it("with skipBad, keeps the good lines and lists the bad ones with their reasons", () => {
    const text = [ok("a", 1), "nope", ok("b", "x"), ok("c", 3), `{"id":"d","ts":4,"sender":"bob"}`].join("\n");
    const parsed = parseLog(text, { skipBad: true });
    expect(parsed.lines.map((l) => l.id)).toEqual(["a", "c"]);
    expect(parsed.skipped).toEqual([
      { line: 2, reason: "not valid JSON" },
      { line: 3, reason: 'expected `ts` to be epoch milliseconds, got "x"' },
      { line: 5, reason: "missing field `content`" },
    ]);
  });

  it("names the file when given one", () => {
    expect(new LogParseError(4, "not valid JSON", "chat.jsonl").message).toBe("chat.jsonl line 4: not valid JSON");
  });
});

describe("batchByTimestamp", () => {
  it("groups consecutive lines with the same ts", () => {
    const { lines } = parseLog([ok("a", 1), ok("b", 1), ok("c", 2), ok("d", 3), ok("e", 3), ok("f", 3)].join("\n"));
    expect(batchByTimestamp(lines).map((b) => b.map((l) => l.id))).toEqual([["a", "b"], ["c"], ["d", "e", "f"]]);
  });

  it("returns no batches for no lines", () => {
    expect(batchByTimestamp([])).toEqual([]);
  });
});
