// Property: however calls arrive, a budget gate that lets a call through only when checkBudget
// says so keeps every window of every allowance within its limits, never negative, and the ratio
// shown to the model within [0, 1].
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { budgetSchema } from "../../src/config/schema.ts";
import { budgetUsageRatio, checkBudget, measureBudget, recordBudgetEvent, type BudgetEvent, type BudgetPool } from "../../src/monitor/budget-windows.ts";

const T = 1_767_600_000_000;
const callArb = fc.record({
  gapMs: fc.integer({ min: 0, max: 20 * 60_000 }),
  pool: fc.constantFrom<BudgetPool>("addressed", "unaddressed"),
  tokens: fc.integer({ min: 0, max: 9000 }),
});
const windowArb = fc.record({ messages: fc.integer({ min: 0, max: 20 }), tokens: fc.integer({ min: 0, max: 60_000 }) });
const allowanceArb = fc.record({ "5m": windowArb, "3h": windowArb, "24h": windowArb });

describe("budget invariants (fast-check)", () => {
  it("never over a window, never negative, ratio in [0, 1]", () => {
    fc.assert(
      fc.property(allowanceArb, allowanceArb, fc.array(callArb, { maxLength: 200 }), (addressed, unaddressed, calls) => {
        const settings = budgetSchema.parse({ addressed, unaddressed });
        let events: BudgetEvent[] = [];
        let now = T;
        for (const c of calls) {
          now += c.gapMs;
          const check = checkBudget({ events, settings, now, pool: c.pool, nextCallTokens: c.tokens });
          expect(check.ratio).toBeGreaterThanOrEqual(0);
          expect(check.ratio).toBeLessThanOrEqual(1);
          if (check.ok) events = recordBudgetEvent(events, [now, c.tokens, c.pool === "addressed" ? 1 : 0]);
          for (const pool of ["addressed", "unaddressed"] as const) {
            const usage = measureBudget(events, now, pool);
            for (const w of ["5m", "3h", "24h"] as const) {
              expect(usage[w].messages).toBeGreaterThanOrEqual(0);
              expect(usage[w].tokens).toBeGreaterThanOrEqual(0);
              expect(usage[w].messages).toBeLessThanOrEqual(settings[pool][w].messages);
              expect(usage[w].tokens).toBeLessThanOrEqual(settings[pool][w].tokens);
            }
            const ratio = budgetUsageRatio(events, settings, now, pool);
            expect(ratio >= 0 && ratio <= 1).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
