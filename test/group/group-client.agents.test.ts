// Agents do not ping-pong at machine speed: an agent's mention (or reply to us) waits
// agentMentionGapMs (default 5 s); a human's mention is instant and takes the waiting ones along.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { at, msg, setup, T0 } from "./harness.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const DAN = "dan.agentcp.io"; // a person
const BOT = "bot.agentcp.io"; // another agent

describe("agent mention gap", () => {
  it("T+0 an agent names Alice → dispatch at T+5 s, not at once", async () => {
    const t = setup({ humans: [DAN] });
    t.client.feedBufferGate([msg(1, 0, "Alice, your turn", BOT)]);
    await at(4999);
    expect(t.dispatchTimes()).toEqual([]);
    await at(5000);
    expect(t.dispatchTimes()).toEqual([5000]);
    expect(t.calls[0]!.batch.mentionInfo.triggerType).toBe("mention");
  });

  it("a human's mention is instant, and takes an agent's waiting mention with it", async () => {
    const t = setup({ humans: [DAN] });
    t.client.feedBufferGate([msg(1, 0, "Alice, your turn", BOT)]);
    await at(2000);
    t.client.feedBufferGate([msg(2, 2000, "Alice, what do you think?", DAN)]);
    expect(t.dispatchTimes()).toEqual([2000]);
    expect(t.calls[0]!.ids).toEqual(["1", "2"]);
  });

  it("a sender the member types know as a person (config, group service) is instant too; unknown waits", async () => {
    const types = { typeOf: (aid: string) => ({ type: aid === "eve.agentcp.io" ? ("human" as const) : ("unknown" as const) }) };
    const t = setup({ humans: [DAN], memberTypes: types });
    t.client.feedBufferGate([msg(1, 0, "Alice, a question", "eve.agentcp.io")]);
    await at(0);
    expect(t.dispatchTimes()).toEqual([0]);
    await at(1000);
    t.client.feedBufferGate([msg(2, 1000, "Alice, me too", "zed.agentcp.io")]);
    await at(5999);
    expect(t.dispatchTimes()).toEqual([0]);
    await at(6000);
    expect(t.dispatchTimes()).toEqual([0, 6000]);
  });

  it("an agent's reply to our message waits the gap too (3 s here)", async () => {
    const t = setup({ humans: [], settings: { agentMentionGapMs: 3000 } });
    t.client.recordOwnMessage({ msgId: "m1", timestamp: T0, content: "ship it?" });
    await at(100);
    t.client.feedBufferGate([msg(1, 100, "yes", BOT, { reply_to: "m1" })]);
    await at(3099);
    expect(t.dispatchTimes()).toEqual([]);
    await at(3100);
    expect(t.dispatchTimes()).toEqual([3100]);
  });

  it("agents answering each other back and forth: one exchange per gap at most", async () => {
    // Alice's dispatches reply at once (latency 100 ms); bot names Alice again 100 ms after each.
    const t = setup({ humans: [DAN], script: () => ({ latencyMs: 100 }) });
    for (let i = 0; i < 4; i++) {
      const atMs = i * 5100;
      await at(atMs);
      t.client.feedBufferGate([msg(i + 1, atMs, `Alice, round ${i}`, BOT)]);
    }
    await at(30_000);
    expect(t.dispatchTimes()).toEqual([5000, 10_100, 15_200, 20_300]);
  });
});
