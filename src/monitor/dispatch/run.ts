// One dispatch as it moves through the pipeline (pipeline.ts): the batch, what the group lets it
// read (its context: our memory, what arrived since, a newer mention), the lines of other members
// in it, the one decision record it fills in, and how it ends — sent, skipped for a reason, or
// handed back for a retry. finish() logs the record and hands it to the observer.
import { addressingLabel } from "../../group/addressing/reason.ts";
import type { MemberTypes } from "../../members/member-types.ts";
import type {
  AgentBackend,
  ConversationRef,
  DispatchBatch,
  DispatchOutcome,
  GroupContext,
  GroupMemoryView,
  GroupSender,
  GroupSettings,
  IdentityConfig,
  InboundMessage,
  Logger,
  ReplySettlement,
  ReplyType,
  RetryCarry,
  RetryOutcome,
  SkipReason,
} from "../../types.ts";
import type { PromptParts } from "../assemble.ts";
import { decisionLogFields, type DispatchDecision } from "../decision.ts";
import type { FloorContext } from "../floor.ts";
import type { MonitorState } from "../monitor-state.ts";
import { poolOf } from "./budget-gate.ts";

/** What every step reads: the monitor's wiring (monitor.ts) and the state it keeps between dispatches. */
export interface MonitorContext {
  readonly identityId: string;
  readonly groupId: string;
  /** A group, or a direct conversation: which steps apply (pipeline.ts), which prompt, what the back-end is told. */
  readonly conversation: ConversationRef;
  readonly identity: IdentityConfig;
  readonly settings: GroupSettings;
  /** The longest message the group service accepts (its max_message_size, UTF-16 code units), when it said. */
  readonly maxMessageUnits: number | undefined;
  readonly log: Logger;
  /** One draw in [0, 1) per delayed send. */
  readonly random: () => number;
  /** Local clock for time elapsed inside a dispatch. */
  readonly localNow: () => number;
  readonly memberTypes: MemberTypes;
  readonly floorContext: FloorContext;
  readonly backend: AgentBackend;
  readonly sender: GroupSender;
  /** Aborted by close(): cancels in-flight model calls and pending send delays. */
  readonly lifetime: AbortSignal;
  readonly state: MonitorState;
  buildPrompt(batch: DispatchBatch, memory: GroupMemoryView, overrides?: { replyType?: ReplyType; budgetRatio?: number }): PromptParts;
  /** After every change worth persisting. */
  emitState(): void;
  /** Runs an observer's callback; what it throws is logged as `event`, never passed on. */
  safeCall(fn: () => void, event: string): void;
  /** The observer of the one record per dispatch (called as a method of the monitor's params). */
  readonly hooks: { onDecision?: ((record: DispatchDecision) => void) | undefined };
}

/** How a step ends the dispatch: the reason, and a machine-readable detail. */
export interface Skip {
  readonly skip: SkipReason;
  readonly detail?: string | undefined;
}

/** A back-end failure a retry may fix: the batch goes back to the group client, with what it carries. */
export interface Again {
  readonly again: "backend-failed";
  readonly error: unknown;
  readonly carry?: RetryCarry | undefined;
}

/** How a step ends the dispatch early. */
export type Stop = Skip | Again;

/** A step's result: the next step's input, or how the dispatch ends. */
export type Step<T extends object> = T | Stop;

export function isStop<T extends object>(r: T | Stop): r is Stop {
  return "skip" in r || "again" in r;
}

/** How a dispatch ends: the outcome handed back to the group client. */
export type Ended = DispatchOutcome;

export class DispatchRun {
  readonly m: MonitorContext;
  readonly batch: DispatchBatch;
  /** What the group lets this dispatch read: our memory, what arrived since, a newer mention. */
  readonly group: GroupContext;
  readonly record: DispatchDecision;
  /** Other members' lines of the batch (ours left out). */
  readonly others: InboundMessage[];
  readonly batchIds: ReadonlySet<string>;
  /** The budget gate found this dispatch joining in unprompted (unaddressed talk, or the room's reaction to us). */
  unprompted = false;
  /**
   * The dispatch whose model call wrote the reply now in play (this one, or the one whose reply
   * a retry delivers): the back-end hears what the group saw of it.
   */
  #writtenBy: number | undefined;
  readonly #started: number;

