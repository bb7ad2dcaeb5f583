// Fake-timer timelines, written out literally: "T+0 batch a (3 msgs) … T+2.5s mention → one
// dispatch with 10 messages". Server and local clocks agree here (both start at T0).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { at, msg, setup, T0 } from "./harness.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("seed §4.3: a mention merges every waiting batch and dispatches at once", () => {
  it("T+0 a×3, T+1 b×2, T+2 c×4, T+2.5 d×1 naming the agent → one dispatch at T+2.5 of all 10, in order", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0), msg(2, 0, "hi", "carol.agentcp.io"), msg(3, 0)]);
    await at(1000);
    t.client.feedBufferGate([msg(4, 1000), msg(5, 1000)]);
    await at(2000);
    // Batch c arrives out of order; the dispatch sorts by timestamp, then msg id.
    t.client.feedBufferGate([msg(8, 2000), msg(6, 2000), msg(9, 2000), msg(7, 2000)]);
    await at(2499);
    expect(t.calls).toHaveLength(0);
    await at(2500);
    t.client.feedBufferGate([msg(10, 2500, "Alice 你觉得呢？")]);

    expect(t.dispatchTimes()).toEqual([2500]);
    expect(t.calls[0]!.ids).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]);
    expect(t.calls[0]!.batch.mentionInfo).toEqual({ mentioned: true, mentionCount: 1, batchesMerged: 4, triggerType: "mention" });
    expect(t.calls[0]!.batch.messages.map((m) => m.isMention)).toEqual([false, false, false, false, false, false, false, false, false, true]);
    expect(t.calls[0]!.batch.attempt).toBe(0);
    expect(t.calls[0]!.batch.dispatchId).toBe(1);

    // The buffer gate timer was cancelled: nothing else is ever dispatched.
    await at(60_000);
    expect(t.dispatchTimes()).toEqual([2500]);
    expect(t.client.stats()).toMatchObject({ received: 10, accepted: 10, dispatched: 10, dispatches: 1, mentions: 1 });
  });
});

describe("buffer gate", () => {
  it("T+0 msg, T+1 msg → one normal dispatch at T+4 (3 s after the last)", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0)]);
    await at(1000);
    t.client.feedBufferGate([msg(2, 1000)]);
    await at(3999);
    expect(t.calls).toHaveLength(0);
    await at(4000);
    expect(t.dispatchTimes()).toEqual([4000]);
    expect(t.calls[0]!.ids).toEqual(["1", "2"]);
    expect(t.calls[0]!.batch.mentionInfo).toEqual({ mentioned: false, mentionCount: 0, batchesMerged: 2, triggerType: "normal" });
  });

  it("a group talking non-stop without mentions: first dispatch at T+15 (the max wait), not never", async () => {
    const t = setup();
    const speakers = ["bob.agentcp.io", "carol.agentcp.io", "dave.agentcp.io"];
    // One message a second, T+0 … T+20: the 3 s debounce alone would never fire.
    for (let i = 0; i <= 20; i++) {
      await at(i * 1000);
      t.client.feedBufferGate([msg(i + 1, i * 1000, `talk ${i}`, speakers[i % 3])]);
      if (i === 14) expect(t.calls).toHaveLength(0);
    }
    expect(t.dispatchTimes()).toEqual([15_000]);
    expect(t.calls[0]!.ids).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"]);
    expect(t.calls[0]!.batch.mentionInfo).toEqual({ mentioned: false, mentionCount: 0, batchesMerged: 15, triggerType: "normal" });
    // The rest (T+15 … T+20) waits out a HEATED cooldown: dispatch 1 ended at T+16, ×2 → T+76.
    await at(75_999);
    expect(t.calls).toHaveLength(1);
    await at(76_000);
    expect(t.dispatchTimes()).toEqual([15_000, 76_000]);
    expect(t.calls[1]!.ids).toEqual(["16", "17", "18", "19", "20", "21"]);
    expect(t.calls[1]!.batch.vitality.state).toBe("HEATED");
  });

  it("keeps one timer for a burst instead of clearing and re-arming per message", async () => {
    const t = setup();
    const spy = vi.spyOn(globalThis, "setTimeout");
    for (let i = 0; i < 100; i++) t.client.feedBufferGate([msg(i + 1, 0)]);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(1);
    spy.mockRestore();
    await at(3000);
    expect(t.dispatchTimes()).toEqual([3000]);
    expect(t.calls[0]!.ids).toHaveLength(100);
  });
});

