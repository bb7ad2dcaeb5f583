import { describe, expect, it } from "vitest";
import { computeBackoffDelay } from "../../src/util/backoff.ts";

describe("computeBackoffDelay", () => {
  it("doubles from baseMs up to maxMs without jitter", () => {
    const s = { baseMs: 500, maxMs: 30000 };
    const delays = [0, 1, 2, 3, 4, 5, 6, 7, 20].map((a) => computeBackoffDelay(a, s, () => 0.99));
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it("removes up to `jitter` of the delay", () => {
    const s = { baseMs: 1000, maxMs: 30000, jitter: 0.3 };
    expect(computeBackoffDelay(2, s, () => 0)).toBe(4000);
    expect(computeBackoffDelay(2, s, () => 0.5)).toBe(3400);
    expect(computeBackoffDelay(2, s, () => 0.999999)).toBe(2800);
  });

  it("clamps jitter to [0, 1] and negative attempts to 0", () => {
    expect(computeBackoffDelay(-3, { baseMs: 100, maxMs: 1000, jitter: 5 }, () => 0.5)).toBe(50);
    expect(computeBackoffDelay(1, { baseMs: 100, maxMs: 1000, jitter: -1 }, () => 0.5)).toBe(200);
  });
});
