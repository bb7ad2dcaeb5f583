import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { closeGroupClientForIdentity, initGroupClientForIdentity } from "../../src/group/group-client.ts";
import { SEEN_OTHER_CAPACITY } from "../../src/group/seen-ids.ts";
import { createMemoryLogger } from "../../src/log.ts";
import type { DispatchHandler } from "../../src/types.ts";
import { ALICE, at, msg, setup, T0 } from "./harness.ts";
import { GroupMemory } from "../../src/group/memory.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("vitality through the engine", () => {
  const speakers = ["bob.agentcp.io", "carol.agentcp.io", "dave.agentcp.io"];

  it("0 → DORMANT, 1 → COOLING, 5 from 2 speakers → COOLING, 6 → ACTIVE, 15 → ACTIVE, 16 → HEATED", () => {
    const t = setup();
    const feed = (from: number, to: number, nSpeakers: number) =>
      t.client.feedBufferGate(Array.from({ length: to - from + 1 }, (_, i) => msg(from + i, 0, "x", speakers[(from + i) % nSpeakers])));
    expect(t.client.computeVitality()).toEqual({ state: "DORMANT", messagesIn5m: 0, uniqueSpeakersIn5m: 0, myMessagesIn5m: 0, updatedAt: T0 });
    feed(1, 1, 2);
    expect(t.client.computeVitality().state).toBe("COOLING");
    feed(2, 5, 2);
    expect(t.client.computeVitality()).toMatchObject({ state: "COOLING", messagesIn5m: 5, uniqueSpeakersIn5m: 2 });
    feed(6, 6, 2);
    expect(t.client.computeVitality()).toMatchObject({ state: "ACTIVE", messagesIn5m: 6 });
    feed(7, 15, 3);
    expect(t.client.computeVitality()).toMatchObject({ state: "ACTIVE", messagesIn5m: 15, uniqueSpeakersIn5m: 3 });
    feed(16, 16, 3);
    expect(t.client.computeVitality()).toMatchObject({ state: "HEATED", messagesIn5m: 16 });
  });

  it("5 messages from 3 speakers are already ACTIVE", () => {
    const t = setup();
    t.client.feedBufferGate([0, 1, 2, 3, 4].map((i) => msg(i + 1, 0, "x", speakers[i % 3])));
    expect(t.client.computeVitality()).toMatchObject({ state: "ACTIVE", messagesIn5m: 5, uniqueSpeakersIn5m: 3 });
  });

  it("the window slides on server time: T+5m keeps a message from T+0, T+5m+1ms does not", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0)]);
    await at(300_000);
    expect(t.client.computeVitality().messagesIn5m).toBe(1);
    await at(300_001);
    expect(t.client.computeVitality()).toMatchObject({ state: "DORMANT", messagesIn5m: 0, updatedAt: T0 + 300_001 });
  });

  it("counts on server time even when the local clock is five minutes ahead (from the second live delivery on)", async () => {
    // Our clock reads T0+5min from the start (the client's local clock is monotonic from there).
    vi.useFakeTimers({ now: T0 + 300_000 });
    const t = setup();
    // Stamped by a server whose clock reads T0 while ours reads T0+5min.
    t.client.feedBufferGate([msg(1, 0)]);
    // One delivery cannot tell a message five minutes old from a skewed clock; the second one can.
    await vi.advanceTimersByTimeAsync(2000);
    t.client.feedBufferGate([msg(2, 2000, "y", "carol.agentcp.io")]);
    expect(t.client.serverNow()).toBe(T0 + 2000);
    expect(t.client.computeVitality()).toMatchObject({ state: "COOLING", messagesIn5m: 2, updatedAt: T0 + 2000 });
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0]!.batch.now).toBe(T0 + 5000);
    expect(t.calls[0]!.batch.vitality).toMatchObject({ state: "COOLING", messagesIn5m: 2, updatedAt: T0 + 5000 });
  });
});

describe("mention matching mode", () => {
  it("smart (default) ignores `also` for the alias `al`; substring reproduces the seed and fires", () => {
    const identity = { aid: "alice.agentcp.io", name: "Alice", aliases: ["al"] };
    const smart = setup({ identity });
    smart.client.feedBufferGate([msg(1, 0, "also, nice weather")]);
    expect(smart.calls).toHaveLength(0);
    const substring = setup({ identity, settings: { mentionMatch: "substring" } });
    substring.client.feedBufferGate([msg(1, 0, "also, nice weather")]);
    expect(substring.calls).toHaveLength(1);
    expect(substring.calls[0]!.batch.mentionInfo.triggerType).toBe("mention");
    expect(substring.client.mentionKeywords).toEqual(["Alice", "alice.agentcp.io", "al"]);
  });
});

