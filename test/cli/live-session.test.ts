// How `run` and `start` start many identities (src/cli/live-session.ts, start-slots.ts): never in
// the turn that asked (the config read and the garbage collection it leaves due end first), then
// under a turn budget (src/util/turn-budget.ts) shared with the turn's other work, a start running
// while the turn has used less than the budget, else in a later turn, and at most START_AT_ONCE
// part-way through start-up. The identities here are stand-ins that only advance the clock by what
// a start costs, or whose `ready` the test settles.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { openLiveSession, START_AT_ONCE, START_WAIT_MS, type LiveSession } from "../../src/cli/live-session.ts";
import type { RunningIdentity, StartIdentityParams } from "../../src/runtime/identity.ts";
import { createTurnBudget, type TurnBudget } from "../../src/util/turn-budget.ts";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** Lets the microtasks queued so far (and those they queue) run. */
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

let session: LiveSession | undefined;
afterEach(() => session?.release());

/** A session whose every start costs `costMs` on its clock, under a 20 ms turn budget of that clock; `started` lists them with the clock's time. */
function sessionWith(costMs: number) {
  const clock = { now: 0 };
  const started: string[] = [];
  const turns = createTurnBudget({ budgetMs: 20, now: () => clock.now });
  session = openLiveSession({
    io: { out: () => {}, err: () => {} },
    afterStop: async () => {},
    onStopFailed: () => {},
    now: () => clock.now,
    turns,
    startOne: (p: StartIdentityParams) => {
      started.push(`T+${clock.now} ${p.identityId}`);
      clock.now += costMs;
      return { identityId: p.identityId, ready: new Promise(() => {}), done: Promise.resolve() } as unknown as RunningIdentity;
    },
  });
  return { session, started, turns, clock };
}
const noParams = () => ({}) as Omit<StartIdentityParams, "identityId" | "abortSignal">;

