// The one structured record per dispatch (seed 003 §10.5): what the group looked like, what we
// decided, and why every skip happened.
import type { ConversationRef, DispatchOutcome, GroupVitality, MentionInfo, ReplyType, TriggerType } from "../types.ts";
import type { BudgetPool } from "./budget-windows.ts";

export interface DispatchDecision {
  identityId: string;
  groupId: string;
  dispatchId: number;
  attempt: number;
  trigger: TriggerType;
  /** Server-time estimate when the dispatch started. */
  at: number;
  messageIds: string[];
  /** Why lines were or were not taken as ours (`mention`, `engaged`, `addressed-other:bob`, …); plain talk is left out. */
  addressing: Array<{ msgId: string; reason: string }>;
  vitality: GroupVitality;
  mentionInfo: MentionInfo;
  /** Null when a gate stopped the dispatch before the reply type was decided. */
  replyType: ReplyType | null;
  replyTypeReason?: string;
  budgetRatio: number;
  /** The allowance the dispatch draws from: addressed talk or unaddressed talk. */
  budgetPool: BudgetPool;
  modelCalls: number;
  /** Tokens of this dispatch's model calls (reported usage, else estimated). */
  tokens: number;
  delayMs: number;
  /** Agent-only exchanges in a row after this dispatch (bot-loop guard). */
  agentChain: number;
  outcome: DispatchOutcome;
  /** Who the addressed call is charged to (lower-cased aid), when someone addressed us. */
  payer?: string;
  /** Machine-readable detail of a skip or downgrade, e.g. `unaddressed:5m:messages 2/2 +1`, `near-duplicate:0.86`. */
  detail?: string;
  /** Set for a direct conversation (its `groupId` is then the conversation's key); absent: a group. */
  conversation?: ConversationRef;
}

/** Flat log fields for `monitor.dispatch`. */
export function decisionLogFields(d: DispatchDecision): Record<string, unknown> {
  return {
    ...(d.conversation?.kind === "direct" ? { direct: d.conversation.peer } : {}),
    dispatchId: d.dispatchId,
    attempt: d.attempt,
    trigger: d.trigger,
    msgIds: d.messageIds,
    ...(d.addressing.length > 0 ? { addressing: d.addressing.map((a) => `${a.msgId}=${a.reason}`) } : {}),
    vitality: d.vitality.state,
    messagesIn5m: d.vitality.messagesIn5m,
    uniqueSpeakersIn5m: d.vitality.uniqueSpeakersIn5m,
    myMessagesIn5m: d.vitality.myMessagesIn5m,
    mentioned: d.mentionInfo.mentioned,
    mentionCount: d.mentionInfo.mentionCount,
    batchesMerged: d.mentionInfo.batchesMerged,
    replyType: d.replyType,
    // Clamped: a window overspent by a restart or a config change must not log 7.5 (or NaN).
    budgetRatio: Number.isFinite(d.budgetRatio) ? Math.round(Math.min(1, Math.max(0, d.budgetRatio)) * 1000) / 1000 : 1,
    budgetPool: d.budgetPool,
    ...(d.payer !== undefined ? { payer: d.payer } : {}),
    modelCalls: d.modelCalls,
    tokens: d.tokens,
    delayMs: d.delayMs,
    agentChain: d.agentChain,
    outcome: d.outcome.kind === "sent" ? "sent" : "skipped",
    skipReason: d.outcome.kind === "sent" ? null : d.outcome.reason,
    ...(d.detail ? { detail: d.detail } : {}),
  };
}
