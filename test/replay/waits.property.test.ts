// Waits counts each wait in pages of counters (or by value when it is not a whole number of ms in
// range): whatever the waits, its max, nearest-rank percentiles and counts above a wait are those
// of the sorted list of every wait added.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { percentile, Waits } from "../../src/replay/addressed.ts";

/** Waits as a replay meets them: mostly whole ms within minutes, some far apart, a few negative or fractional. */
const wait = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 300_000 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 3000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 2 ** 31 - 2000, max: 2 ** 31 + 2000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -5000, max: -1 }) },
  { weight: 1, arbitrary: fc.double({ min: -1e3, max: 1e7, noNaN: true }) },
);

describe("Waits", () => {
  it("max, percentiles and counts above are the sorted waits' (with addAll merging two sets)", () => {
    fc.assert(
      fc.property(fc.array(wait, { maxLength: 300 }), fc.array(wait, { maxLength: 100 }), fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 5 }), (a, b, ps) => {
        const w = new Waits();
        for (const ms of a) w.add(ms);
        const other = new Waits();
        for (const ms of b) other.add(ms);
        w.addAll(other);
        const sorted = [...a, ...b].map((ms) => (Object.is(ms, -0) ? 0 : ms)).sort((x, y) => x - y);
        expect(w.max).toBe(sorted.length ? sorted.at(-1) : 0);
        for (const p of ps) expect(w.percentile(p)).toBe(percentile(sorted, p));
        for (const ms of [...sorted.slice(0, 3), 0, 1023, 1024, 60_000]) expect(w.countAbove(ms)).toBe(sorted.filter((x) => x > ms).length);
      }),
      { numRuns: 300 },
    );
  });
});
