// The monitor's send delays under fake timers: a wait ends at its time, at once when a newer
// mention wakes it or the monitor closes, and leaves no timer behind.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DelayWaits } from "../../src/monitor/delay-waits.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function track(p: Promise<void>): { doneAt: number | null } {
  const r = { doneAt: null as number | null };
  void p.then(() => (r.doneAt = Date.now()));
  return r;
}

describe("DelayWaits", () => {
  it("T+0 wait 1000 → ends at T+1000; a woken one ends at the wake (T+200); no timers left", async () => {
    const lifetime = new AbortController();
    const d = new DelayWaits(lifetime.signal);
    const plain = track(d.wait(1000));
    const wake = new AbortController();
    const woken = track(d.wait(5000, wake.signal));
    await vi.advanceTimersByTimeAsync(200);
    wake.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(woken.doneAt).toBe(200);
    expect(plain.doneAt).toBeNull();
    await vi.advanceTimersByTimeAsync(800);
    expect(plain.doneAt).toBe(1000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("closing (clear + lifetime abort) ends every wait at once; a wait after close does not wait", async () => {
    const lifetime = new AbortController();
    const d = new DelayWaits(lifetime.signal);
    const a = track(d.wait(60_000));
    const b = track(d.wait(30_000, new AbortController().signal));
    await vi.advanceTimersByTimeAsync(100);
    d.clear();
    lifetime.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect([a.doneAt, b.doneAt]).toEqual([100, 100]);
    expect(vi.getTimerCount()).toBe(0);
    const late = track(d.wait(10_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(late.doneAt).toBe(100);
  });

  it("zero or an already-woken signal: no wait at all", async () => {
    const d = new DelayWaits(new AbortController().signal);
    const woke = new AbortController();
    woke.abort();
    const a = track(d.wait(0));
    const b = track(d.wait(5000, woke.signal));
    await vi.advanceTimersByTimeAsync(0);
    expect([a.doneAt, b.doneAt]).toEqual([0, 0]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
