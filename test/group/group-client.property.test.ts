// Property: over random timelines (batches, mentions, own echoes, duplicates, agent latencies,
// failures, sync throws, early close, reactions and no-reply-expected messages, dispatches that
// hand the newer part of their batch back) no accepted
// message is lost or dispatched twice, dispatch order is (timestamp, msg id), the lock is never
// held twice, a throw never leaves it held, and no dispatch carries only passive messages; a
// mention starts at once when the group is idle, or the moment the running dispatch ends; no
// message is dispatched again once its retries are used up. A second property runs the same
// timelines on skewed clocks (the server ±15 min from the local clock), a local clock that jumps
// an hour, and a restart whose first delivery is a backlog stamped minutes or hours ago: each
// dispatch's server-time `now` is the server's real time once the clock could be known.
// A longer hunt: FC_RUNS=5000 (and FC_SEED=<seed> to replay a reported failure).
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { closeGroupClientForIdentity, initGroupClientForIdentity, type GroupClientEvent } from "../../src/group/group-client.ts";
import type { DispatchHandler, DispatchOutcome, GroupMessage, GroupSettings } from "../../src/types.ts";
import { ALICE, T0 } from "./harness.ts";

const SENDERS = ["bob.agentcp.io", "carol.agentcp.io", "dave.agentcp.io"];

const itemArb = fc.record({
  kind: fc.constantFrom("plain", "plain", "plain", "mention", "self", "dup", "reaction", "quiet"),
  sender: fc.nat(SENDERS.length - 1),
  jitterMs: fc.integer({ min: -2000, max: 2000 }),
});
const stepArb = fc.record({ gapMs: fc.integer({ min: 0, max: 6000 }), batch: fc.array(itemArb, { maxLength: 5 }) });
const agentArb = fc.record({
  latencyMs: fc.constantFrom(0, 10, 500, 2000, 8000),
  // hand-back: sent, and the newer half of the batch handed back unlooked-at (as after delivering a reply written earlier).
  result: fc.constantFrom("silent", "silent", "sent", "reject", "sync-throw", "hand-back"),
});
const settingsArb = fc
  .record({
    bufferGateMs: fc.constantFrom(0, 500, 3000),
    extraWaitMs: fc.constantFrom(0, 2000, 12000),
    cooldownMs: fc.constantFrom(0, 5000, 30000),
    maxRetries: fc.constantFrom(0, 1, 2),
    retryBackoffMs: fc.constantFrom(0, 500, 2000),
    maxPendingMessages: fc.constantFrom(3, 20, 500),
    engagedFollowUpMs: fc.constantFrom(1000, 5000),
    mentionMinIntervalMs: fc.constantFrom(0, 0, 3000),
  })
  .map(({ extraWaitMs, ...s }): GroupSettings => ({ ...DEFAULT_GROUP_SETTINGS, ...s, bufferGateMaxWaitMs: s.bufferGateMs + extraWaitMs }));

/** How the clocks behave in a timeline: server minus local time, a backlog first, a jump of the local clock. */
interface ClockPlan {
  skewMs: number;
  /** Live messages are stamped the server's now ± this share of the item's jitter (1 = ±2 s). */
  jitterScale: number;
  /** Before the first step: this many messages stamped `ageMs` ago (and a second apart), in one delivery. */
  backlog: { count: number; ageMs: number } | null;
  /** Before step `atStep`, the local clock jumps by `ms`. */
  jump: { atStep: number; ms: number } | null;
}
const STEADY_CLOCK: ClockPlan = { skewMs: 0, jitterScale: 1, backlog: null, jump: null };
const MIN = 60_000;
/** fast-check options: the default number of runs, or FC_RUNS / FC_SEED from the environment. */
function runsOf(numRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED;
  return { numRuns: Number(process.env.FC_RUNS ?? numRuns), ...(seed ? { seed: Number(seed) } : {}) };
}
/**
 * Each property takes 1–3 s alone and several times that on a loaded machine: more than the 20 s
 * unit-test default leaves room for a full run on two busy cores (and for a longer hunt).
 */
const PROPERTY_TIMEOUT_MS = process.env.FC_RUNS ? 0 : 120_000;
const clockArb: fc.Arbitrary<ClockPlan> = fc.record({
  skewMs: fc.constantFrom(0, 0, 15 * MIN, -15 * MIN),
  jitterScale: fc.constant(0.25),
  backlog: fc.option(fc.record({ count: fc.integer({ min: 1, max: 5 }), ageMs: fc.constantFrom(9 * MIN, 2 * 60 * MIN) }), { nil: null }),
  jump: fc.option(fc.record({ atStep: fc.nat(12), ms: fc.constantFrom(60 * MIN, -60 * MIN) }), { nil: null }),
});

