import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CappedDebounce } from "../../src/group/capped-debounce.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("CappedDebounce", () => {
  it("fires gateMs after the last touch", async () => {
    const fired: number[] = [];
    const d = new CappedDebounce(() => fired.push(Date.now()), () => Date.now());
    d.touch(0, 3000, 15_000);
    await vi.advanceTimersByTimeAsync(1000);
    d.touch(1000, 3000, 15_000);
    expect(d.deadline).toBe(4000);
    await vi.advanceTimersByTimeAsync(3000);
    expect(fired).toEqual([4000]);
    expect(d.armed).toBe(false);
  });

  it("never later than maxWait after the first touch", async () => {
    const fired: number[] = [];
    const d = new CappedDebounce(() => fired.push(Date.now()), () => Date.now());
    for (let t = 0; t <= 20_000; t += 1000) {
      await vi.advanceTimersByTimeAsync(t - Date.now());
      d.touch(t, 3000, 15_000);
    }
    // T+15 fired (cap of the first burst); the touches from T+15 on started a new one.
    expect(fired).toEqual([15_000]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fired).toEqual([15_000, 23_000]);
  });

  it("cancel clears the timer and the cap", async () => {
    const fired: number[] = [];
    const d = new CappedDebounce(() => fired.push(Date.now()), () => Date.now());
    d.touch(0, 3000, 5000);
    d.cancel();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(4000);
    d.touch(4000, 3000, 5000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fired).toEqual([7000]);
  });
});
