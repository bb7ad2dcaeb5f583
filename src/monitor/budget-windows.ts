// The three-window budget (P0) per (identity, group): model calls and tokens in the last
// 5 min / 3 h / 24 h, kept as separate allowances — addressed talk (mentions, replies to us,
// engaged follow-ups), unaddressed talk and orphaned questions — so chatter can never spend what
// answering a person needs. Events are pruned on read against an explicit `now` (server time).
import { BUDGET_WINDOW_MS, BUDGET_WINDOWS as WINDOWS } from "../config/budget-windows.ts";
import type { BudgetSettings, BudgetWindowName } from "../types.ts";

const LONGEST_MS = BUDGET_WINDOW_MS["24h"];

/** Which allowance a model call draws from. */
export type BudgetPool = "addressed" | "unaddressed" | "orphan";

/** One model call: [server-time ms, tokens, 1 if it answered addressed talk, 2 an orphaned question, else 0]. */
export type BudgetEvent = [at: number, tokens: number, addressed: number];

export interface WindowUsage {
  messages: number;
  tokens: number;
}

export const poolFlag = (pool: BudgetPool): number => (pool === "addressed" ? 1 : pool === "orphan" ? 2 : 0);
/** The pool flag of a stored event (anything but 1 and 2 is unaddressed). */
const flagOf = (stored: number): number => (stored === 1 || stored === 2 ? stored : 0);

/** Usage of one pool per window. An event exactly `windowMs` old has left the window. */
export function measureBudget(events: readonly BudgetEvent[], now: number, pool: BudgetPool): Record<BudgetWindowName, WindowUsage> {
  const flag = poolFlag(pool);
  const out = {} as Record<BudgetWindowName, WindowUsage>;
  for (const w of WINDOWS) {
    const cutoff = now - BUDGET_WINDOW_MS[w];
    const u: WindowUsage = { messages: 0, tokens: 0 };
    for (const [at, tokens, addressed] of events) {
      if (at <= cutoff || flagOf(addressed) !== flag) continue;
      u.messages++;
      u.tokens += tokens;
    }
    out[w] = u;
  }
  return out;
}

/**
 * The largest used/limit of `pool` over all windows and both limits, clamped to [0, 1] (it is
 * shown to the model as `budget_usage_ratio`); a limit of 0 counts as full.
 */
export function budgetUsageRatio(events: readonly BudgetEvent[], settings: BudgetSettings, now: number, pool: BudgetPool): number {
  if (!settings.enabled) return 0;
  const usage = measureBudget(events, now, pool);
  let ratio = 0;
  for (const w of WINDOWS) {
    const limit = settings[pool][w];
    ratio = Math.max(ratio, share(usage[w].messages, limit.messages), share(usage[w].tokens, limit.tokens));
  }
  return Math.min(1, Math.max(0, ratio));
}

function share(used: number, limit: number): number {
  return limit === 0 ? 1 : used / limit;
}

export type BudgetCheck =
  | { ok: true; ratio: number; pool: BudgetPool }
  | {
      ok: false;
      reason: "over-budget";
      ratio: number;
      pool: BudgetPool;
      window: BudgetWindowName;
      limit: "messages" | "tokens";
      /** Calls or tokens already used in that window. */
      used: number;
      /** The allowance of that window. */
      max: number;
      /** How far this call would go past it: calls (1 + the excess) or tokens already past. */
      over: number;
    };

/**
 * May a model call from `pool` start now? The first exhausted window (shortest first) says no.
 * `nextCallTokens` (the prompt's estimated size) must fit too, so a window is not overrun by the
 * call that would cross it.
 */
export function checkBudget(p: { events: readonly BudgetEvent[]; settings: BudgetSettings; now: number; pool: BudgetPool; nextCallTokens?: number }): BudgetCheck {
  if (!p.settings.enabled) return { ok: true, ratio: 0, pool: p.pool };
  const usage = measureBudget(p.events, p.now, p.pool);
  const ratio = budgetUsageRatio(p.events, p.settings, p.now, p.pool);
  for (const w of WINDOWS) {
    const limit = p.settings[p.pool][w];
    const u = usage[w];
    if (u.messages >= limit.messages) {
      return { ok: false, reason: "over-budget", ratio, pool: p.pool, window: w, limit: "messages", used: u.messages, max: limit.messages, over: u.messages - limit.messages + 1 };
    }
    const next = p.nextCallTokens ?? 0;
    if (u.tokens >= limit.tokens || u.tokens + next > limit.tokens) {
      return { ok: false, reason: "over-budget", ratio, pool: p.pool, window: w, limit: "tokens", used: u.tokens, max: limit.tokens, over: Math.max(1, u.tokens + next - limit.tokens) };
    }
  }
  return { ok: true, ratio, pool: p.pool };
}

/**
 * The orphan allowance as the channel's pace widens it: each window allows at least the agents'
 * share (`share`, orphans.maxAgentShare) of the lines others wrote in it, tokens in proportion.
 * A line share is what keeps the agents from taking a room over (src/monitor/dispatch/gate.ts);
 * the windows' fixed numbers are for a channel of ordinary pace, and on a busy one they would
 * stop the agents long before their share of its lines is reached. A slow channel keeps the
 * configured allowance; an allowance of 0 (the pool turned off) stays 0.
 */
export function paceScaledOrphanAllowance(settings: BudgetSettings, share: number, linesIn: (windowMs: number) => number): BudgetSettings {
  const orphan = { ...settings.orphan };
  for (const w of WINDOWS) {
    const limit = settings.orphan[w];
    if (limit.messages === 0) continue;
    const messages = Math.max(limit.messages, Math.floor(share * linesIn(BUDGET_WINDOW_MS[w])));
    orphan[w] = { messages, tokens: Math.max(limit.tokens, Math.round((limit.tokens / limit.messages) * messages)) };
  }
  return { ...settings, orphan };
}

/** `addressed:5m:messages 15/15 +1`: which allowance, window and limit, and how far over. */
export function describeOverBudget(c: Extract<BudgetCheck, { ok: false }>): string {
  return `${c.pool}:${c.window}:${c.limit} ${c.used}/${c.max} +${c.over}`;
}

/** Appends a call and drops events older than the longest window. Returns a new array. */
export function recordBudgetEvent(events: readonly BudgetEvent[], event: BudgetEvent): BudgetEvent[] {
  return pruneBudgetEvents([...events, event], event[0]);
}

export function pruneBudgetEvents(events: readonly BudgetEvent[], now: number): BudgetEvent[] {
  const cutoff = now - LONGEST_MS;
  return events.filter(([at]) => at > cutoff);
}
