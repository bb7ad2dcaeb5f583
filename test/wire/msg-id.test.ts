// The one reading of a wire msg_id: a non-negative safe integer, or a string of 1–15 digits
// (leading zeros allowed), the same for a pushed message, a pull page and a send receipt.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseMsgId, msgIdsIn, numericMsgId } from "../../src/wire/msg-id.ts";

describe("parseMsgId", () => {
  it("reads numbers and digit strings, nothing else", () => {
    expect(parseMsgId(0)).toBe(0);
    expect(parseMsgId(42)).toBe(42);
    expect(parseMsgId("42")).toBe(42);
    expect(parseMsgId("007")).toBe(7);
    expect(parseMsgId("999999999999999")).toBe(999_999_999_999_999);
    for (const v of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, "", "1234567890123456", "4e2", " 1", "-1", "1\n", null, undefined, {}, [1], true]) {
      expect(parseMsgId(v), String(v)).toBeUndefined();
    }
  });

  it("agrees with the digit-string pattern on any string", () => {
    const digits = fc.stringMatching(/^\d{0,17}$/);
    fc.assert(
      fc.property(fc.oneof(digits, fc.string()), (s) => {
        expect(parseMsgId(s)).toBe(/^\d{1,15}$/.test(s) ? Number(s) : undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it("gives every wire id a canonical spelling that numericMsgId reads back", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.stringMatching(/^\d{1,15}$/)), (v) => {
        const id = parseMsgId(v)!;
        expect(numericMsgId(String(id))).toBe(id);
      }),
      { numRuns: 1000 },
    );
  });

  it("msgIdsIn scans the same digit limit from a frame's text", () => {
    expect(msgIdsIn('{"msg_id":7,"x":{"msg_id":"008"}}')).toEqual([7, 8]);
    expect(msgIdsIn('{"msg_id":1234567890123456}')).toEqual([123456789012345]);
  });
});
