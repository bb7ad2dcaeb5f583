import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { redialBackoff } from "../../src/network/session-channel.ts";
import { computeBackoffDelay } from "../../src/util/backoff.ts";
import { nextMessageId } from "../../src/network/message-id.ts";

describe("network invariants (fast-check)", () => {
  it("message ids strictly increase whatever the clock does (same ms, steps back, jumps)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.array(fc.integer({ min: -5000, max: 5000 }), { maxLength: 200 }), (start, steps) => {
        let now = start;
        let last = 0;
        const ids: number[] = [];
        for (const step of steps) {
          now = Math.max(0, now + step);
          last = nextMessageId(last, now);
          ids.push(last);
        }
        for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!);
        // Never behind the clock: an id is at least the time it was made.
        if (ids.length > 0) expect(ids.at(-1)!).toBeGreaterThanOrEqual(now);
      }),
    );
  });

  it("redial backoff: within [step/2, step], never above the ceiling, never shrinking as failures grow", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        (failures, random, baseMs, maxMs) => {
          const settings = redialBackoff({ baseMs, maxMs });
          const d = computeBackoffDelay(failures - 1, settings, () => random);
          const step = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
          expect(d).toBeGreaterThanOrEqual(Math.floor(step / 2));
          expect(d).toBeLessThanOrEqual(Math.ceil(step));
          expect(computeBackoffDelay(failures, settings, () => random)).toBeGreaterThanOrEqual(d);
        },
      ),
    );
  });
});