describe("own messages", () => {
  it("arriving from the group: not dispatched, counted as ours (self drop), case-insensitive sender", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "hello all", "Alice.AgentCP.io")]);
    expect(t.drops()).toEqual([{ id: "1", reason: "self" }]);
    expect(t.client.lastSelfSpeakAt).toBe(T0);
    expect(t.client.computeVitality()).toMatchObject({ messagesIn5m: 1, uniqueSpeakersIn5m: 1, myMessagesIn5m: 1 });
    await at(60_000);
    expect(t.calls).toHaveLength(0);
    expect(t.client.stats()).toMatchObject({ received: 1, accepted: 0, dispatched: 0 });
  });

  it("recordOwnMessage then the echo of the same msg id: counted once", () => {
    const t = setup();
    t.client.recordOwnMessage({ msgId: "50", timestamp: T0 + 100, content: "hello all" });
    t.client.recordOwnMessage({ msgId: "50", timestamp: T0 + 100, content: "hello all" });
    t.client.feedBufferGate([msg(50, 100, "hello all", ALICE.aid)]);
    expect(t.client.computeVitality()).toMatchObject({ messagesIn5m: 1, myMessagesIn5m: 1 });
    expect(t.client.stats().ownMessages).toBe(1);
    expect(t.drops()).toEqual([{ id: "50", reason: "self" }]);
    // A later message of ours that was never recorded counts.
    t.client.feedBufferGate([msg(51, 200, "another", ALICE.aid)]);
    expect(t.client.computeVitality()).toMatchObject({ messagesIn5m: 2, myMessagesIn5m: 2 });
    expect(t.client.lastSelfSpeakAt).toBe(T0 + 200);
  });

  it("a send recorded without a msg id is matched to its echo by content", () => {
    const t = setup();
    t.client.recordOwnMessage({ timestamp: T0, content: "same words" });
    t.client.feedBufferGate([msg(7, 0, "same words", ALICE.aid)]);
    expect(t.client.computeVitality().myMessagesIn5m).toBe(1);
    t.client.feedBufferGate([msg(8, 0, "same words", ALICE.aid)]);
    expect(t.client.computeVitality().myMessagesIn5m).toBe(2);
  });

  it("a sent outcome is recorded by the client itself", async () => {
    const t = setup({ script: () => ({ latencyMs: 500, outcome: { kind: "sent", replyType: "short", text: "hi", msgId: "90", sentAt: T0 + 3400 } }) });
    t.client.feedBufferGate([msg(1, 0)]);
    await at(3500);
    expect(t.client.lastSelfSpeakAt).toBe(T0 + 3400);
    expect(t.client.computeVitality().myMessagesIn5m).toBe(1);
    t.client.feedBufferGate([msg(90, 3400, "hi", ALICE.aid)]);
    expect(t.client.computeVitality().myMessagesIn5m).toBe(1);
    expect(t.events.filter((e) => e.type === "own-message")).toEqual([{ type: "own-message", msgId: "90", timestamp: T0 + 3400 }]);
  });
});

