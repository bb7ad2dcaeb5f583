// The process's sign-in pace: a bounded number at once, the most urgent next (priority read when
// a slot frees), a little jitter only when sign-ins queue, nothing left waiting after a close.
// Fake timers; the timelines are written out (T+… from the first take).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { eventLoopLag, MIN_SIGN_IN_CONCURRENCY, SignInPace, type SignInRelease } from "../../src/network/sign-in-pace.ts";

beforeEach(() => vi.useFakeTimers({ now: 0 }));
afterEach(() => vi.useRealTimers());

/** Takes a slot and records when it was granted. */
function taker(pace: SignInPace, name: string, granted: Array<[string, number]>, priority?: () => number, signal?: AbortSignal) {
  let release: SignInRelease | undefined;
  const done = pace.take(priority, signal).then((r) => {
    granted.push([name, Date.now()]);
    release = r;
  });
  return { done, release: () => release!() };
}

describe("sign-in pace", () => {
  it("an uncontended sign-in starts at once, with no timer", async () => {
    const pace = new SignInPace({ concurrency: 2 });
    const release = await pace.take();
    expect(vi.getTimerCount()).toBe(0);
    expect(pace.active).toBe(1);
    release();
    release(); // a second release does nothing
    expect(pace.active).toBe(0);
  });

  it("holds at most `concurrency`; a freed slot goes to the waiter after its jitter", async () => {
    const granted: Array<[string, number]> = [];
    const pace = new SignInPace({ concurrency: 2, jitterMs: 20, random: () => 0.5 });
    const a = taker(pace, "a", granted);
    const b = taker(pace, "b", granted);
    const c = taker(pace, "c", granted);
    await vi.advanceTimersByTimeAsync(0);
    // T+0: a and b in, c waits.
    expect(granted).toEqual([["a", 0], ["b", 0]]);
    expect([pace.active, pace.waiting]).toEqual([2, 1]);
    await vi.advanceTimersByTimeAsync(100);
    a.release(); // T+100: a done; c holds the slot through its jitter (0.5 × 20 ms)
    expect([pace.active, pace.waiting]).toEqual([2, 0]);
    await vi.advanceTimersByTimeAsync(9);
    expect(granted.map(([n]) => n)).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(1);
    // T+110: c starts.
    expect(granted).toEqual([["a", 0], ["b", 0], ["c", 110]]);
    b.release();
    c.release();
    expect(pace.active).toBe(0);
  });

  it("the most urgent waiter goes next, its priority read when the slot frees (ties: first come)", async () => {
    const granted: Array<[string, number]> = [];
    const pace = new SignInPace({ concurrency: 1, jitterMs: 0 });
    const first = taker(pace, "first", granted);
    let lateActivity = 0;
    const quiet = taker(pace, "quiet", granted, () => 1);
    const quiet2 = taker(pace, "quiet2", granted, () => 1);
    const late = taker(pace, "late", granted, () => lateActivity);
    const mention = taker(pace, "mention", granted, () => Number.MAX_SAFE_INTEGER);
    await vi.advanceTimersByTimeAsync(0);
    lateActivity = 50; // became active while it waited
    first.release();
    await vi.advanceTimersByTimeAsync(0);
    mention.release();
    await vi.advanceTimersByTimeAsync(0);
    late.release();
    await vi.advanceTimersByTimeAsync(0);
    quiet.release();
    await vi.advanceTimersByTimeAsync(0);
    quiet2.release();
    expect(granted.map(([n]) => n)).toEqual(["first", "mention", "late", "quiet", "quiet2"]);
  });

  it("a thousand waiting read their priority once per 100 ms, not once per freed slot (which was half a million reads)", async () => {
    const pace = new SignInPace({ concurrency: 10, jitterMs: 0 });
    let reads = 0;
    const order: number[] = [];
    const holders: SignInRelease[] = [];
    for (let i = 0; i < 1010; i++) {
      void pace
        .take(() => (reads++, i === 1009 ? 1 : 0))
        .then((release) => {
          order.push(i);
          holders.push(release);
        });
    }
    await vi.advanceTimersByTimeAsync(0);
    // T+0: the first ten hold the slots, 1,000 wait.
    expect([pace.active, pace.waiting, reads]).toEqual([10, 1000, 0]);
    // One slot frees every millisecond: T+1 … T+1000.
    for (let t = 1; t <= 1000; t++) {
      holders.shift()!();
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(pace.waiting).toBe(0);
    // The most urgent (the last to ask) went first, then first come, first served.
    expect(order.slice(10, 13)).toEqual([1009, 10, 11]);
    expect(order.at(-1)).toBe(1008);
    // Read at T+1, T+101, … T+901: ten reads of those still waiting (1,000 + 900 + … + 100).
    expect(reads).toBe(5500);
    for (const release of holders) release();
  });

  it("a priority that changed since the last read counts from the next read, at most 100 ms later", async () => {
    const granted: Array<[string, number]> = [];
    const pace = new SignInPace({ concurrency: 1, jitterMs: 0 });
    let urgent = 0;
    const first = taker(pace, "first", granted);
    const a = taker(pace, "a", granted);
    const b = taker(pace, "b", granted);
    const c = taker(pace, "c", granted, () => urgent);
    await vi.advanceTimersByTimeAsync(0);
    first.release(); // T+0: read (a 0, b 0, c 0): a
    await vi.advanceTimersByTimeAsync(50);
    urgent = 9; // T+50: c has a mention now
    a.release(); // T+50: the order read at T+0 still holds: b
    await vi.advanceTimersByTimeAsync(60);
    b.release(); // T+110: read again: c
    await vi.advanceTimersByTimeAsync(0);
    expect(granted).toEqual([["first", 0], ["a", 0], ["b", 50], ["c", 110]]);
    c.release();
  });

  it("with the event loop's delay to go by, the width follows it: one more per freed slot while the loop keeps up, half when it lags", async () => {
    const granted: Array<[string, number]> = [];
    // What the loop's delay was since the last look, in the order the pace looks (one look per freed slot).
    const lags = [0, 0, 0, 80, 0].map((lagMs) => ({ lagMs, cpuShare: 0.95, idled: true }));
    const looks: number[] = [];
    let rested = 0;
    const pace = new SignInPace({ concurrency: 4, maxConcurrency: 6, jitterMs: 0, loopLag: { read: () => (looks.push(Date.now()), lags.shift()!), rest: () => void rested++ } });
    const t = Object.fromEntries(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"].map((n) => [n, taker(pace, n, granted)]));
    await vi.advanceTimersByTimeAsync(0);
    // T+0: a, b, c, d in (width 4), six wait.
    expect(granted).toEqual([["a", 0], ["b", 0], ["c", 0], ["d", 0]]);
    const releaseAt = async (ms: number, name: string) => {
      await vi.advanceTimersByTimeAsync(ms - Date.now());
      t[name]!.release();
      await vi.advanceTimersByTimeAsync(0);
    };
    await releaseAt(10, "a"); // T+10: no lag → width 5: e and f
    await releaseAt(20, "b"); // T+20: no lag → width 6 (the most): g and h
    await releaseAt(30, "c"); // T+30: no lag, width stays 6: i
    await releaseAt(40, "d"); // T+40: 80 ms late, 95 % of a core busy → width 3, at least 4; e, f, g, h, i hold 5: nobody
    expect(pace.width).toBe(4);
    await releaseAt(50, "e"); // T+50: no lag → width 5; f, g, h, i hold 4: j
    expect(granted.map(([n, at]) => `${n}@${at}`).join(" ")).toBe("a@0 b@0 c@0 d@0 e@10 f@10 g@20 h@20 i@30 j@50");
    expect(looks).toEqual([10, 20, 30, 40, 50]);
    expect([pace.width, pace.waiting, rested]).toEqual([5, 0, 1]);
    for (const n of ["f", "g", "h", "i", "j"]) t[n]!.release();
    // Nobody waits: the loop is no longer looked at.
    expect(looks).toHaveLength(5);
  });

  it("the width never falls under 4 however long the loop lags; it holds when the loop was late but not busy (others had the CPU); without a loop to go by it stays as given", async () => {
    const lagging = new SignInPace({ concurrency: 16, jitterMs: 0, loopLag: { read: () => ({ lagMs: 500, cpuShare: 1, idled: true }), rest: () => {} } });
    const crowded = new SignInPace({ concurrency: 16, jitterMs: 0, loopLag: { read: () => ({ lagMs: 500, cpuShare: 0.3, idled: true }), rest: () => {} } });
    const fixed = new SignInPace({ concurrency: 16, jitterMs: 0 });
    for (const pace of [lagging, crowded, fixed]) {
      const releases: SignInRelease[] = [];
      const all = Array.from({ length: 40 }, () => pace.take().then((r) => void releases.push(r)));
      await vi.advanceTimersByTimeAsync(0);
      while (releases.length > 0) {
        releases.shift()!();
        await vi.advanceTimersByTimeAsync(0);
      }
      await Promise.all(all);
    }
    expect([lagging.width, crowded.width, fixed.width]).toEqual([MIN_SIGN_IN_CONCURRENCY, 16, 16]);
    expect(MIN_SIGN_IN_CONCURRENCY).toBe(4);
  });

  it("a priority that throws counts as the lowest and stops nothing", async () => {
    const granted: Array<[string, number]> = [];
    const pace = new SignInPace({ concurrency: 1, jitterMs: 0 });
    const first = taker(pace, "first", granted);
    const broken = taker(pace, "broken", granted, () => {
      throw new Error("bug");
    });
    const ok = taker(pace, "ok", granted, () => 0);
    await vi.advanceTimersByTimeAsync(0);
    first.release();
    await vi.advanceTimersByTimeAsync(0);
    ok.release();
    await vi.advanceTimersByTimeAsync(0);
    broken.release();
    expect(granted.map(([n]) => n)).toEqual(["first", "ok", "broken"]);
  });

  it("closed while waiting, or during its jitter: rejected CLOSED, the slot goes on to the next", async () => {
    const granted: Array<[string, number]> = [];
    const pace = new SignInPace({ concurrency: 1, jitterMs: 20, random: () => 0.5 });
    const first = taker(pace, "first", granted);
    const gone = new AbortController();
    const jittered = new AbortController();
    const waitingClosed = pace.take(() => 0, gone.signal).then(() => "granted", (e: { code?: string }) => e.code);
    const jitterClosed = pace.take(() => 0, jittered.signal).then(() => "granted", (e: { code?: string }) => e.code);
    const last = taker(pace, "last", granted);
    gone.abort();
    expect(await waitingClosed).toBe("CLOSED");
    expect(pace.waiting).toBe(2);
    first.release(); // T+0: the jittered one holds the slot for 10 ms
    await vi.advanceTimersByTimeAsync(5);
    jittered.abort(); // T+5: closed inside its jitter
    expect(await jitterClosed).toBe("CLOSED");
    await vi.advanceTimersByTimeAsync(10);
    // T+15: last started at T+5 + 10 ms of its own jitter.
    expect(granted).toEqual([["first", 0], ["last", 15]]);
    last.release();
    expect(pace.active).toBe(0);
    // Already aborted: refused without waiting.
    await expect(pace.take(() => 0, gone.signal)).rejects.toMatchObject({ code: "CLOSED" });
  });

  it("property: never more than `concurrency` at once, and every sign-in not closed starts", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ holdMs: fc.integer({ min: 0, max: 50 }), priority: fc.integer({ min: 0, max: 3 }), abortAtMs: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }) }), { minLength: 1, maxLength: 25 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        async (concurrency, sign, r) => {
          vi.setSystemTime(0);
          const pace = new SignInPace({ concurrency, jitterMs: 20, random: () => r });
          let peak = 0;
          const outcomes = sign.map((s) => {
            const ctl = new AbortController();
            if (s.abortAtMs !== undefined) setTimeout(() => ctl.abort(), s.abortAtMs);
            return pace.take(() => s.priority, ctl.signal).then(
              (release) => {
                peak = Math.max(peak, pace.active);
                setTimeout(release, s.holdMs);
                return "started";
              },
              () => (ctl.signal.aborted ? "closed" : "lost"),
            );
          });
          await vi.advanceTimersByTimeAsync(10_000);
          const results = await Promise.all(outcomes);
          expect(peak).toBeLessThanOrEqual(concurrency);
          expect(results).not.toContain("lost");
          sign.forEach((s, i) => {
            if (s.abortAtMs === undefined) expect(results[i]).toBe("started");
          });
          expect([pace.active, pace.waiting]).toEqual([0, 0]);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("eventLoopLag (Node's own monitor, real time)", () => {
  it("says nothing when it starts watching, then at least how long the loop was held since the last read, and that it was busy", async () => {
    vi.useRealTimers();
    const lag = eventLoopLag(10);
    try {
      expect(lag.read()).toEqual({ lagMs: 0, cpuShare: 0, idled: false });
      await new Promise((r) => setTimeout(r, 30));
      const until = performance.now() + 150;
      while (performance.now() < until) {
        // the loop held for 150 ms
      }
      await new Promise((r) => setTimeout(r, 30));
      const { lagMs, cpuShare } = lag.read();
      expect(lagMs).toBeGreaterThanOrEqual(100);
      // 150 ms of 210 on the CPU at the least (less if the machine gave the thread less).
      expect(cpuShare).toBeGreaterThan(0);
    } finally {
      lag.rest();
    }
  });
});
