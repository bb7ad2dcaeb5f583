// A log's lines are parsed by src/replay/json-text.ts, not JSON.parse (which interns every short
// string value: a log of short, distinct ids left one interned string per line until a full
// collection). Whatever the text — any JSON value, written compactly or spread out, or such a text
// cut, stretched or garbled — it gives what JSON.parse gives, and throws a SyntaxError exactly when
// JSON.parse throws; and the strings of a parsed line are not interned.
import { execFileSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonText } from "../../src/replay/json-text.ts";

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
const outcome = (parse: (t: string) => unknown, text: string): Outcome => {
  try {
    return { ok: true, value: parse(text) };
  } catch (error) {
    return { ok: false, error };
  }
};

/** Same value (Object.is for numbers: -0 stays -0; same prototypes and own keys), or both a SyntaxError. */
function expectSameAsJsonParse(text: string): void {
  const want = outcome(JSON.parse, text);
  const got = outcome(parseJsonText, text);
  if (!want.ok) {
    expect(got.ok, `accepted what JSON.parse refuses: ${JSON.stringify(text)}`).toBe(false);
    if (!got.ok) expect(got.error).toBeInstanceOf(SyntaxError);
    return;
  }
  expect(got.ok, `refused what JSON.parse takes: ${JSON.stringify(text)} (${got.ok ? "" : String(got.error)})`).toBe(true);
  if (got.ok) expect(isDeepStrictEqual(got.value, want.value), `differs on ${JSON.stringify(text)}`).toBe(true);
}

/** Characters that matter to JSON, and some that do not. */
const jsonChar = fc.constantFrom(..."{}[]\",:\\/ \t\n\r0123456789-+.eEtrufalsn_xbu\u0000\u001f\u007f\u00e9\u2028\ud83d\ude00\ud800");
const edit = fc.record({ at: fc.nat(), cut: fc.nat({ max: 3 }), put: fc.array(jsonChar, { maxLength: 3 }) });

const logLine = fc.record({
  id: fc.oneof(fc.string({ maxLength: 12 }), fc.integer()),
  ts: fc.oneof(fc.integer({ min: 0, max: 2e12 }), fc.double(), fc.string({ maxLength: 14 })),
  sender: fc.string({ maxLength: 12 }),
  content: fc.string({ unit: "binary", maxLength: 80 }),
  replyTo: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  metadata: fc.jsonValue({ maxDepth: 3 }),
});

describe("parseJsonText", () => {
  it("gives what JSON.parse gives for any JSON value, compact or spread out", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), logLine), fc.constantFrom(undefined, 1, "\t", " \r\n "), (value, indent) => {
        expectSameAsJsonParse(JSON.stringify(value, null, indent as string | number | undefined));
      }),
      { numRuns: 1500 },
    );
  });

  it("accepts and refuses exactly what JSON.parse does, for texts cut, stretched or garbled", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 3 }), logLine), fc.array(edit, { minLength: 1, maxLength: 4 }), (value, edits) => {
        let text = JSON.stringify(value) ?? "null";
        for (const e of edits) {
          const at = e.at % (text.length + 1);
          text = text.slice(0, at) + e.put.join("") + text.slice(at + e.cut);
        }
        expectSameAsJsonParse(text);
      }),
      { numRuns: 4000 },
    );
  });

  it("takes any string of JSON's characters as JSON.parse does", () => {
    fc.assert(
      fc.property(fc.array(jsonChar, { maxLength: 24 }), (chars) => expectSameAsJsonParse(chars.join(""))),
      { numRuns: 3000 },
    );
  });

  it("numbers, escapes, keys and nesting at their edges", () => {
    for (const text of [
      "0", "-0", "1", "-1", "0.5", "1e400", "-1e400", "1E+2", "2e-3", "123456789012345", "1234567890123456", "12345678901234567890",
      "9007199254740993", "-9007199254740993", "0.1", "1.7976931348623157e308", "5e-324", "01", "1.", ".5", "-", "+1", "1e", "0x10",
      '"\\u00e9\\ud83d\\ude00\\ud800"', '"\\uD83D"', '"\\u12"', '"\\x41"', '"a\\/b"', '"\\b\\f\\n\\r\\t\\"\\\\"', '"tab\there"', '"\u2028"',
      '{"__proto__":{"x":1}}', '{"__proto__":1,"__proto__":2}', '{"a":1,"a":2}', '{"2":0,"b":1,"1":2}', '{"constructor":1}',
      '{"a":1,}', "[1,]", "[,1]", '{"a" 1}', '{a:1}', "", " ", "nul", "truex", "[1] [2]", '"\\', '"', "[", "{", '{"a":',
      "\u00a0[]", "[]\u00a0", "\ufeff{}",
    ]) {
      expectSameAsJsonParse(text);
    }
  });

  it("parses nesting far deeper than the call stack goes, as JSON.parse does", () => {
    const depth = 200_000;
    const text = `${"[".repeat(depth)}"deep"${"]".repeat(depth)}`;
    let v = parseJsonText(text);
    for (let d = 0; d < depth; d++) v = (v as unknown[])[0];
    expect(v).toBe("deep");
    expect(() => parseJsonText(`${"[".repeat(depth)}${"]".repeat(depth - 1)}`)).toThrow(SyntaxError);
    expect(() => parseJsonText(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`)).not.toThrow();
  });

  it("keeps `__proto__` as an own key, as JSON.parse does (no prototype set from a line)", () => {
    const o = parseJsonText('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(Object.keys(o)).toEqual(["__proto__"]);
    expect((o as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("a log line's short strings are not interned, where JSON.parse's are (V8's own check, in a child with --allow-natives-syntax)", () => {
    const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
    const code = `
      import { parseJsonText } from ${JSON.stringify(here("../../src/replay/json-text.ts"))};
      import { parseLine } from ${JSON.stringify(here("../../src/replay/log.ts"))};
      const interned = new Function("s", "return %IsInternalizedString(s)");
      const text = '{"id":"g1","ts":1767600000000,"sender":"ann","content":"ok","replyTo":["g0"],"metadata":{"reply_to":"g0x"}}';
      const strings = (o) => [o.id, o.sender, o.content, o.replyTo[0], o.metadata.reply_to];
      console.log(JSON.stringify({
        jsonParse: strings(JSON.parse(text)).map(interned),
        parseJsonText: strings(parseJsonText(text)).map(interned),
        parseLine: strings(parseLine(text, 1)).map(interned),
      }));`;
    const out = JSON.parse(execFileSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", code], { encoding: "utf8" })) as Record<string, boolean[]>;
    // The premise: V8's JSON.parse interns every one of these.
    expect(out.jsonParse).toEqual([true, true, true, true, true]);
    expect(out.parseJsonText).toEqual([false, false, false, false, false]);
    expect(out.parseLine).toEqual([false, false, false, false, false]);
  });
});