describe("dedup, cursor, capacity", () => {
  it("drops a repeated msg id as a counted duplicate", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0), msg(2, 0)]);
    t.client.feedBufferGate([msg(2, 0), msg(3, 0), msg(3, 0)]);
    await at(4000);
    expect(t.calls[0]!.ids).toEqual(["1", "2", "3"]);
    expect(t.drops()).toEqual([
      { id: "2", reason: "duplicate" },
      { id: "3", reason: "duplicate" },
    ]);
    expect(t.client.stats()).toMatchObject({ received: 5, accepted: 3, dispatched: 3, dropped: { duplicate: 2 } });
  });

  it("the seen set is bounded: a non-numeric id older than the last 512 is no longer remembered", () => {
    const t = setup({ settings: { maxPendingMessages: 10_000 } });
    expect(SEEN_OTHER_CAPACITY).toBe(512);
    t.client.feedBufferGate(Array.from({ length: 513 }, (_, i) => msg(`m${i + 1}`, 0)));
    t.client.feedBufferGate([msg("m513", 0), msg("m2", 0), msg("m1", 0)]);
    expect(t.drops()).toEqual([
      { id: "m513", reason: "duplicate" },
      { id: "m2", reason: "duplicate" },
    ]);
  });

  it("cursor: the highest numeric msg id seen, starting from the restored one", async () => {
    const t0 = setup();
    expect(t0.client.cursor).toBe(0);
    const logger = createMemoryLogger();
    const batches: number[] = [];
    const client = initGroupClientForIdentity({
      identityId: "alice",
      groupId: "g1",
      identity: ALICE,
      settings: DEFAULT_GROUP_SETTINGS,
      logger,
      restored: { cursor: 40 },
      memory: new GroupMemory({ historySize: 10, restored: { lastSelfSpeakAt: T0 - 5000 } }),
      dispatch: async (_b, group) => {
        batches.push(group.memory.lastSelfSpeakAt ?? -1);
        return { kind: "skipped", reason: "silent" };
      },
    });
    expect(client.cursor).toBe(40);
    expect(client.lastSelfSpeakAt).toBe(T0 - 5000);
    client.feedBufferGate([msg(39, 0), msg("abc", 0), msg(41, 0), msg("0042", 0)]);
    expect(client.cursor).toBe(41);
    client.feedBufferGate([msg(45, 0, "mine", ALICE.aid)]);
    expect(client.cursor).toBe(45);
    await at(3000);
    expect(batches).toEqual([T0]);
    await closeGroupClientForIdentity(client);
  });

  it("over capacity: the oldest held messages are dropped, counted and logged", async () => {
    const t = setup({ settings: { maxPendingMessages: 5 }, script: (_b, i) => ({ latencyMs: i === 0 ? 10_000 : 1000 }) });
    t.client.feedBufferGate([msg(1, 0, "Alice?")]);
    await at(1000);
    // From carol: bob, having just mentioned us, would be engaged (and skip the cooldown).
    t.client.feedBufferGate([2, 3, 4, 5, 6, 7, 8, 9].map((id) => msg(id, 1000, "chat", "carol.agentcp.io")));
    expect(t.drops()).toEqual(["2", "3", "4"].map((id) => ({ id, reason: "over-capacity" })));
    expect(t.logger.entries.filter((e) => e.event === "group.over-capacity")).toEqual([
      { level: "warn", event: "group.over-capacity", fields: { identity: "alice", group: "g1", dropped: 3, max: 5 } },
    ]);
    // Dispatch 1 ends at T+10; the rest waits out the cooldown → T+40.
    await at(40_000);
    expect(t.dispatchTimes()).toEqual([0, 40_000]);
    expect(t.calls[1]!.ids).toEqual(["5", "6", "7", "8", "9"]);
    expect(t.logger.entries.filter((e) => e.event === "group.over-capacity-ended").map((e) => e.fields["dropped"])).toEqual([3]);
  });
});

describe("failures of the agent side", () => {
  it("re-queues with backoff 2 s × 2^attempt, merging late arrivals, then succeeds", async () => {
    const t = setup({ script: (_b, i) => (i < 2 ? { throws: new Error(`backend down ${i}`) } : { latencyMs: 100 }) });
    t.client.feedBufferGate([msg(1, 0)]);
    await at(4000);
    t.client.feedBufferGate([msg(2, 4000)]);
    await at(20_000);
    expect(t.dispatchTimes()).toEqual([3000, 5000, 9000]);
    expect(t.calls.map((c) => c.batch.attempt)).toEqual([0, 1, 2]);
    expect(t.calls.map((c) => c.ids)).toEqual([["1"], ["1", "2"], ["1", "2"]]);
    expect(t.calls[1]!.batch.mentionInfo.batchesMerged).toBe(2);
    expect(t.client.stats()).toMatchObject({ dispatches: 3, retries: 2, failures: 2, dispatched: 2, held: 0, dispatching: false });
    expect(t.drops()).toEqual([]);
    expect(t.logger.entries.filter((e) => e.event === "group.dispatch-failed").map((e) => e.fields["retryInMs"])).toEqual([2000, 4000]);
  });

  it("after maxRetries the batch is dropped with a logged error, and the lock is free again", async () => {
    const t = setup({ script: (_b, i) => (i < 3 ? { throws: Object.assign(new Error("boom"), { code: "E_BACKEND" }) } : { latencyMs: 100 }) });
    t.client.feedBufferGate([msg(1, 0), msg(2, 0)]);
    await at(9000);
    expect(t.dispatchTimes()).toEqual([3000, 5000, 9000]);
    expect(t.drops()).toEqual([
      { id: "1", reason: "retries-exhausted" },
      { id: "2", reason: "retries-exhausted" },
    ]);
    const err = t.logger.entries.find((e) => e.event === "group.dispatch-retries-exhausted");
    expect(err).toMatchObject({ level: "error", fields: { attempt: 2, messages: 2, error: "boom", code: "E_BACKEND" } });
    expect(t.client.stats().dispatching).toBe(false);
    await at(10_000);
    t.client.feedBufferGate([msg(3, 10_000, "Alice?")]);
    expect(t.dispatchTimes()).toEqual([3000, 5000, 9000, 10_000]);
    expect(t.calls[3]!.batch.attempt).toBe(0);
  });

  it("a handler that throws synchronously never leaves the lock held", async () => {
    let n = 0;
    const dispatch: DispatchHandler = () => {
      n++;
      throw new Error("sync throw");
    };
    const client = initGroupClientForIdentity({ identityId: "a", groupId: "g1", identity: ALICE, settings: { ...DEFAULT_GROUP_SETTINGS, maxRetries: 0 }, dispatch });
    client.feedBufferGate([msg(1, 0, "Alice!")]);
    expect(n).toBe(1);
    expect(client.stats()).toMatchObject({ dispatching: false, dropped: { "retries-exhausted": 1 } });
    client.feedBufferGate([msg(2, 0, "Alice!!")]);
    expect(n).toBe(2);
    await client.whenIdle();
    await closeGroupClientForIdentity(client);
  });

  it("a mention during the retry backoff does not hit the failing back-end again: it goes with the retry", async () => {
    const t = setup({ script: (_b, i) => (i === 0 ? { throws: new Error("down") } : { latencyMs: 100 }) });
    t.client.feedBufferGate([msg(1, 0)]);
    await at(3500);
    t.client.feedBufferGate([msg(2, 3500, "Alice?")]);
    expect(t.dispatchTimes()).toEqual([3000]);
    // T+3 failed → retry at T+5, carrying the mention.
    await at(5000);
    expect(t.dispatchTimes()).toEqual([3000, 5000]);
    expect(t.calls[1]!.ids).toEqual(["1", "2"]);
    expect(t.calls[1]!.batch.attempt).toBe(1);
    await at(20_000);
    expect(t.calls).toHaveLength(2);
  });
});