describe("startIdentities", () => {
  it("starts none in the turn that asked, then as many as the turn budget lets each turn (20 ms here)", async () => {
    const { session, started } = sessionWith(8);
    const all = session.startIdentities(["a", "b", "c", "d", "e", "f", "g"], noParams);
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toEqual([]);
    await nextTurn();
    // a, b, c: c starts at T+16, inside the budget; d would start at T+24, past it.
    expect(started).toEqual(["T+0 a", "T+8 b", "T+16 c"]);
    // The next turn ends that one's budget; the one after runs what waited.
    await nextTurn();
    expect(started).toEqual(["T+0 a", "T+8 b", "T+16 c"]);
    await nextTurn();
    expect(started).toEqual(["T+0 a", "T+8 b", "T+16 c", "T+24 d", "T+32 e", "T+40 f"]);
    await all;
    expect(started).toEqual(["T+0 a", "T+8 b", "T+16 c", "T+24 d", "T+32 e", "T+40 f", "T+48 g"]);
    expect(session.running.map((r) => r.identityId)).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
  });

  it("a turn whose other work used most of the budget starts fewer: the budget is the turn's, not the start-up's own", async () => {
    // Seen failing with start-up's own 20 ms slice: a, b and c started in the turn after 15 ms of other work.
    const { session, started, turns, clock } = sessionWith(8);
    // In the check phase the first start waits for: 15 ms of other work under the same budget (a
    // sign-in's next request), then the start-up's turn.
    setImmediate(() => turns.run(() => (clock.now += 15)));
    const all = session.startIdentities(["a", "b", "c"], noParams);
    await nextTurn();
    expect(started).toEqual(["T+15 a"]);
    await nextTurn();
    await nextTurn();
    expect(started).toEqual(["T+15 a", "T+23 b", "T+31 c"]);
    await all;
  });

  it("no identity starts once stopping began, even between turns; nothing to start takes no turn", async () => {
    const { session, started } = sessionWith(15);
    const all = session.startIdentities(["a", "b", "c", "d"], noParams);
    await nextTurn();
    expect(started).toEqual(["T+0 a", "T+15 b"]);
    void session.stop("test");
    await all;
    expect(started).toEqual(["T+0 a", "T+15 b"]);
    let resolved = false;
    void session.startIdentities([], noParams).then(() => (resolved = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(resolved).toBe(true);
  });
});

// A bounded number of identities part-way through start-up (started, `ready` not settled): a slot
// frees when `ready` resolves or rejects, or after the wait (a network that is down never holds
// the rest for ever). Fake timers own every clock here; the session's clock is Date.now (faked).
describe("startIdentities, a bounded number in start-up at once", () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  type Ready = { resolve: () => void; reject: (err: Error) => void };
  /** Identities whose `ready` the test settles; `log` lists starts and settles in the order they happened. */
  function boundedSession(atOnce: number, waitMs: number, onStart: (id: string) => void = () => {}) {
    const log: string[] = [];
    const ready = new Map<string, Ready>();
    session = openLiveSession({
      io: { out: () => {}, err: () => {} },
      afterStop: async () => {},
      onStopFailed: () => {},
      now: () => Date.now(),
      turns: createTurnBudget({ now: () => Date.now() }),
      startAtOnce: atOnce,
      startWaitMs: waitMs,
      startOne: (p: StartIdentityParams) => {
        const id = p.identityId;
        log.push(`T+${Date.now()} start ${id}`);
        const settled = new Promise<void>((resolve, reject) => ready.set(id, { resolve, reject }));
        // What run.ts does with it: a failed identity is reported there, not unhandled here.
        settled.catch(() => {});
        onStart(id);
        return { identityId: id, ready: settled, done: Promise.resolve() } as unknown as RunningIdentity;
      },
    });
    const settle = (id: string, how: "resolve" | "reject") => {
      log.push(`T+${Date.now()} ${how} ${id}`);
      if (how === "resolve") ready.get(id)!.resolve();
      else ready.get(id)!.reject(new Error(`${id} refused`));
    };
    return { session, log, settle };
  }
  const none = () => ({}) as Omit<StartIdentityParams, "identityId" | "abortSignal">;

  it("the default: 150 at once, a slot held at most 10 s", () => {
    expect(START_AT_ONCE).toBe(150);
    expect(START_WAIT_MS).toBe(10_000);
  });

  it("never more than the limit; a slot frees when ready resolves, when it rejects, and after the wait when it never settles", async () => {
    const { session, log, settle } = boundedSession(2, 10_000);
    let finished = false;
    void session.startIdentities(["a", "b", "c", "d", "e"], none).then(() => (finished = true));
    await vi.advanceTimersByTimeAsync(0);
    // T+0: a and b start, c waits for a slot.
    expect(log).toEqual(["T+0 start a", "T+0 start b"]);
    await vi.advanceTimersByTimeAsync(100);
    settle("a", "resolve");
    await vi.advanceTimersByTimeAsync(0);
    // T+100: a is online, c takes its slot.
    expect(log.slice(2)).toEqual(["T+100 resolve a", "T+100 start c"]);
    await vi.advanceTimersByTimeAsync(150);
    settle("b", "reject");
    await vi.advanceTimersByTimeAsync(0);
    // T+250: b could not start, d takes its slot.
    expect(log.slice(4)).toEqual(["T+250 reject b", "T+250 start d"]);
    // c and d never settle: c gives up its slot 10 s after it started (T+10100), e starts then.
    await vi.advanceTimersByTimeAsync(10_100 - 250 - 1);
    expect(log.slice(6)).toEqual([]);
    expect(finished).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(log.slice(6)).toEqual(["T+10100 start e"]);
    expect(finished).toBe(true);
    // Nothing left waiting once every identity started and the turn of the last start ended.
    vi.runOnlyPendingTimers();
    expect(vi.getTimerCount()).toBe(0);
    expect(session.running.map((r) => r.identityId)).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("slots freed in one turn are taken in the next, not among the I/O callbacks that freed them", async () => {
    // The turn that settles many identities' ready is already long: starting the next ones inside
    // it would add a start-up per freed slot to that turn, past any slice.
    let freeingTurn = false;
    const { session, log, settle } = boundedSession(3, 10_000, (id) => {
      if (freeingTurn) log.push(`${id} started in the turn that freed its slot`);
    });
    void session.startIdentities(["a", "b", "c", "d", "e", "f"], none);
    await vi.advanceTimersByTimeAsync(100);
    expect(log).toEqual(["T+0 start a", "T+0 start b", "T+0 start c"]);
    // T+100: a, b and c come online in one turn; the turn ends with the immediate queued first.
    freeingTurn = true;
    setImmediate(() => (freeingTurn = false));
    settle("a", "resolve");
    settle("b", "resolve");
    settle("c", "reject");
    await vi.advanceTimersByTimeAsync(0);
    expect(log.slice(3)).toEqual(["T+100 resolve a", "T+100 resolve b", "T+100 reject c", "T+100 start d", "T+100 start e", "T+100 start f"]);
  });

  it("a network that is down: five identities, two at once, all started after two waits (about N / limit × wait)", async () => {
    const { session, log } = boundedSession(2, 10_000);
    let finished = false;
    void session.startIdentities(["a", "b", "c", "d", "e"], none).then(() => (finished = true));
    await vi.advanceTimersByTimeAsync(30_000);
    expect(log).toEqual(["T+0 start a", "T+0 start b", "T+10000 start c", "T+10000 start d", "T+20000 start e"]);
    expect(finished).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stopping while identities wait for a slot starts no more and leaves no timer", async () => {
    const { session, log } = boundedSession(2, 10_000);
    const all = session.startIdentities(["a", "b", "c", "d", "e"], none);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(log).toEqual(["T+0 start a", "T+0 start b"]);
    void session.stop("test");
    // At once, before any timer runs: the wait for a slot is gone.
    expect(vi.getTimerCount()).toBe(0);
    await all;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(log).toEqual(["T+0 start a", "T+0 start b"]);
  });

  it("stopping while a start waits for the turn budget starts no more, and nothing is armed once that turn is over", async () => {
    const { session, started } = sessionWith(15);
    const all = session.startIdentities(["a", "b", "c", "d"], none);
    // The turn after the one that asked (its check phase), and the microtasks that start a and b.
    vi.runOnlyPendingTimers();
    await flush();
    // a and b: 30 ms of the session's clock, past the 20 ms budget; c waits for a later turn.
    expect(started).toEqual(["T+0 a", "T+15 b"]);
    void session.stop("test");
    await all;
    // The turn's end is all that is armed, and it arms nothing more.
    vi.runOnlyPendingTimers();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(started).toEqual(["T+0 a", "T+15 b"]);
  });

  it("property: for any ready outcomes and timings, each identity starts once, in order, never more than the limit in start-up, and start-up completes", async () => {
    const WAIT = 1_000;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ outcome: fc.constantFrom("resolve", "reject", "never"), afterMs: fc.integer({ min: 0, max: 2_500 }) }), { minLength: 0, maxLength: 30 }),
        fc.option(fc.integer({ min: 0, max: 8_000 }), { nil: undefined }),
        async (atOnce, plans, stopAtMs) => {
          vi.setSystemTime(0);
          const ids = plans.map((_, i) => `i${i}`);
          // Each identity's ready settles `afterMs` after it started (or never).
          const { session, log, settle } = boundedSession(atOnce, WAIT, (id) => {
            const plan = plans[Number(id.slice(1))]!;
            if (plan.outcome !== "never") setTimeout(() => settle(id, plan.outcome as "resolve" | "reject"), plan.afterMs);
          });
          let finished = false;
          void session.startIdentities(ids, none).then(() => (finished = true));
          if (stopAtMs !== undefined) {
            setTimeout(() => {
              log.push(`T+${Date.now()} stop -`);
              void session.stop("test");
            }, stopAtMs);
          }
          await vi.advanceTimersByTimeAsync(ids.length * WAIT + 10_000);
          expect(finished).toBe(true);

          const starts = log.filter((l) => l.includes(" start ")).map((l) => l.split(" ")[2]);
          // Each starts once, in order; all of them unless stopped, and none after the stop.
          expect(starts).toEqual(ids.slice(0, stopAtMs === undefined ? ids.length : starts.length));
          const stopLine = log.findIndex((l) => l.endsWith(" stop -"));
          if (stopLine >= 0) expect(log.slice(stopLine).filter((l) => l.includes(" start "))).toEqual([]);
          // At every start: those started earlier, not settled before it and started less than the wait ago.
          const settledBefore = new Set<string>();
          const startedAt = new Map<string, number>();
          for (const line of log) {
            const [, t, what, id] = /^T\+(\d+) (\w+) (\S+)$/.exec(line)!;
            if (what !== "start") {
              settledBefore.add(id!);
              continue;
            }
            const inFlight = [...startedAt].filter(([other, t0]) => !settledBefore.has(other) && Number(t) - t0 < WAIT).length;
            expect(inFlight).toBeLessThan(atOnce);
            startedAt.set(id!, Number(t));
          }
          // A timer of the start-up is all that could be left (the settles above all ran).
          expect(vi.getTimerCount()).toBe(0);
          session.release();
        },
      ),
      { numRuns: 80 },
    );
  });
});
