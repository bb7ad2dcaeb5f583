import { describe, expect, it } from "vitest";
import { budgetSchema } from "../../src/config/schema.ts";
import {
  budgetUsageRatio,
  checkBudget,
  estimateTokens,
  measureBudget,
  pruneBudgetEvents,
  recordBudgetEvent,
  type BudgetEvent,
} from "../../src/monitor/budget.ts";

// These tests pin the full-window mechanics; unaddressedShare has its own tests below.
const defaults = budgetSchema.parse({ unaddressedShare: 1 });
const MIN = 60_000;
const HOUR = 3_600_000;
const T = 1_767_600_000_000;

describe("measureBudget", () => {
  it("counts calls and tokens per window; an event exactly a window old has left it", () => {
    const events: BudgetEvent[] = [
      [T - 24 * HOUR, 999, 0], // left every window
      [T - 23 * HOUR, 100, 0],
      [T - 3 * HOUR, 50, 0], // left 3h exactly
      [T - 2 * HOUR, 200, 1],
      [T - 5 * MIN, 7, 0], // left 5m exactly
      [T - 4 * MIN, 300, 0],
      [T - 1000, 400, 1],
    ];
    expect(measureBudget(events, T)).toEqual({
      "5m": { messages: 2, tokens: 700, reserveMessages: 1 },
      "3h": { messages: 4, tokens: 907, reserveMessages: 2 },
      "24h": { messages: 6, tokens: 1057, reserveMessages: 2 },
    });
  });
});

describe("budgetUsageRatio", () => {
  it("is the largest used/limit over windows and limits", () => {
    // 5m: 2/5 calls, 1600/2000 tokens → 0.8 is the max.
    expect(budgetUsageRatio([[T - 1000, 800, 0], [T - 2000, 800, 0]], defaults, T)).toBe(0.8);
    expect(budgetUsageRatio([], defaults, T)).toBe(0);
  });

  it("is 0 when the budget is disabled, 1 for a zero limit", () => {
    expect(budgetUsageRatio([[T, 5000, 0]], { ...defaults, enabled: false }, T)).toBe(0);
    expect(budgetUsageRatio([], { ...defaults, windows: { ...defaults.windows, "3h": { messages: 0, tokens: 100 } } }, T)).toBe(1);
  });
});

describe("checkBudget", () => {
  const fiveCalls: BudgetEvent[] = [1, 2, 3, 4, 5].map((i) => [T - i * MIN + 30_000, 100, 0]);

  it("lets a call through under every limit", () => {
    expect(checkBudget({ events: fiveCalls.slice(0, 4), settings: defaults, now: T, mentioned: false })).toEqual({ ok: true, ratio: 0.8, useReserve: false });
  });

  it("stops at the 5-minute message limit and names window and limit", () => {
    expect(checkBudget({ events: fiveCalls, settings: defaults, now: T, mentioned: false })).toEqual({
      ok: false,
      reason: "over-budget",
      ratio: 1,
      window: "5m",
      limit: "messages",
    });
  });

  it("stops at a token limit", () => {
    expect(checkBudget({ events: [[T - 1000, 2000, 0]], settings: defaults, now: T, mentioned: false })).toMatchObject({
      ok: false,
      window: "5m",
      limit: "tokens",
    });
  });

  it("recovers when the window slides past the calls", () => {
    // Oldest of the five is 4.5 min old; 30 s later it has left the 5-minute window.
    expect(checkBudget({ events: fiveCalls, settings: defaults, now: T + 30_000, mentioned: false }).ok).toBe(true);
  });

  it("lets a mention through on the reserve until the reserve of that window is used", () => {
    expect(checkBudget({ events: fiveCalls, settings: defaults, now: T, mentioned: true })).toEqual({ ok: true, ratio: 1, useReserve: true });
    const oneReserve: BudgetEvent[] = [...fiveCalls, [T - 1000, 100, 1]];
    expect(checkBudget({ events: oneReserve, settings: defaults, now: T, mentioned: true }).ok).toBe(true);
    const twoReserve: BudgetEvent[] = [...oneReserve, [T - 500, 100, 1]];
    expect(checkBudget({ events: twoReserve, settings: defaults, now: T, mentioned: true })).toMatchObject({ ok: false, reason: "over-budget" });
    expect(checkBudget({ events: fiveCalls, settings: { ...defaults, mentionReserve: 0 }, now: T, mentioned: true }).ok).toBe(false);
  });

  it("enforces the 3h and 24h windows too", () => {
    const spread: BudgetEvent[] = Array.from({ length: 30 }, (_, i) => [T - (i + 1) * 5.5 * MIN, 10, 0]);
    expect(checkBudget({ events: spread, settings: defaults, now: T, mentioned: false })).toMatchObject({ ok: false, window: "3h", limit: "messages" });
    const day: BudgetEvent[] = Array.from({ length: 100 }, (_, i) => [T - (i + 1) * 14 * MIN, 10, 0]);
    expect(checkBudget({ events: day, settings: defaults, now: T, mentioned: false })).toMatchObject({ ok: false, window: "24h", limit: "messages" });
  });

  it("is always ok when disabled", () => {
    expect(checkBudget({ events: fiveCalls, settings: { ...defaults, enabled: false }, now: T, mentioned: false })).toEqual({ ok: true, ratio: 0, useReserve: false });
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

describe("estimateTokens", () => {
  it("counts ~4 Latin chars per token and one per CJK char", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcdefgh")).toBe(2);
    expect(estimateTokens("abcdefghi")).toBe(3);
    expect(estimateTokens("你好世界")).toBe(4);
    expect(estimateTokens("hi 你好")).toBe(3);
  });
});

describe("checkBudget: unaddressedShare", () => {
  const shared = budgetSchema.parse({});
  const calls = (n: number): BudgetEvent[] => Array.from({ length: n }, (_, i) => [T - 1000 * (i + 1), 10, 0] as BudgetEvent);

  it("defaults to 0.5: unaddressed dispatches stop at floor(5 × 0.5) = 2 calls in 5 minutes", () => {
    expect(shared.unaddressedShare).toBe(0.5);
    expect(checkBudget({ events: calls(1), settings: shared, now: T, mentioned: false }).ok).toBe(true);
    expect(checkBudget({ events: calls(2), settings: shared, now: T, mentioned: false })).toMatchObject({ ok: false, window: "5m", limit: "messages" });
  });

  it("a mention still has the full limit, without touching the reserve", () => {
    expect(checkBudget({ events: calls(4), settings: shared, now: T, mentioned: true })).toEqual({ ok: true, ratio: 0.8, useReserve: false });
  });

  it("applies to tokens too: 1000 of 2000 tokens is the unaddressed share", () => {
    expect(checkBudget({ events: [[T - 1000, 999, 0]], settings: shared, now: T, mentioned: false }).ok).toBe(true);
    expect(checkBudget({ events: [[T - 1000, 1000, 0]], settings: shared, now: T, mentioned: false })).toMatchObject({ ok: false, limit: "tokens" });
  });
});
