// The send-delay gate (P0): people do not answer instantly, and a pause lets the conversation
// move on — after it, the monitor asks again whether the reply is still wanted.
import type { DelayHint, DelaySettings, ReplyType } from "../types.ts";
import { describeOverBudget, type BudgetCheck } from "./budget-windows.ts";

const HINT_BY_REPLY_TYPE: Record<ReplyType, DelayHint> = { reaction: "fast", short: "fast", normal: "normal", long: "slow" };

export function delayHintFor(replyType: ReplyType): DelayHint {
  return HINT_BY_REPLY_TYPE[replyType];
}

/**
 * Milliseconds to wait before sending. `random` is one draw in [0, 1). Mentions are answered
 * without delay unless `onMention` is set: the person asked and is waiting.
 */
export function chooseDelayMs(p: { settings: DelaySettings; hint: DelayHint; mentioned: boolean; random: number }): number {
  if (!p.settings.enabled || (p.mentioned && !p.settings.onMention)) return 0;
  const [min, max] = p.hint === "fast" ? p.settings.fastMs : p.hint === "normal" ? p.settings.normalMs : p.settings.slowMs;
  const r = Math.min(Math.max(p.random, 0), 1);
  return Math.round(min + r * (max - min));
}

export type AfterDelayCheck = { ok: true } | { ok: false; reason: "group-closed" | "newer-mention" | "over-budget"; detail?: string };

/**
 * The re-check after the delay. A newer mention cancels an unprompted reply (the next dispatch
 * answers the mention with fresher context) but never the answer to a mention itself: skipping
 * that would leave the first person unanswered, since the next batch no longer holds their message.
 */
export function checkAfterDelay(p: {
  closed: boolean;
  answeringMention: boolean;
  newerMention: boolean;
  budget: BudgetCheck;
}): AfterDelayCheck {
  if (p.closed) return { ok: false, reason: "group-closed" };
  if (p.newerMention && !p.answeringMention) return { ok: false, reason: "newer-mention" };
  if (!p.budget.ok) return { ok: false, reason: "over-budget", detail: describeOverBudget(p.budget) };
  return { ok: true };
}