describe("group client invariants (fast-check)", () => {
  it("every accepted message ends in exactly one dispatch or one counted drop; order; one lock", async () => {
    await fc.assert(
      fc.asyncProperty(
        settingsArb,
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        fc.array(agentArb, { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(30), { nil: undefined }),
        // undefined: everyone is a person; []: every sender is an agent (mentions wait the agent gap).
        fc.constantFrom<string[] | undefined>(undefined, undefined, []),
        async (settings, steps, agent, closeAfterStep, humans) => {
          vi.useFakeTimers({ now: T0 });
          try {
            await runTimeline(settings, steps, agent, closeAfterStep, humans);
          } finally {
            vi.useRealTimers();
          }
        },
      ),
      runsOf(300),
    );
  }, PROPERTY_TIMEOUT_MS);

  it("on skewed and jumping clocks, after a backlog: the same invariants, and each dispatch's `now` is the server's time once it could be known", async () => {
    await fc.assert(
      fc.asyncProperty(
        settingsArb,
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        fc.array(agentArb, { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(30), { nil: undefined }),
        clockArb,
        async (settings, steps, agent, closeAfterStep, clock) => {
          vi.useFakeTimers({ now: T0 });
          try {
            await runTimeline(settings, steps, agent, closeAfterStep, undefined, clock);
          } finally {
            vi.useRealTimers();
          }
        },
      ),
      runsOf(200),
    );
  }, PROPERTY_TIMEOUT_MS);
});

type Step = { gapMs: number; batch: Array<{ kind: string; sender: number; jitterMs: number }> };
type AgentStep = { latencyMs: number; result: string };

async function runTimeline(
  settings: GroupSettings,
  steps: Step[],
  agent: AgentStep[],
  closeAfterStep: number | undefined,
  humans: string[] | undefined,
  clock: ClockPlan = STEADY_CLOCK,
) {
  const events: GroupClientEvent[] = [];
  // The client's local clock is monotonic (a wall clock set off by an hour does not move it); the
  // server's true time is that clock plus the skew.
  const localNow = () => performance.timeOrigin + performance.now();
  const serverTrue = () => localNow() + clock.skewMs;
  // Each dispatch's estimate of server time beside the true one, and from which dispatch on the
  // estimate could be known: those that start after the second live delivery at least 2 s after
  // the first (counted in dispatches, not local time: a retry may fire in the very millisecond of
  // that delivery, just before it).
  const nows: Array<{ local: number; estimate: number; truth: number }> = [];
  let firstLive: number | undefined;
  let knownFrom = clock.skewMs === 0 ? 0 : Number.POSITIVE_INFINITY;
  let inFlight = 0;
  let calls = 0;
  let nextId = 1;
  let sentId = 100_000;
  const fed: GroupMessage[] = [];

  const dispatch: DispatchHandler = (batch) => {
    expect(inFlight).toBe(0); // the lock is never held twice
    const step = agent[calls++ % agent.length]!;
    if (step.result === "sync-throw") throw new Error("sync failure");
    inFlight++;
    return new Promise<DispatchOutcome>((resolve, reject) => {
      setTimeout(() => {
        inFlight--;
        if (step.result === "reject") reject(new Error("backend failure"));
        else if (step.result === "sent") resolve({ kind: "sent", replyType: "short", text: `re ${batch.dispatchId}`, msgId: String(sentId++) });
        else if (step.result === "hand-back" && batch.messages.length > 1) {
          const back = batch.messages.slice(Math.ceil(batch.messages.length / 2)).map((m) => m.msgId);
          resolve({ kind: "sent", replyType: "short", text: `re ${batch.dispatchId}`, msgId: String(sentId++), notHandled: back });
        }
        else resolve({ kind: "skipped", reason: "silent" });
      }, step.latencyMs);
    });
  };
  const client = initGroupClientForIdentity({
    identityId: "alice",
    groupId: "g1",
    identity: ALICE,
    ...(humans ? { humans } : {}),
    settings,
    dispatch,
    onEvent: (e) => {
      events.push(e);
      if (e.type === "dispatch-start") nows.push({ local: localNow(), estimate: e.batch.now, truth: serverTrue() });
    },
  });

  if (clock.backlog) {
    // A restart: what the group said while we were away arrives first, in one delivery.
    const backlog: GroupMessage[] = [];
    for (let k = 0; k < clock.backlog.count; k++) {
      const id = String(nextId++);
      const content = k === 0 ? `Alice, old ${id}?` : `old ${id}`;
      backlog.push({ msgId: id, groupId: "g1", sender: SENDERS[k % SENDERS.length]!, content, contentType: "text", timestamp: serverTrue() - clock.backlog.ageMs + k * 1000, metadata: null });
    }
    fed.push(...backlog);
    client.feedBufferGate(backlog);
  }

  const mentionChecks: Array<{ id: string; at: number }> = [];
  // Mentions that arrived while a dispatch ran (and no retry was pending): which dispatch.
  const busyMentionChecks: Array<{ id: string; during: number }> = [];
  for (const [i, step] of steps.entries()) {
    await vi.advanceTimersByTimeAsync(step.gapMs);
    // The wall clock is set an hour off; the server's is not, and nothing the client times may move.
    if (clock.jump?.atStep === i) vi.setSystemTime(Date.now() + clock.jump.ms);
    const now = localNow();
    const live = serverTrue();
    const batch: GroupMessage[] = step.batch.map((item) => {
      if (item.kind === "dup" && fed.length > 0) return fed[(nextId * 7) % fed.length]!;
      const id = String(nextId++);
      const sender = item.kind === "self" ? ALICE.aid : SENDERS[item.sender]!;
      const content = item.kind === "mention" ? `Alice, msg ${id}?` : `msg ${id}`;
      // Network signals: a reaction, or a message flagged as expecting no reply (naming Alice, too).
      const metadata =
        item.kind === "reaction"
          ? { group_meta: { msg_type: "reaction", reply_to: "1", reaction: "👍" } }
          : item.kind === "quiet"
            ? { group_meta: { flags: { no_reply_expected: true } } }
            : null;
      const text = item.kind === "quiet" ? `Alice, fyi ${id}` : content;
      return { msgId: id, groupId: "g1", sender, content: text, contentType: "text", timestamp: live + Math.round(item.jitterMs * clock.jitterScale), metadata };
    });
    fed.push(...batch);
    if (batch.some((m) => !fed.slice(0, fed.length - batch.length).includes(m)) && !client.closed) {
      if (firstLive === undefined) firstLive = now;
      else if (now - firstLive >= 2000 && knownFrom === Number.POSITIVE_INFINITY) knownFrom = nows.length;
    }
    const retryPending = retryIsPending(events);
    const idle = inFlight === 0 && !client.stats().dispatching && !retryPending;
    const running = client.stats().dispatching ? lastStartedDispatch(events) : undefined;
    const before = events.length;
    client.feedBufferGate(batch);
    // Timing checks for people's mentions; agents' mentions wait the agent gap by design.
    if (settings.mentionMinIntervalMs === 0 && humans === undefined && !client.closed) {
      for (const e of events.slice(before)) {
        if (e.type !== "accepted" || !e.message.isMention) continue;
        if (idle) mentionChecks.push({ id: e.message.msgId, at: now });
        else if (running !== undefined && !retryPending) busyMentionChecks.push({ id: e.message.msgId, during: running });
      }
    }
    // Not awaited: close waits for a running dispatch, which needs the fake clock to move.
    if (closeAfterStep === i) void closeGroupClientForIdentity(client);
  }
  // Run to quiescence: timers only move forward, so a bounded number of minutes suffices.
  for (let i = 0; i < 30 && (client.stats().held > 0 || client.stats().dispatching); i++) await vi.advanceTimersByTimeAsync(60_000);
  expect(client.stats()).toMatchObject({ held: 0, dispatching: false });
  // Server time as the client estimates it: its live stamps are off by at most their jitter (0.5 s).
  if (clock !== STEADY_CLOCK) {
    for (const n of nows.slice(knownFrom)) expect([n.local - T0, n.estimate - n.truth]).toEqual([n.local - T0, expect.toSatisfy((d: number) => Math.abs(d) <= 1000)]);
  }
  await client.whenIdle();
  await closeGroupClientForIdentity(client);
  expect(vi.getTimerCount()).toBe(0);

  // Bookkeeping, per message id.
  const accepted = new Set<string>();
  const terminal = new Map<string, number>();
  const bump = (id: string) => terminal.set(id, (terminal.get(id) ?? 0) + 1);
  const starts = new Map<number, { ids: string[]; at: number }>();
  const handedBack: Array<{ ids: string[]; end: number }> = [];
  let dropsBeforeAccept = 0;
  for (const e of events) {
    if (e.type === "accepted") {
      expect(accepted.has(e.message.msgId)).toBe(false);
      accepted.add(e.message.msgId);
    } else if (e.type === "dropped") {
      if (e.stage === "arrival") {
        expect(["duplicate", "self", "group-closed"]).toContain(e.reason);
        dropsBeforeAccept++;
      } else {
        expect(accepted.has(e.msgId)).toBe(true);
        bump(e.msgId);
      }
    } else if (e.type === "dispatch-start") {
      const ms = e.batch.messages;
      for (let k = 1; k < ms.length; k++) {
        const a = ms[k - 1]!;
        const b = ms[k]!;
        expect(a.timestamp < b.timestamp || (a.timestamp === b.timestamp && Number(a.msgId) < Number(b.msgId))).toBe(true);
      }
      for (const m of ms) expect(accepted.has(m.msgId)).toBe(true);
      expect(ms.some((m) => m.passive === undefined)).toBe(true);
      starts.set(e.batch.dispatchId, { ids: ms.map((m) => m.msgId), at: e.atLocal });
    } else if (e.type === "dispatch-end" && e.ok) {
      // Handed back: held again and dispatched (or dropped) later, not ended here.
      const back = new Set((e.outcome.kind === "sent" ? e.outcome.notHandled : undefined) ?? []);
      for (const id of starts.get(e.dispatchId)!.ids) if (!back.has(id)) bump(id);
      if (back.size > 0) handedBack.push({ ids: [...back], end: e.atLocal });
    }
  }
  for (const id of accepted) expect([id, terminal.get(id) ?? 0]).toEqual([id, 1]);
  expect(terminal.size).toBe(accepted.size);
  expect(accepted.size + dropsBeforeAccept).toBe(fed.length);
  const stats = client.stats();
  expect(stats.received).toBe(fed.length);
  const dropTotal = Object.values(stats.dropped).reduce((a, b) => a + b, 0);
  expect(stats.dispatched + dropTotal).toBe(fed.length);

  // A mention that finds the group idle is dispatched at the instant it arrives.
  const droppedAt = (id: string) => events.some((e) => e.type === "dropped" && e.msgId === id);
  for (const { id, at } of mentionChecks) {
    if (droppedAt(id)) continue;
    const first = [...starts.values()].find((s) => s.ids.includes(id));
    expect(first?.at).toBe(at);
  }

  // A mention that arrives while a dispatch runs starts the moment that dispatch ends (when it
  // ended well; a failed one hands everything to its retry).
  for (const { id, during } of busyMentionChecks) {
    if (droppedAt(id)) continue;
    const end = events.find((e) => e.type === "dispatch-end" && e.dispatchId === during);
    if (end === undefined || end.type !== "dispatch-end" || !end.ok) continue;
    const first = [...starts.values()].find((s) => s.ids.includes(id));
    expect([id, first?.at]).toEqual([id, end.atLocal]);
  }

  // A mention handed back by a dispatch starts the moment that dispatch ends (people's mentions, no minimum interval).
  if (settings.mentionMinIntervalMs === 0 && humans === undefined) {
    for (const { ids, end } of handedBack) {
      const mentions = ids.filter((id) => fed.some((m) => m.msgId === id && m.content.startsWith("Alice,") && m.metadata === null));
      for (const id of mentions) {
        if (droppedAt(id)) continue;
        const next = [...starts.values()].find((s) => s.at >= end && s.ids.includes(id));
        expect([id, next?.at]).toEqual([id, end]);
      }
    }
  }

  // No message is dispatched after its retries are used up: at most 1 + maxRetries starts each.
  const failedTries = new Map<string, number>();
  for (const e of events) {
    if (e.type === "dispatch-start") {
      for (const m of e.batch.messages) expect(failedTries.get(m.msgId) ?? 0).toBeLessThanOrEqual(settings.maxRetries);
    } else if (e.type === "dispatch-end" && !e.ok) {
      for (const id of starts.get(e.dispatchId)!.ids) failedTries.set(id, (failedTries.get(id) ?? 0) + 1);
    }
  }
}

/** A failed dispatch scheduled a retry that has not started yet. */
function retryIsPending(events: readonly GroupClientEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "dispatch-start") return false;
    if (e.type === "dispatch-end") return !e.ok && e.retryInMs !== null;
  }
  return false;
}

function lastStartedDispatch(events: readonly GroupClientEvent[]): number | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "dispatch-start") return e.batch.dispatchId;
  }
  return undefined;
}
