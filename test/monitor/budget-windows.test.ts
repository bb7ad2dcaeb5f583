import { describe, expect, it } from "vitest";
import { budgetSchema } from "../../src/config/schema.ts";
import {
  budgetUsageRatio,
  checkBudget,
  describeOverBudget,
  measureBudget,
  pruneBudgetEvents,
  recordBudgetEvent,
  type BudgetEvent,
} from "../../src/monitor/budget-windows.ts";

const defaults = budgetSchema.parse({});
// Small limits that make the window mechanics readable: 5 calls / 2000 tokens per 5 minutes.
const small = budgetSchema.parse({
  unaddressed: { "5m": { messages: 5, tokens: 2000 }, "3h": { messages: 30, tokens: 30000 }, "24h": { messages: 100, tokens: 100000 } },
  addressed: { "5m": { messages: 5, tokens: 2000 }, "3h": { messages: 30, tokens: 30000 }, "24h": { messages: 100, tokens: 100000 } },
});
const MIN = 60_000;
const HOUR = 3_600_000;
const T = 1_767_600_000_000;

describe("measureBudget", () => {
  it("counts calls and tokens per window and per allowance; an event exactly a window old has left it", () => {
    const events: BudgetEvent[] = [
      [T - 24 * HOUR, 999, 0], // left every window
      [T - 23 * HOUR, 100, 0],
      [T - 3 * HOUR, 50, 0], // left 3h exactly
      [T - 2 * HOUR, 200, 1],
      [T - 5 * MIN, 7, 0], // left 5m exactly
      [T - 4 * MIN, 300, 0],
      [T - 1000, 400, 1],
    ];
    expect(measureBudget(events, T, "unaddressed")).toEqual({
      "5m": { messages: 1, tokens: 300 },
      "3h": { messages: 2, tokens: 307 },
      "24h": { messages: 4, tokens: 457 },
    });
    expect(measureBudget(events, T, "addressed")).toEqual({
      "5m": { messages: 1, tokens: 400 },
      "3h": { messages: 2, tokens: 600 },
      "24h": { messages: 2, tokens: 600 },
    });
  });
});

describe("budgetUsageRatio", () => {
  it("is the largest used/limit of the allowance over windows and limits", () => {
    // 5m: 2/5 calls, 1600/2000 tokens → 0.8 is the max.
    expect(budgetUsageRatio([[T - 1000, 800, 0], [T - 2000, 800, 0]], small, T, "unaddressed")).toBe(0.8);
    expect(budgetUsageRatio([[T - 1000, 800, 0], [T - 2000, 800, 0]], small, T, "addressed")).toBe(0);
    expect(budgetUsageRatio([], small, T, "unaddressed")).toBe(0);
  });

  it("stays within [0, 1] however far over the allowance is", () => {
    const burst: BudgetEvent[] = Array.from({ length: 12 }, (_, i) => [T - 1000 * (i + 1), 900, 0]);
    expect(budgetUsageRatio(burst, small, T, "unaddressed")).toBe(1);
  });

  it("is 0 when the budget is disabled, 1 for a zero limit", () => {
    expect(budgetUsageRatio([[T, 5000, 0]], { ...small, enabled: false }, T, "unaddressed")).toBe(0);
    expect(budgetUsageRatio([], { ...small, unaddressed: { ...small.unaddressed, "3h": { messages: 0, tokens: 100 } } }, T, "unaddressed")).toBe(1);
  });
});

