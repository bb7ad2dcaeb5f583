import { describe, expect, it } from "vitest";
import { parseDecision, parseIntent } from "../../src/monitor/intent.ts";

describe("parseIntent", () => {
  it.each([
    ["", { reply: false, reason: "empty" }],
    ["   \n ", { reply: false, reason: "empty" }],
    ["NO_REPLY", { reply: false, reason: "no-reply-token" }],
    [" no_reply. ", { reply: false, reason: "no-reply-token" }],
    ["`NO_REPLY`", { reply: false, reason: "no-reply-token" }],
    ["[NO_REPLY]", { reply: false, reason: "no-reply-token" }],
    ["Sounds good to me. NO_REPLY", { reply: true, text: "Sounds good to me." }],
    ["NO_REPLY\nActually, one thing: use tokio.", { reply: true, text: "Actually, one thing: use tokio." }],
    ["好的 NO_REPLY", { reply: true, text: "好的" }],
    ["Plain answer.", { reply: true, text: "Plain answer." }],
  ])("%j → %j", (text, expected) => {
    expect(parseIntent(text)).toEqual(expected);
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
