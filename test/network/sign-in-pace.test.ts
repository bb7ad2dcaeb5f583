// The process's sign-in pace: a bounded number at once, the most urgent next (priority read when
// a slot frees), a little jitter only when sign-ins queue, nothing left waiting after a close.
// Fake timers; the timelines are written out (T+… from the first take).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { SignInPace, type SignInRelease } from "../../src/network/sign-in-pace.ts";

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
