// Timeline bugs under stress, each a literal fake-timer timeline. Server and local clocks agree
// unless a test says otherwise.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { initGroupClientForIdentity } from "../../src/group/group-client.ts";
import { ALICE, at, msg, setup, T0 } from "./harness.ts";
import { GroupMemory } from "../../src/group/memory.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const fail = new Error("back-end down");

describe("retries: every message gets its own tries", () => {
  it("a mention joining a failing batch waits out the backoff, keeps its full retries, and goes with the retry", async () => {
    // Attempts 1–3 fail, the 4th succeeds. maxRetries 2 → 3 tries per message; backoff 2 s × 2^n.
    const t = setup({ script: (_b, i) => (i < 3 ? { latencyMs: 1000, throws: fail } : { latencyMs: 1000 }) });
    t.client.feedBufferGate([msg(1, 0, "the build is red")]);
    // T+3 dispatch #1 [1] fails at T+4 → retry at T+6.
    await at(4500);
    // T+4.5 carol names Alice during the backoff: the failing back-end is not hit again now.
    t.client.feedBufferGate([msg(2, 4500, "Alice, can you check?", "carol.agentcp.io")]);
    await at(5999);
    expect(t.dispatchTimes()).toEqual([3000]);
    await at(60_000);
    // T+6 #2 [1,2] fails → T+11 #3 [1,2] fails: 1 has had its 3 tries, 2 only 2 → T+20 #4 [2] succeeds.
    expect(t.dispatchTimes()).toEqual([3000, 6000, 11_000, 20_000]);
    expect(t.calls.map((c) => c.ids)).toEqual([["1"], ["1", "2"], ["1", "2"], ["2"]]);
    expect(t.drops()).toEqual([{ id: "1", reason: "retries-exhausted" }]);
    expect(t.calls[3]!.batch.mentionInfo.triggerType).toBe("mention");
  });
});

describe("capacity: an evicted waiting mention", () => {
  it("no longer counts as waiting: the running dispatch sees no newer mention and the next plain batch waits its cooldown", async () => {
    const t = setup({ settings: { maxPendingMessages: 3 }, script: () => ({ latencyMs: 10_000 }) });
    // T+0 mention → dispatch #1 runs to T+10.
    t.client.feedBufferGate([msg(1, 0, "Alice, one")]);
    // T+1 another mention waits for the lock.
    await at(1000);
    t.client.feedBufferGate([msg(2, 1000, "Alice, two", "carol.agentcp.io")]);
    // T+2 three plain messages: capacity 3 drops the oldest held — the waiting mention.
    await at(2000);
    t.client.feedBufferGate([msg(3, 2000, "a", "dave.agentcp.io"), msg(4, 2000, "b", "erin.agentcp.io"), msg(5, 2000, "c", "frank.agentcp.io")]);
    await at(60_000);
    expect(t.drops()).toEqual([{ id: "2", reason: "over-capacity" }]);
    expect(t.calls[0]!.pendingMentionAtEnd).toBe(false);
    // #1 ends at T+10; the plain batch waits the cooldown (30 s) → T+40.
    expect(t.dispatchTimes()).toEqual([0, 40_000]);
  });
});

describe("group events", () => {
  it("event and system messages never trigger a mention", async () => {
    const t = setup();
    t.client.feedBufferGate([
      { ...msg(1, 0, "Alice joined the group"), contentType: "event" },
      { ...msg(2, 0, "Alice was made admin"), contentType: "system" },
    ]);
    await at(1000);
    expect(t.dispatchTimes()).toEqual([]);
    expect(t.events.flatMap((e) => (e.type === "accepted" ? [e.message.isMention] : []))).toEqual([false, false]);
    await at(3000);
    expect(t.calls[0]!.batch.mentionInfo.triggerType).toBe("normal");
  });
});

describe("restart: a backlog of old messages", () => {
  it("does not become the clock: two-hour-old history is not live and last_speak_ago is real", async () => {
    const HOUR = 3_600_000;
    // The process starts two hours after T0 (the client's clock is monotonic from the start).
    vi.useFakeTimers({ now: T0 + 2 * HOUR });
    const batches: Array<{ vitality: string; lastSelfSpeakAt: number | null; now: number }> = [];
    const client = initGroupClientForIdentity({
      identityId: "alice",
      groupId: "g1",
      identity: ALICE,
      settings: DEFAULT_GROUP_SETTINGS,
      restored: { cursor: 0 },
      memory: new GroupMemory({ historySize: 10, restored: { lastSelfSpeakAt: T0 + HOUR } }),
      dispatch: async (b, group) => {
        batches.push({ vitality: b.vitality.state, lastSelfSpeakAt: group.memory.lastSelfSpeakAt, now: b.now });
        return { kind: "skipped", reason: "silent" };
      },
    });
    // The pull after restart delivers 20 messages stamped two hours ago, from 4 speakers.
    const speakers = ["bob", "carol", "dave", "erin"].map((n) => `${n}.agentcp.io`);
    client.feedBufferGate(Array.from({ length: 20 }, (_, i) => msg(i + 1, i * 1000, `old ${i}`, speakers[i % 4])));
    expect(client.serverNow()).toBeGreaterThanOrEqual(T0 + 2 * HOUR);
    expect(client.computeVitality()).toMatchObject({ state: "DORMANT", messagesIn5m: 0 });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.vitality).toBe("DORMANT");
    // One hour since we last spoke, not 0.
    expect(batches[0]!.now - batches[0]!.lastSelfSpeakAt!).toBeGreaterThanOrEqual(HOUR);
    await client.close();
  });
});