  constructor(m: MonitorContext, batch: DispatchBatch, group: GroupContext) {
    this.m = m;
    this.batch = batch;
    this.group = group;
    this.#started = m.localNow();
    this.record = {
      identityId: m.identityId,
      groupId: m.groupId,
      dispatchId: batch.dispatchId,
      attempt: batch.attempt,
      trigger: batch.mentionInfo.triggerType,
      at: batch.now,
      messageIds: batch.messages.map((msg) => msg.msgId),
      addressing: batch.messages.flatMap((msg) => (msg.addressing ? [{ msgId: msg.msgId, reason: addressingLabel(msg.addressing) }] : [])),
      vitality: batch.vitality,
      mentionInfo: batch.mentionInfo,
      replyType: null,
      budgetRatio: 0,
      budgetPool: poolOf(batch),
      modelCalls: 0,
      tokens: 0,
      delayMs: 0,
      agentChain: m.state.agentChain,
      outcome: { kind: "skipped", reason: "silent" },
      ...(m.conversation.kind === "direct" ? { conversation: m.conversation } : {}),
    };
    const selfAid = m.identity.aid;
    this.others = batch.messages.filter((msg) => msg.sender !== selfAid);
    this.batchIds = new Set(batch.messages.map((msg) => msg.msgId));
  }

  /** A reply is in play, written by dispatch `dispatchId`: from now on its back-end hears what became of it. */
  replyWrittenBy(dispatchId: number): void {
    this.#writtenBy = dispatchId;
  }

  /** Server-time estimate now: the batch's server time plus the local time elapsed since the dispatch began. */
  nowAt(): number {
    return this.batch.now + (this.m.localNow() - this.#started);
  }

  /** Everything seen around the batch: earlier batches' lines (`before`), the batch, what arrived since. */
  seenAround(before: readonly InboundMessage[]): InboundMessage[] {
    return [...before, ...this.others, ...this.group.held()];
  }

  /** Ends the dispatch: the back-end hears what became of its reply, the record is logged and observed. */
  finish(outcome: DispatchOutcome, detail?: string): Ended {
    const { m, record } = this;
    if (this.#writtenBy !== undefined) {
      const about = { identityId: m.identityId, groupId: m.groupId, dispatchId: this.#writtenBy, ...(m.conversation.kind === "direct" ? { conversation: m.conversation } : {}) };
      const s: ReplySettlement = outcome.kind === "sent" ? { ...about, sent: true, text: outcome.text } : { ...about, sent: false, reason: outcome.reason };
      m.safeCall(() => m.backend.settled?.(s), "monitor.backend-settled-failed");
    }
    if (outcome.kind === "sent") m.state.replySent(this.unprompted);
    record.outcome = outcome;
    if (detail) record.detail = detail;
    record.agentChain = m.state.agentChain;
    // A back-end failure that is retried is at info: the group client's warn line, with the error
    // and when the batch goes again, is the one loud line of the attempt.
    const failed = outcome.kind === "skipped" || (outcome.kind === "retry" && outcome.reason === "send-failed");
    const level = failed && (outcome.reason === "send-failed" || outcome.reason === "backend-failed") ? "warn" : "info";
    m.log.log(level, "monitor.dispatch", decisionLogFields(record));
    m.safeCall(() => m.hooks.onDecision?.(record), "monitor.on-decision-failed");
    return outcome;
  }

  /** Ends the dispatch without a reply, for the step's reason. */
  skip(s: Skip): Ended {
    const { record } = this;
    return this.finish({ kind: "skipped", reason: s.skip, budgetRatio: record.budgetRatio, ...(record.replyType ? { replyType: record.replyType } : {}) }, s.detail);
  }

  /**
   * Ends the dispatch early: a skip, or a back-end failure handed back for a retry. A retry is
   * recorded like every other end (`retry-with-batch`): the call was made and may have cost; the
   * group client then logs when the batch goes again.
   */
  stop(s: Stop): Ended {
    if ("skip" in s) return this.skip(s);
    const { record } = this;
    const outcome: RetryOutcome = { kind: "retry", reason: s.again, error: s.error, budgetRatio: record.budgetRatio, ...(s.carry ? { carry: s.carry } : {}), ...(record.replyType ? { replyType: record.replyType } : {}) };
    return this.finish(outcome, "retry-with-batch");
  }
}
