import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareMessages, compareMsgIds, numericMsgId } from "../../src/wire/msg-id.ts";
import type { GroupMessage } from "../../src/types.ts";

describe("msg ids", () => {
  it("numericMsgId accepts canonical decimal integers only", () => {
    expect(numericMsgId("0")).toBe(0);
    expect(numericMsgId("42")).toBe(42);
    expect(numericMsgId("999999999999999")).toBe(999999999999999);
    // Every msg_id the transport accepts (safe integers) is numeric, 16 digits included.
    expect(numericMsgId("1234567890123456")).toBe(1234567890123456);
    expect(numericMsgId("9007199254740991")).toBe(Number.MAX_SAFE_INTEGER);
    for (const id of ["", "042", "4e2", "-1", "1.5", " 1", "abc", "9007199254740992", "12345678901234567"]) expect(numericMsgId(id)).toBeUndefined();
    for (const id of ["9007199254740993", "9999999999999999"]) expect(numericMsgId(id)).toBeUndefined();
  });

  it("numericMsgId agrees with Number() on every canonical id up to 16 digits that is a safe integer", () => {
    const canonical = fc.oneof(fc.bigInt({ min: 0n, max: 9_999_999_999_999_999n }), fc.integer({ min: 0, max: 1_000_000 }).map(BigInt)).map(String);
    fc.assert(
      fc.property(canonical, (id) => {
        const n = Number(id);
        expect(numericMsgId(id)).toBe(Number.isSafeInteger(n) && BigInt(n) === BigInt(id) ? n : undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it("compares decimal ids as numbers, others as strings", () => {
    expect(compareMsgIds("9", "10")).toBeLessThan(0);
    expect(compareMsgIds("10", "9")).toBeGreaterThan(0);
    expect(compareMsgIds("12345678901234567890", "9234567890123456789")).toBeGreaterThan(0);
    expect(compareMsgIds("007", "8")).toBeLessThan(0);
    expect(compareMsgIds("b", "a")).toBeGreaterThan(0);
    expect(compareMsgIds("m10", "m9")).toBeLessThan(0); // string order, as documented
    expect(compareMsgIds("5", "5")).toBe(0);
  });

  it("orders messages by timestamp, then id", () => {
    const m = (msgId: string, timestamp: number): GroupMessage => ({
      msgId,
      timestamp,
      groupId: "g",
      sender: "s",
      content: "",
      contentType: "text",
      metadata: null,
    });
    const sorted = [m("10", 2), m("9", 2), m("1", 3), m("100", 1)].sort(compareMessages).map((x) => x.msgId);
    expect(sorted).toEqual(["100", "9", "10", "1"]);
  });
});
