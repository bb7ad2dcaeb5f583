// The network's optional message signals: metadata mentions, no-reply-expected flags, reactions.
// Pure parsing first, then timelines through the real group client (fake timers).
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { buildReplyMetadata, passiveKindOf, readMessageSignals } from "../../src/group/signals.ts";
import { at, msg, setup, T0 } from "./harness.ts";

const ME = "alice.agentcp.io";

describe("readMessageSignals", () => {
  it("no metadata, or none of ours → nothing (most messages)", () => {
    expect(readMessageSignals(null, ME)).toEqual({ mentionsUs: false, noReplyExpected: false });
    expect(readMessageSignals({ reply_to: "3" }, ME)).toEqual({ mentionsUs: false, noReplyExpected: false });
  });

  it("mentions in group_meta or bare, as aids or objects, case-insensitively", () => {
    expect(readMessageSignals({ group_meta: { mentions: ["bob.agentcp.io", "Alice.AgentCP.io"] } }, ME).mentionsUs).toBe(true);
    expect(readMessageSignals({ mentions: [{ aid: "alice.agentcp.io" }] }, ME).mentionsUs).toBe(true);
    expect(readMessageSignals({ group_meta: { mentions: [{ agent_id: "alice.agentcp.io" }] } }, ME).mentionsUs).toBe(true);
    expect(readMessageSignals({ group_meta: { mentions: ["bob.agentcp.io"] } }, ME).mentionsUs).toBe(false);
    expect(readMessageSignals({ group_meta: { mentions: "alice.agentcp.io" } }, ME).mentionsUs).toBe(false);
  });

  it("flags.no_reply_expected only when exactly true", () => {
    expect(readMessageSignals({ group_meta: { flags: { no_reply_expected: true } } }, ME).noReplyExpected).toBe(true);
    expect(readMessageSignals({ group_meta: { flags: { no_reply_expected: "yes" } } }, ME).noReplyExpected).toBe(false);
  });

  it("a reaction carries its reaction (else the content) and the message it reacts to", () => {
    expect(readMessageSignals({ group_meta: { msg_type: "reaction", reply_to: 42, reaction: "👍" } }, ME, "ignored")).toEqual({
      mentionsUs: false,
      noReplyExpected: false,
      replyTo: "42",
      reaction: { reaction: "👍", replyTo: "42" },
    });
    expect(readMessageSignals({ group_meta: { msg_type: "reaction" } }, ME, " 🎉 ").reaction).toEqual({ reaction: "🎉" });
  });

  it("property: any JSON metadata (as the wire delivers it) is read without throwing", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (gm, mentions) => {
        const s = readMessageSignals({ group_meta: gm as unknown as Record<string, unknown>, mentions } as Record<string, unknown>, ME, "x");
        expect(typeof s.mentionsUs).toBe("boolean");
        expect(typeof s.noReplyExpected).toBe("boolean");
      }),
    );
  });

  it("passive kind: a reaction first, then no-reply-expected", () => {
    expect(passiveKindOf(readMessageSignals({ group_meta: { msg_type: "reaction", flags: { no_reply_expected: true } } }, ME))).toBe("reaction");
    expect(passiveKindOf(readMessageSignals({ group_meta: { flags: { no_reply_expected: true } } }, ME))).toBe("no-reply-expected");
    expect(passiveKindOf(readMessageSignals({ group_meta: { mentions: [ME] } }, ME))).toBeUndefined();
  });
});

describe("buildReplyMetadata", () => {
  it("off by default: a reaction reply is a plain message with reply_to", () => {
    expect(buildReplyMetadata({ replyType: "reaction", text: "👍", replyTo: "7", reactions: false })).toEqual({ reply_to: "7" });
    expect(buildReplyMetadata({ replyType: "short", text: "ok", replyTo: undefined, reactions: true })).toBeUndefined();
  });

  it("with reactions supported, a reaction answering a message is sent as a reaction to it", () => {
    expect(buildReplyMetadata({ replyType: "reaction", text: "👍", replyTo: "7", reactions: true })).toEqual({
      reply_to: "7",
      group_meta: { msg_type: "reaction", reply_to: "7", reaction: "👍" },
    });
    expect(buildReplyMetadata({ replyType: "short", text: "ok", replyTo: "7", reactions: true })).toEqual({ reply_to: "7" });
  });
});