describe("mention during a running dispatch", () => {
  it("waits for the lock, then goes the moment the running dispatch ends, bypassing cooldown", async () => {
    const t = setup({ script: (_b, i) => ({ latencyMs: i === 0 ? 5000 : 1000 }) });
    t.client.feedBufferGate([msg(1, 0, "hi Alice")]);
    expect(t.dispatchTimes()).toEqual([0]);
    await at(1000);
    t.client.feedBufferGate([msg(2, 1000, "unrelated")]);
    await at(2000);
    t.client.feedBufferGate([msg(3, 2000, "alice, and this?")]);
    await at(4999);
    expect(t.calls).toHaveLength(1);
    await at(5000);
    expect(t.calls[0]!.pendingMentionAtEnd).toBe(true);
    expect(t.dispatchTimes()).toEqual([0, 5000]);
    expect(t.calls[1]!.ids).toEqual(["2", "3"]);
    expect(t.calls[1]!.batch.mentionInfo).toEqual({ mentioned: true, mentionCount: 1, batchesMerged: 2, triggerType: "mention" });
    await at(60_000);
    expect(t.calls[1]!.pendingMentionAtEnd).toBe(false);
    expect(t.dispatchTimes()).toEqual([0, 5000]);
    expect(t.maxInFlight()).toBe(1);
  });

  it("mentionMinIntervalMs spaces mention dispatches", async () => {
    const t = setup({ settings: { mentionMinIntervalMs: 10_000 } });
    t.client.feedBufferGate([msg(1, 0, "Alice?")]);
    await at(2000);
    t.client.feedBufferGate([msg(2, 2000, "Alice??")]);
    await at(9999);
    expect(t.dispatchTimes()).toEqual([0]);
    await at(10_000);
    expect(t.dispatchTimes()).toEqual([0, 10_000]);
    expect(t.calls[1]!.batch.mentionInfo.triggerType).toBe("mention");
  });
});

describe("cooldown", () => {
  it("30 s from the end of the last dispatch: dispatches at T+3, T+34, T+65", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0)]);
    await at(10_000);
    t.client.feedBufferGate([msg(2, 10_000)]);
    await at(33_999);
    expect(t.dispatchTimes()).toEqual([3000]);
    await at(34_000);
    expect(t.dispatchTimes()).toEqual([3000, 34_000]);
    await at(40_000);
    t.client.feedBufferGate([msg(3, 40_000)]);
    await at(64_999);
    expect(t.calls).toHaveLength(2);
    await at(65_000);
    expect(t.dispatchTimes()).toEqual([3000, 34_000, 65_000]);
    expect(t.calls.map((c) => c.batch.vitality.state)).toEqual(["COOLING", "COOLING", "COOLING"]);
  });

  it("a mention cancels the cooldown timer and goes at once", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0)]);
    await at(10_000);
    t.client.feedBufferGate([msg(2, 10_000)]);
    await at(20_000);
    t.client.feedBufferGate([msg(3, 20_000, "what does Alice think?")]);
    expect(t.dispatchTimes()).toEqual([3000, 20_000]);
    expect(t.calls[1]!.ids).toEqual(["2", "3"]);
    await at(60_000);
    expect(t.dispatchTimes()).toEqual([3000, 20_000]);
  });

  const sixteen = () =>
    Array.from({ length: 16 }, (_, i) => msg(i + 1, 0, `busy ${i}`, ["bob.agentcp.io", "carol.agentcp.io", "dave.agentcp.io", "erin.agentcp.io"][i % 4]));

  it("HEATED doubles the cooldown for unaddressed talk: T+3, then T+64 (not T+34)", async () => {
    const t = setup();
    t.client.feedBufferGate(sixteen());
    await at(10_000);
    t.client.feedBufferGate([msg(17, 10_000)]);
    await at(63_999);
    expect(t.dispatchTimes()).toEqual([3000]);
    await at(64_000);
    expect(t.dispatchTimes()).toEqual([3000, 64_000]);
    expect(t.calls.map((c) => c.batch.vitality.state)).toEqual(["HEATED", "HEATED"]);
  });

  it("ACTIVE is not scaled: 6 messages → T+3, T+34", async () => {
    const t = setup();
    t.client.feedBufferGate(sixteen().slice(0, 6));
    await at(10_000);
    t.client.feedBufferGate([msg(17, 10_000)]);
    await at(34_000);
    expect(t.dispatchTimes()).toEqual([3000, 34_000]);
    expect(t.calls[0]!.batch.vitality.state).toBe("ACTIVE");
  });

  it("cooldownScale is configurable: HEATED ×3 → T+3, T+94", async () => {
    const t = setup({ settings: { cooldownScale: { DORMANT: 1, COOLING: 1, ACTIVE: 1, HEATED: 3 } } });
    t.client.feedBufferGate(sixteen());
    await at(10_000);
    t.client.feedBufferGate([msg(17, 10_000)]);
    await at(93_999);
    expect(t.dispatchTimes()).toEqual([3000]);
    await at(94_000);
    expect(t.dispatchTimes()).toEqual([3000, 94_000]);
  });

  it("mentions are never scaled: a HEATED group still answers a mention at once", async () => {
    const t = setup();
    t.client.feedBufferGate(sixteen());
    await at(10_000);
    t.client.feedBufferGate([msg(17, 10_000, "Alice, you there?")]);
    expect(t.dispatchTimes()).toEqual([3000, 10_000]);
    expect(t.calls[1]!.batch.vitality.state).toBe("HEATED");
  });
});