describe("checkBudget", () => {
  const fiveCalls: BudgetEvent[] = [1, 2, 3, 4, 5].map((i) => [T - i * MIN + 30_000, 100, 0]);

  it("lets a call through under every limit", () => {
    expect(checkBudget({ events: fiveCalls.slice(0, 4), settings: small, now: T, pool: "unaddressed" })).toEqual({ ok: true, ratio: 0.8, pool: "unaddressed" });
  });

  it("stops at the 5-minute message limit and says which window and how far over", () => {
    const check = checkBudget({ events: fiveCalls, settings: small, now: T, pool: "unaddressed" });
    expect(check).toEqual({ ok: false, reason: "over-budget", ratio: 1, pool: "unaddressed", window: "5m", limit: "messages", used: 5, max: 5, over: 1 });
    if (!check.ok) expect(describeOverBudget(check)).toBe("unaddressed:5m:messages 5/5 +1");
  });

  it("stops at a token limit", () => {
    expect(checkBudget({ events: [[T - 1000, 2300, 0]], settings: small, now: T, pool: "unaddressed" })).toMatchObject({
      ok: false,
      window: "5m",
      limit: "tokens",
      used: 2300,
      max: 2000,
      over: 300,
    });
  });

  it("recovers when the window slides past the calls", () => {
    // Oldest of the five is 4.5 min old; 30 s later it has left the 5-minute window.
    expect(checkBudget({ events: fiveCalls, settings: small, now: T + 30_000, pool: "unaddressed" }).ok).toBe(true);
  });

  it("keeps the allowances apart: unaddressed calls never use up what addressed talk has", () => {
    expect(checkBudget({ events: fiveCalls, settings: small, now: T, pool: "addressed" })).toEqual({ ok: true, ratio: 0, pool: "addressed" });
    const addressed: BudgetEvent[] = fiveCalls.map(([at, tokens]) => [at, tokens, 1]);
    expect(checkBudget({ events: addressed, settings: small, now: T, pool: "addressed" })).toMatchObject({ ok: false, pool: "addressed", window: "5m" });
    expect(checkBudget({ events: addressed, settings: small, now: T, pool: "unaddressed" }).ok).toBe(true);
  });

  it("enforces the 3h and 24h windows too", () => {
    const spread: BudgetEvent[] = Array.from({ length: 30 }, (_, i) => [T - (i + 1) * 5.5 * MIN, 10, 0]);
    expect(checkBudget({ events: spread, settings: small, now: T, pool: "unaddressed" })).toMatchObject({ ok: false, window: "3h", limit: "messages" });
    const day: BudgetEvent[] = Array.from({ length: 100 }, (_, i) => [T - (i + 1) * 14 * MIN, 10, 0]);
    expect(checkBudget({ events: day, settings: small, now: T, pool: "unaddressed" })).toMatchObject({ ok: false, window: "24h", limit: "messages" });
  });

  it("is always ok when disabled", () => {
    expect(checkBudget({ events: fiveCalls, settings: { ...small, enabled: false }, now: T, pool: "unaddressed" })).toEqual({ ok: true, ratio: 0, pool: "unaddressed" });
  });
});

describe("default allowances", () => {
  it("fit a real prompt many times: one call of historyTokenLimit (8000) tokens is a small part of every window", () => {
    for (const pool of ["addressed", "unaddressed"] as const) {
      for (const w of ["5m", "3h", "24h"] as const) {
        const limit = defaults[pool][w];
        expect(limit.tokens).toBeGreaterThanOrEqual(limit.messages * 8000);
      }
    }
  });

  it("unaddressed talk is a small share of what addressed talk may use", () => {
    for (const w of ["5m", "3h", "24h"] as const) {
      expect(defaults.unaddressed[w].messages * 5).toBeLessThanOrEqual(defaults.addressed[w].messages);
    }
  });

  it("an addressed line every 30 s for 6 hours stays inside every addressed window", () => {
    // 10 per 5 minutes, 360 per 3 hours, 720 in the 24 hours.
    expect(defaults.addressed["5m"].messages).toBeGreaterThanOrEqual(10);
    expect(defaults.addressed["3h"].messages).toBeGreaterThanOrEqual(360);
    expect(defaults.addressed["24h"].messages).toBeGreaterThanOrEqual(720);
  });
});

describe("recording", () => {
  it("appends and prunes what is older than 24 h", () => {
    const events: BudgetEvent[] = [[T - 25 * HOUR, 1, 0], [T - HOUR, 2, 0]];
    expect(recordBudgetEvent(events, [T, 3, 1])).toEqual([[T - HOUR, 2, 0], [T, 3, 1]]);
    expect(pruneBudgetEvents(events, T)).toEqual([[T - HOUR, 2, 0]]);
    expect(events).toHaveLength(2);
  });
});
