// The three-window budget (P0) per (identity, group): model calls and tokens in the last
// 5 min / 3 h / 24 h. Events are pruned on read against an explicit `now` (server time).
import type { BudgetSettings, BudgetWindowName } from "../types.ts";

export const BUDGET_WINDOW_MS: Readonly<Record<BudgetWindowName, number>> = {
  "5m": 5 * 60_000,
  "3h": 3 * 3600_000,
  "24h": 24 * 3600_000,
};
const WINDOWS = ["5m", "3h", "24h"] as const satisfies readonly BudgetWindowName[];
const LONGEST_MS = BUDGET_WINDOW_MS["24h"];

/** One model call: [server-time ms, tokens, 1 if it ran on the mention reserve else 0]. */
export type BudgetEvent = [at: number, tokens: number, reserve: number];

export interface WindowUsage {
  messages: number;
  tokens: number;
  reserveMessages: number;
}

/** Usage per window. An event exactly `windowMs` old has left the window. */
export function measureBudget(events: readonly BudgetEvent[], now: number): Record<BudgetWindowName, WindowUsage> {
  const out = {} as Record<BudgetWindowName, WindowUsage>;
  for (const w of WINDOWS) {
    const cutoff = now - BUDGET_WINDOW_MS[w];
    const u: WindowUsage = { messages: 0, tokens: 0, reserveMessages: 0 };
    for (const [at, tokens, reserve] of events) {
      if (at <= cutoff) continue;
      u.messages++;
      u.tokens += tokens;
      u.reserveMessages += reserve;
    }
    out[w] = u;
  }
  return out;
}

/** The largest used/limit over all windows and both limits; a limit of 0 counts as full. */
export function budgetUsageRatio(events: readonly BudgetEvent[], settings: BudgetSettings, now: number): number {
  if (!settings.enabled) return 0;
  const usage = measureBudget(events, now);
  let ratio = 0;
  for (const w of WINDOWS) {
    const limit = settings.windows[w];
    ratio = Math.max(ratio, share(usage[w].messages, limit.messages), share(usage[w].tokens, limit.tokens));
  }
  return ratio;
}

function share(used: number, limit: number): number {
  return limit === 0 ? 1 : used / limit;
}

export type BudgetCheck =
  | { ok: true; ratio: number; useReserve: boolean }
  | { ok: false; reason: "over-budget"; ratio: number; window: BudgetWindowName; limit: "messages" | "tokens" };

/**
 * May a model call start now? Over budget in any window → no, unless the dispatch answers a
 * mention and every exhausted window still has mention reserve left. A dispatch that answers no
 * mention counts as over once it reaches `unaddressedShare` of a window's limits.
 */
export function checkBudget(p: {
  events: readonly BudgetEvent[];
  settings: BudgetSettings;
  now: number;
  mentioned: boolean;
}): BudgetCheck {
  if (!p.settings.enabled) return { ok: true, ratio: 0, useReserve: false };
  const usage = measureBudget(p.events, p.now);
  const ratio = budgetUsageRatio(p.events, p.settings, p.now);
  let firstOver: { window: BudgetWindowName; limit: "messages" | "tokens" } | undefined;
  let reserveLeft = true;
  // Unaddressed talk may spend only its share of each window, so a busy group cannot use up
  // what answering a mention needs.
  const share = p.mentioned ? 1 : p.settings.unaddressedShare;
  for (const w of WINDOWS) {
    const limit = p.settings.windows[w];
    const u = usage[w];
    const over =
      u.messages >= Math.floor(limit.messages * share) ? "messages" : u.tokens >= limit.tokens * share ? "tokens" : undefined;
    if (!over) continue;
    firstOver ??= { window: w, limit: over };
    if (u.reserveMessages >= p.settings.mentionReserve) reserveLeft = false;
  }
  if (!firstOver) return { ok: true, ratio, useReserve: false };
  if (p.mentioned && reserveLeft && p.settings.mentionReserve > 0) return { ok: true, ratio, useReserve: true };
  return { ok: false, reason: "over-budget", ratio, ...firstOver };
}

/** Appends a call and drops events older than the longest window. Returns a new array. */
export function recordBudgetEvent(events: readonly BudgetEvent[], event: BudgetEvent): BudgetEvent[] {
  return pruneBudgetEvents([...events, event], event[0]);
}

export function pruneBudgetEvents(events: readonly BudgetEvent[], now: number): BudgetEvent[] {
  const cutoff = now - LONGEST_MS;
  return events.filter(([at]) => at > cutoff);
}

// Han, kana, Hangul and fullwidth forms: about one token per character in common tokenizers.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/gu;

/** Token estimate when the back-end reports no usage: ~4 chars per token, CJK ~1 per char. */
export function estimateTokens(text: string): number {
  if (text === "") return 0;
  const cjk = text.match(CJK)?.length ?? 0;
  return cjk + Math.ceil((text.length - cjk) / 4);
}