describe("engaged speakers", () => {
  it("after we answer bob, his follow-up dispatches after 5 s of quiet, not after the cooldown", async () => {
    const t = setup({
      script: (_b, i) =>
        i === 0 ? { latencyMs: 1000, outcome: { kind: "sent", replyType: "short", text: "Sure bob, here it is", msgId: "100", sentAt: T0 + 1000 } } : { latencyMs: 1000 },
    });
    t.client.feedBufferGate([msg(1, 0, "Alice, can you help?")]);
    await at(3000);
    t.client.feedBufferGate([msg(2, 3000, "thanks! and the second part?")]);
    await at(4000);
    t.client.feedBufferGate([msg(3, 4000, "unrelated chatter", "carol.agentcp.io")]);
    await at(7999);
    expect(t.dispatchTimes()).toEqual([0]);
    await at(8000);
    expect(t.dispatchTimes()).toEqual([0, 8000]);
    expect(t.calls[1]!.ids).toEqual(["2", "3"]);
    expect(t.calls[1]!.batch.mentionInfo).toEqual({ mentioned: false, mentionCount: 0, batchesMerged: 2, triggerType: "engaged" });
    expect(t.calls[1]!.batch.messages.map((m) => [m.isMention, m.engaged])).toEqual([
      [false, true],
      [false, false],
    ]);
    expect(t.calls[1]!.lastSelfSpeakAt).toBe(T0 + 1000);
    expect(t.client.lastSelfSpeakAt).toBe(T0 + 1000);
    await at(60_000);
    expect(t.dispatchTimes()).toEqual([0, 8000]);
  });

  it("naming someone in our reply engages them for engagedWindowMs (60 s here) after their last line to us", async () => {
    const t = setup({
      settings: { engagedWindowMs: 60_000 },
      script: (_b, i) => (i === 0 ? { latencyMs: 1000, outcome: { kind: "sent", replyType: "short", text: "dave, I agree", sentAt: T0 + 4000 } } : { latencyMs: 1000 }),
    });
    t.client.feedBufferGate([msg(1, 0, "I think X", "dave.agentcp.io")]);
    await at(10_000);
    expect(t.client.engagedSpeakers()).toEqual(["dave.agentcp.io"]);
    // Their follow-up at T+10s keeps the conversation open until T+70s.
    t.client.feedBufferGate([msg(2, 10_000, "why do you agree?", "dave.agentcp.io")]);
    await at(71_000);
    t.client.feedBufferGate([msg(3, 71_000, "anyone?", "dave.agentcp.io")]);
    await at(80_000);
    expect(t.dispatchTimes()).toEqual([3000, 15_000, 74_000]);
    expect(t.calls.map((c) => c.batch.mentionInfo.triggerType)).toEqual(["normal", "engaged", "normal"]);
    expect(t.events.flatMap((e) => (e.type === "accepted" ? [[e.message.msgId, e.message.engaged]] : []))).toEqual([
      ["1", false],
      ["2", true],
      ["3", false],
    ]);
  });

  it("replying to someone's message engages them; a reply to one of ours is an implicit mention", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "question for the room", "erin.agentcp.io")]);
    await at(3000);
    expect(t.dispatchTimes()).toEqual([3000]);
    await at(5000);
    t.client.recordOwnMessage({ msgId: "m1", timestamp: T0 + 5000, content: "good question", replyTo: "1" });
    expect(t.client.engagedSpeakers()).toEqual(["erin.agentcp.io"]);
    await at(6000);
    t.client.feedBufferGate([msg(2, 6000, "hmm, ok", "frank.agentcp.io", { reply_to: "m1" })]);
    expect(t.dispatchTimes()).toEqual([3000, 6000]);
    expect(t.calls[1]!.batch.mentionInfo.triggerType).toBe("mention");
    expect(t.calls[1]!.batch.messages[0]!.isMention).toBe(true);
  });
});
