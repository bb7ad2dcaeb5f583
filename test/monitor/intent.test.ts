import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasNoReplyToken, parseDecision, parseIntent } from "../../src/monitor/intent.ts";

describe("parseIntent", () => {
  it.each([
    ["", { reply: false, reason: "empty" }],
    ["   \n ", { reply: false, reason: "empty" }],
    ["NO_REPLY", { reply: false, reason: "no-reply-token" }],
    [" no_reply. ", { reply: false, reason: "no-reply-token" }],
    ["`NO_REPLY`", { reply: false, reason: "no-reply-token" }],
    ["[NO_REPLY]", { reply: false, reason: "no-reply-token" }],
    ["Sounds good to me. NO_REPLY", { reply: true, text: "Sounds good to me." }],
    // Opening with the token is the decision; what follows only explains it.
    ["NO_REPLY\nActually, one thing: use tokio.", { reply: false, reason: "no-reply-token" }],
    ["好的 NO_REPLY", { reply: true, text: "好的" }],
    ["Plain answer.", { reply: true, text: "Plain answer." }],
  ])("%j → %j", (text, expected) => {
    expect(parseIntent(text)).toEqual(expected);
  });
});

describe("parseIntent: what models actually write", () => {
  const silent = { reply: false, reason: "no-reply-token" };
  it.each([
    ["NO_REPLY.", silent],
    ['"NO_REPLY"', silent],
    ["“NO_REPLY”", silent],
    ["「NO_REPLY」。", silent],
    ["no_reply", silent],
    ["No_Reply!", silent],
    ["**NO_REPLY**", silent],
    ["_NO_REPLY_", silent],
    ["__NO_REPLY__", silent],
    ["NO\\_REPLY", silent],
    ["ＮＯ＿ＲＥＰＬＹ", silent],
    ["```\nNO_REPLY\n```", silent],
    ["NO REPLY", silent],
    ["NOREPLY", silent],
    ["NO_REPLY (nothing to add)", silent],
    ["NO_REPLY\n\nReason: the question was already answered.", silent],
    ["NO_REPLYs", silent],
    ["\u200B", { reply: false, reason: "empty" }],
    [" \u3000\n\t", { reply: false, reason: "empty" }],
    ["Good idea.\n\nNO_REPLY", { reply: true, text: "Good idea." }],
    ["Great point. NO_REPLY.", { reply: true, text: "Great point." }],
    ["好的。「NO_REPLY」", { reply: true, text: "好的。" }],
    ["Nothing new from me. **NO_REPLY**", { reply: true, text: "Nothing new from me." }],
    ["There was no reply from the server.", { reply: true, text: "There was no reply from the server." }],
    ["NO_REPLY_THANKS is a word", { reply: true, text: "is a word" }],
  ])("%j → %j", (text, expected) => {
    expect(parseIntent(text)).toEqual(expected);
  });

  it("the text it returns never contains the token, however it is spelled or glued", () => {
    const piece = fc.oneof(
      fc.constantFrom("NO_REPLY", "no_reply", "NO\\_REPLY", "ＮＯ＿ＲＥＰＬＹ", "NO__REPLY", "NO_", "_REPLY", "REPLY", "NO", "_", "*", "`", " ", "\n", ".", "「", "」", "x"),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const intent = parseIntent(pieces.join(""));
        if (intent.reply) {
          expect(hasNoReplyToken(intent.text)).toBe(false);
          expect(intent.text.normalize("NFKC")).not.toMatch(/no\\?_+reply/i);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("parseDecision (two-phase)", () => {
  it("reads the JSON, also inside a fence or prose", () => {
    expect(parseDecision('{"want_to_reply": true, "reply_type": "short", "delay_hint": "fast"}')).toEqual({
      ok: true,
      decision: { wantToReply: true, replyType: "short", delayHint: "fast" },
    });
    expect(parseDecision('Sure:\n```json\n{"want_to_reply": false}\n```')).toEqual({ ok: true, decision: { wantToReply: false } });
  });

  it("ignores unknown reply types and hints", () => {
    expect(parseDecision('{"want_to_reply": true, "reply_type": "essay", "delay_hint": "never"}')).toEqual({
      ok: true,
      decision: { wantToReply: true },
    });
  });

  it.each(["", "yes", "{not json}", '{"want_to_reply": "yes"}', "[true]", '{"reply_type":"short"}'])("%j is unparseable", (text) => {
    expect(parseDecision(text)).toEqual({ ok: false, reason: "unparseable" });
  });
});
