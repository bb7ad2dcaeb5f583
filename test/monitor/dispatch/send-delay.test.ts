// The monitor's send delay under fake timers: a wait ends at its time, at once when a newer
// mention wakes it or the monitor closes, never rejects, and leaves no timer behind.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sendDelay } from "../../../src/monitor/dispatch/wait.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** When the wait ended (fake ms), or null while it runs; a rejection would leave `failed` set. */
function track(p: Promise<void>): { doneAt: number | null; failed: unknown } {
  const r = { doneAt: null as number | null, failed: undefined as unknown };
  void p.then(
    () => (r.doneAt = Date.now()),
    (err: unknown) => (r.failed = err),
  );
  return r;
}

describe("sendDelay", () => {
  it("T+0 wait 1000 → ends at T+1000; a woken one ends at the wake (T+200); no timers left", async () => {
    const lifetime = new AbortController();
    const plain = track(sendDelay(1000, lifetime.signal, undefined));
    const wake = new AbortController();
    const woken = track(sendDelay(5000, lifetime.signal, wake.signal));
    await vi.advanceTimersByTimeAsync(200);
    wake.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(woken.doneAt).toBe(200);
    expect(plain.doneAt).toBeNull();
    await vi.advanceTimersByTimeAsync(800);
    expect(plain.doneAt).toBe(1000);
    expect([plain.failed, woken.failed]).toEqual([undefined, undefined]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("closing (lifetime abort) at T+100 ends every wait at once; a wait after close does not wait", async () => {
    const lifetime = new AbortController();
    const a = track(sendDelay(60_000, lifetime.signal, undefined));
    const b = track(sendDelay(30_000, lifetime.signal, new AbortController().signal));
    await vi.advanceTimersByTimeAsync(100);
    expect(vi.getTimerCount()).toBe(2);
    lifetime.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect([a.doneAt, b.doneAt]).toEqual([100, 100]);
    expect(vi.getTimerCount()).toBe(0);
    const late = track(sendDelay(10_000, lifetime.signal, undefined));
    await vi.advanceTimersByTimeAsync(0);
    expect(late.doneAt).toBe(100);
    expect([a.failed, b.failed, late.failed]).toEqual([undefined, undefined, undefined]);
  });

  it("zero or an already-woken signal: no wait at all", async () => {
    const lifetime = new AbortController();
    const woke = new AbortController();
    woke.abort();
    const a = track(sendDelay(0, lifetime.signal, undefined));
    const b = track(sendDelay(5000, lifetime.signal, woke.signal));
    await vi.advanceTimersByTimeAsync(0);
    expect([a.doneAt, b.doneAt]).toEqual([0, 0]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
