// What one (identity, group) monitor remembers between dispatches. The snapshot survives restarts:
// the last speak time, the reply memory, budget events, the agent chain and who paid for addressed
// calls. The rest lives for this run: our recent replies, other members' recent lines, a reply that
// did not get out, a two-phase decision already paid for, the newest msg id our replies answered.
import type { InboundMessage, PersistedGroupState, ReplyType } from "../types.ts";
import type { BudgetEvent } from "./budget.ts";
import type { ReplyMemory } from "./dedup.ts";
import type { DelayHint } from "./delay.ts";
import type { OwnReply } from "./prompt.ts";
import type { PreparedReply } from "./send-gates.ts";
import type { SenderCharge } from "./sender-share.ts";

/** The monitor's part of {@link PersistedGroupState}. */
export type MonitorSnapshot = Pick<PersistedGroupState, "lastSelfSpeakAt" | "replyHashes" | "replyTexts" | "budgetEvents" | "agentChain" | "senderCharges">;

/** A two-phase decision: the batch it was made for, and what it chose. */
export interface TwoPhaseDecision {
  readonly ids: ReadonlySet<string>;
  readonly replyType: ReplyType;
  readonly delayHint: DelayHint;
}

export class MonitorState {
  lastSelfSpeakAt: number | null;
  memory: ReplyMemory;
  budgetEvents: BudgetEvent[];
  agentChain: number;
  /** Who paid for each addressed call (sender-share.ts): one sender's share is bounded. */
  senderCharges: SenderCharge[];
  ownReplies: OwnReply[] = [];
  /** Other members' latest messages from earlier batches (dedup.othersHistorySize), oldest first. */
  othersRecent: InboundMessage[] = [];
  /** A reply whose send never left, or may not have: delivered by the batch's retry, without a new model call. */
  unsent: PreparedReply | undefined;
  /** Two-phase: the decision of a batch whose reply call failed, so its retry neither decides nor pays again. */
  decided: TwoPhaseDecision | undefined;
  /** The newest msg id our own returning messages say they answered (src/group/answered.ts). */
  answeredThrough: number | undefined;

  constructor(restored: Partial<PersistedGroupState> | undefined) {
    this.lastSelfSpeakAt = restored?.lastSelfSpeakAt ?? null;
    this.memory = { hashes: restored?.replyHashes ?? [], texts: restored?.replyTexts ?? [] };
    this.budgetEvents = [...(restored?.budgetEvents ?? [])].map((e) => [e[0], e[1], e[2]]);
    this.agentChain = restored?.agentChain ?? 0;
    this.senderCharges = (restored?.senderCharges ?? []).map((c) => [c[0], c[1], c[2]]);
  }

  snapshot(): MonitorSnapshot {
    return {
      lastSelfSpeakAt: this.lastSelfSpeakAt,
      replyHashes: [...this.memory.hashes],
      replyTexts: [...this.memory.texts],
      budgetEvents: this.budgetEvents.map((e) => [e[0], e[1], e[2]]),
      agentChain: this.agentChain,
      // Left out while empty: a group nobody addressed saves what it saved before.
      ...(this.senderCharges.length > 0 ? { senderCharges: this.senderCharges.map((c): [number, number, string] => [c[0], c[1], c[2]]) } : {}),
    };
  }
}
