// The SDK's direct message format: what we write the SDK reads back as the same text, and what the
// SDK (or an older client, or a person's plain tool) writes we read as its own readers do.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeDirectPayload, encodeDirectText } from "../../src/wire/direct-message.ts";

describe("the SDK's direct message format", () => {
  it("encode → decode gives back any text, whatever it holds (%, quotes, JSON, emoji, lone surrogates)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary-ascii" }), fc.string({ unit: "grapheme" }), fc.nat(), (a, b, now) => {
        const text = a + b;
        // A lone surrogate cannot be URL-encoded: the real SDK throws there too; our texts are cleaned before.
        fc.pre(!/[\ud800-\udfff]/.test(text.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")));
        expect(decodeDirectPayload(encodeDirectText(text, now)).text).toBe(text);
      }),
    );
  });

  it("writes exactly the SDK's block list, URL-encoded", () => {
    const payload = encodeDirectText("Hi 100%", 1_700_000_000_123);
    expect(JSON.parse(decodeURIComponent(payload))).toEqual([{ type: "content", status: "success", timestamp: "1700000000123", content: "Hi 100%" }]);
    expect(payload).not.toMatch(/[{}"\s]/);
  });

  it("reads what others write as the SDK's own reader does", () => {
    const blocks = (...c: string[]) => JSON.stringify(c.map((content) => ({ type: "content", status: "success", timestamp: "1", content })));
    expect(decodeDirectPayload(encodeURIComponent(blocks("a", "b")))).toEqual({ text: "ab", format: "blocks" });
    // Not URL-encoded (no % in it): parsed as it is.
    expect(decodeDirectPayload(blocks("plain json"))).toEqual({ text: "plain json", format: "blocks" });
    expect(decodeDirectPayload('{"content":"one object"}')).toEqual({ text: "one object", format: "object" });
    // A block without content adds nothing; plain text, a lone % and JSON that is not a message stay as written.
    expect(decodeDirectPayload(JSON.stringify([{ type: "image", url: "x" }, { type: "content", content: "y" }]))).toEqual({ text: "y", format: "blocks" });
    expect(decodeDirectPayload("hello there")).toEqual({ text: "hello there", format: "plain" });
    expect(decodeDirectPayload("50% off")).toEqual({ text: "50% off", format: "plain" });
    expect(decodeDirectPayload("[]")).toEqual({ text: "[]", format: "plain" });
    expect(decodeDirectPayload("42")).toEqual({ text: "42", format: "plain" });
  });
});
