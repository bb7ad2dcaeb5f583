// Invariants of the per-sender share, for any history of charges.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { budgetSchema } from "../../src/config/schema.ts";
import { checkBudget } from "../../src/monitor/budget-windows.ts";
import { choosePayer, ownerBudgetEvents, recordSenderCharge, shareLimits, type SenderCharge } from "../../src/monitor/sender-share.ts";
import { msg, T0 } from "./helpers.ts";

const settings = budgetSchema.parse({});
const OWNER = "carol.agentcp.io";
const STRANGERS = ["m1.agentcp.io", "m2.agentcp.io", "m3.agentcp.io"];

describe("sender share (property)", () => {
  it("whatever strangers did, the owner's mention is paid by the owner and fits while their own calls do", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 299_000 }), fc.constantFrom(...STRANGERS)), { maxLength: 200 }), (calls) => {
        let charges: SenderCharge[] = [];
        for (const [at, s] of calls.sort((a, b) => a[0] - b[0])) charges = recordSenderCharge(charges, [T0 + at, 1000, s]);
        const now = T0 + 300_000;
        const choice = choosePayer({ messages: [msg("1", "m1.agentcp.io", "alice?", now, { isMention: true }), msg("2", OWNER, "alice?", now, { isMention: true })], owner: OWNER, charges, settings, share: 0.67, now });
        expect(choice).toEqual({ ok: true, payer: OWNER, owner: true });
        expect(checkBudget({ events: ownerBudgetEvents(charges, OWNER), settings, now, pool: "addressed", nextCallTokens: 1000 }).ok).toBe(true);
      }),
    );
  });

  it("a stranger paying for every call they are allowed never exceeds their share in any 5-min window", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3_600_000 }), { minLength: 1, maxLength: 300 }), (times) => {
        let charges: SenderCharge[] = [];
        const limit = shareLimits(settings, 0.67)["5m"].messages;
        for (const t of times.sort((a, b) => a - b)) {
          const now = T0 + t;
          const c = choosePayer({ messages: [msg(String(t), "m1.agentcp.io", "alice?", now, { isMention: true })], owner: OWNER, charges, settings, share: 0.67, now });
          if (c.ok && c.payer !== undefined) charges = recordSenderCharge(charges, [now, 500, c.payer]);
          const inWindow = charges.filter((x) => x[0] > now - 300_000).length;
          expect(inWindow).toBeLessThanOrEqual(limit);
        }
      }),
      { numRuns: 50 },
    );
  });

  it("any number of strangers' aids, paying for every call they are allowed, never take more than the class share of any 5-min window; a known member always finds the rest", () => {
    const KNOWN = "erin.agentcp.io";
    const isStranger = (s: string) => s !== KNOWN && s !== OWNER;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 3_600_000 }), fc.integer({ min: 0, max: 999 })), { minLength: 1, maxLength: 300 }), (calls) => {
        let charges: SenderCharge[] = [];
        const classLimit = shareLimits(settings, 0.5)["5m"].messages;
        for (const [t, who] of calls.sort((a, b) => a[0] - b[0])) {
          const now = T0 + t;
          const c = choosePayer({ messages: [msg(String(t), `guest-${who}.agentcp.io`, "alice?", now, { isMention: true })], owner: OWNER, charges, settings, share: 0.67, isStranger, strangerShare: 0.5, now });
          if (c.ok && c.payer !== undefined) charges = recordSenderCharge(charges, [now, 500, c.payer]);
          const strangersInWindow = charges.filter((x) => x[0] > now - 300_000 && isStranger(x[2])).length;
          expect(strangersInWindow).toBeLessThanOrEqual(classLimit);
          // erin (no calls of her own yet) may pay, and the whole allowance still has room for her.
          const erin = choosePayer({ messages: [msg("e", KNOWN, "alice?", now, { isMention: true })], owner: OWNER, charges, settings, share: 0.67, isStranger, strangerShare: 0.5, now });
          expect(erin).toEqual({ ok: true, payer: KNOWN, owner: false });
          expect(checkBudget({ events: charges.map((x) => [x[0], x[1], 1]), settings, now, pool: "addressed", nextCallTokens: 500 }).ok).toBe(true);
        }
      }),
      { numRuns: 50 },
    );
  });
});