describe("signals through the group client", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("T+0 a message whose metadata mentions us (no name in the text) → a mention dispatch at T+0", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "can you check the logs?", "bob.agentcp.io", { group_meta: { mentions: [ME] } })]);
    expect(t.dispatchTimes()).toEqual([0]);
    expect(t.calls[0]!.batch.mentionInfo).toMatchObject({ mentioned: true, triggerType: "mention" });
  });

  it("T+0 a no-reply-expected message alone → no dispatch ever; dropped as not-for-reply after the buffer gate (T+3s)", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "FYI: deploy finished", "bob.agentcp.io", { group_meta: { flags: { no_reply_expected: true } } })]);
    await at(2999);
    expect(t.drops()).toEqual([]);
    await at(3000);
    await at(120_000);
    expect(t.calls).toEqual([]);
    expect(t.drops()).toEqual([{ id: "1", reason: "not-for-reply" }]);
    expect(t.client.stats()).toMatchObject({ received: 1, accepted: 1, dispatches: 0, held: 0, dropped: { "not-for-reply": 1 } });
    await t.client.whenIdle();
  });

  it("naming us in a no-reply-expected message is not a mention", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "Alice: FYI, deployed", "bob.agentcp.io", { group_meta: { flags: { no_reply_expected: true }, mentions: [ME] } })]);
    expect(t.calls).toEqual([]);
    expect(t.client.stats().mentions).toBe(0);
  });

  it("T+0 no-reply-expected, T+1s plain talk → one normal dispatch at T+4s carrying both", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "FYI", "bob.agentcp.io", { group_meta: { flags: { no_reply_expected: true } } })]);
    await at(1000);
    t.client.feedBufferGate([msg(2, 1000, "what do people think of the new build?", "carol.agentcp.io")]);
    await at(4000);
    expect(t.dispatchTimes()).toEqual([4000]);
    expect(t.calls[0]!.ids).toEqual(["1", "2"]);
    expect(t.calls[0]!.batch.messages.map((m) => m.passive)).toEqual(["no-reply-expected", undefined]);
  });

  it("a reaction counts for vitality, is never a mention (even with our name) and starts no dispatch", async () => {
    const t = setup();
    const reaction = { group_meta: { msg_type: "reaction", reply_to: "100", reaction: "👍", mentions: [ME] } };
    t.client.feedBufferGate([msg(1, 0, "Alice 👍", "bob.agentcp.io", reaction), msg(2, 0, "👏", "carol.agentcp.io", { group_meta: { msg_type: "reaction" } })]);
    expect(t.client.computeVitality()).toMatchObject({ messagesIn5m: 2, uniqueSpeakersIn5m: 2 });
    expect(t.client.stats().mentions).toBe(0);
    await at(60_000);
    expect(t.calls).toEqual([]);
    expect(t.drops().map((d) => d.reason)).toEqual(["not-for-reply", "not-for-reply"]);
    // The reactor is not engaged by reacting: its next plain message is ordinary talk.
    t.client.feedBufferGate([msg(3, 60_000, "ok moving on", "bob.agentcp.io")]);
    await at(63_000);
    expect(t.calls.map((c) => [c.at, c.batch.mentionInfo.triggerType, c.batch.messages[0]!.engaged])).toEqual([[63_000, "normal", false]]);
  });

  it("a group_meta.reply_to naming one of our messages is a mention", async () => {
    const t = setup();
    t.client.recordOwnMessage({ msgId: "50", timestamp: T0, content: "our earlier reply" });
    t.client.feedBufferGate([msg(51, 0, "agreed", "bob.agentcp.io", { group_meta: { reply_to: "50" } })]);
    expect(t.calls[0]!.batch.mentionInfo.triggerType).toBe("mention");
  });
});

describe("passive messages and a waiting mention (found by the property test)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("T+0 plain (8 s dispatch), T+0.6s mention waits, T+2.4s three quiet push it out (capacity 3), T+8s the quiet ones are dropped, T+8s plain → dispatched at T+8s", async () => {
    const t = setup({
      settings: { bufferGateMs: 0, bufferGateMaxWaitMs: 0, cooldownMs: 0, maxPendingMessages: 3 },
      script: (_b, i) => ({ latencyMs: i === 0 ? 8000 : 0 }),
    });
    const quiet = { group_meta: { flags: { no_reply_expected: true } } };
    t.client.feedBufferGate([msg(1, 0, "plain one")]);
    await at(642);
    t.client.feedBufferGate([msg(2, 642, "Alice, a question?")]);
    await at(2402);
    t.client.feedBufferGate([msg(3, 2402, "fyi", "bob.agentcp.io", quiet), msg(4, 2402, "fyi", "bob.agentcp.io", quiet), msg(5, 2402, "fyi", "bob.agentcp.io", quiet)]);
    expect(t.drops()).toEqual([{ id: "2", reason: "over-capacity" }]);
    await at(8000);
    t.client.feedBufferGate([msg(6, 8000, "plain six")]);
    await at(8001);
    expect(t.calls.map((c) => [c.at, c.ids])).toEqual([
      [0, ["1"]],
      [8000, ["6"]],
    ]);
    expect(t.drops().map((d) => d.reason)).toEqual(["over-capacity", "not-for-reply", "not-for-reply", "not-for-reply"]);
    expect(t.client.stats().held).toBe(0);
  });
});