describe("close and idle", () => {
  it("close: held messages become group-closed drops, every timer is cleared, later feeds are dropped", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0), msg(2, 0)]);
    expect(vi.getTimerCount()).toBe(1);
    await closeGroupClientForIdentity(t.client);
    expect(vi.getTimerCount()).toBe(0);
    expect(t.client.closed).toBe(true);
    t.client.feedBufferGate([msg(3, 0, "Alice?")]);
    expect(t.drops()).toEqual(["1", "2", "3"].map((id) => ({ id, reason: "group-closed" })));
    await at(60_000);
    expect(t.calls).toHaveLength(0);
    expect(t.client.stats()).toMatchObject({ received: 3, accepted: 2, dropped: { "group-closed": 3 } });
  });

  it("close waits for the running dispatch to settle; a failure then is a group-closed drop, not a retry", async () => {
    const t = setup({ script: () => ({ latencyMs: 5000, throws: new Error("late failure") }) });
    t.client.feedBufferGate([msg(1, 0, "Alice?")]);
    await at(1000);
    t.client.feedBufferGate([msg(2, 1000)]);
    let closed = false;
    void closeGroupClientForIdentity(t.client).then(() => (closed = true));
    expect(t.drops()).toEqual([{ id: "2", reason: "group-closed" }]);
    await at(4999);
    expect(closed).toBe(false);
    await at(5000);
    expect(closed).toBe(true);
    expect(t.drops()).toEqual([
      { id: "2", reason: "group-closed" },
      { id: "1", reason: "group-closed" },
    ]);
    expect(vi.getTimerCount()).toBe(0);
    expect(t.calls).toHaveLength(1);
  });

  it("whenIdle resolves once nothing is buffered, pending or dispatching", async () => {
    const t = setup();
    await t.client.whenIdle();
    t.client.feedBufferGate([msg(1, 0)]);
    let idle = false;
    void t.client.whenIdle().then(() => (idle = true));
    await at(3999);
    expect(idle).toBe(false);
    await at(4000);
    expect(idle).toBe(true);
  });

  it("an observer that throws is logged and does not break the engine", async () => {
    const logger = createMemoryLogger();
    const client = initGroupClientForIdentity({
      identityId: "a",
      groupId: "g1",
      identity: ALICE,
      settings: DEFAULT_GROUP_SETTINGS,
      logger,
      dispatch: async () => ({ kind: "skipped", reason: "silent" }),
      onEvent: () => {
        throw new Error("observer bug");
      },
    });
    client.feedBufferGate([msg(1, 0, "Alice?")]);
    await client.whenIdle();
    expect(client.stats()).toMatchObject({ dispatched: 1, dispatching: false });
    expect(logger.entries.some((e) => e.event === "group.observer-failed")).toBe(true);
  });
});
