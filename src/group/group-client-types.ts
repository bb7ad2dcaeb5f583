// The group client's public surface: parameters, the client interface, events and counters.
import type {
  DispatchBatch,
  DispatchHandler,
  DispatchOutcome,
  DropReason,
  GroupMessage,
  GroupSettings,
  GroupVitality,
  InboundMessage,
  Logger,
} from "../types.ts";

export interface GroupClientParams {
  identityId: string;
  groupId: string;
  identity: { aid: string; name?: string; aliases?: readonly string[]; owner?: string | undefined };
  /**
   * Senders who are people (the identity's owner always is). A mention from anyone else — an
   * agent — waits `agentMentionGapMs`. Absent: every sender counts as a person.
   */
  humans?: readonly string[];
  /**
   * Member types beyond `humans` (the group service; a sender's own agent.md never makes a person):
   * a sender known there as a person is answered without the agent gap too. Config `agents` still wins (it is in them).
   */
  memberTypes?: {
    typeOf(aid: string): { type: "human" | "agent" | "unknown" };
    /** The group's member list as nick keys: `bob: …` addresses bob even before bob has spoken. */
    memberKeysOf?(groupId: string): ReadonlySet<string>;
  };
  /** Effective settings of this (identity, group), from `resolveGroupSettings`. */
  settings: GroupSettings;
  /** The agent side (the monitor). Throwing means "retry later". */
  dispatch: DispatchHandler;
  logger?: Logger;
  /** Local clock for timers, epoch-scaled; default monotonic (`performance.timeOrigin + performance.now()`, read at call time, so fake timers apply). */
  localNow?: () => number;
  /** Persisted state from a previous run. */
  restored?: { cursor?: number; lastSelfSpeakAt?: number | null };
  /** Optional observer (replay, tests, metrics). Exceptions it throws are logged and ignored. */
  onEvent?: (e: GroupClientEvent) => void;
}

/** One of our own messages, as sent (or as echoed back by the group). */
export interface OwnMessage {
  msgId?: string | undefined;
  /** Server time the message was stamped with. */
  timestamp: number;
  content: string;
  /** msg id this message answers: its sender becomes engaged. */
  replyTo?: string | undefined;
}

export type GroupClientEvent =
  /** Entered the buffer gate, with the flags the engine computed. `batchSeq` numbers feed calls. */
  | { type: "accepted"; message: InboundMessage; batchSeq: number; atLocal: number }
  /**
   * Will never be dispatched, for `reason`. `stage` "arrival": refused by feedBufferGate (duplicate,
   * self, or fed after close) — never accepted; "held": accepted earlier, dropped while waiting.
   */
  | { type: "dropped"; msgId: string; sender: string; reason: DropReason; stage: "arrival" | "held"; atLocal: number }
  /** A send of ours was counted (recordOwnMessage or a sent outcome). Echoes arrive as "self" drops. */
  | { type: "own-message"; msgId: string | undefined; timestamp: number }
  | { type: "dispatch-start"; batch: DispatchBatch; atLocal: number }
  | { type: "dispatch-end"; dispatchId: number; atLocal: number; ok: true; outcome: DispatchOutcome }
  /** The agent side threw. `retryInMs` null: the batch was dropped (retries exhausted or closed). */
  | { type: "dispatch-end"; dispatchId: number; atLocal: number; ok: false; error: unknown; retryInMs: number | null };

export interface GroupClientStats {
  /** Messages passed to feedBufferGate (after close too). */
  received: number;
  /** Entered the buffer gate: received minus duplicate, self and after-close drops. */
  accepted: number;
  /** Messages inside dispatches that completed (sent or silent). */
  dispatched: number;
  /** Dispatch attempts started, retries included. */
  dispatches: number;
  /** Attempts that were retries (attempt > 0). */
  retries: number;
  /** Attempts whose handler threw. */
  failures: number;
  mentions: number;
  engaged: number;
  ownMessages: number;
  dropped: Record<DropReason, number>;
  /** Messages buffered or pending right now. */
  held: number;
  dispatching: boolean;
}

export function emptyStats(): GroupClientStats {
  return {
    received: 0,
    accepted: 0,
    dispatched: 0,
    dispatches: 0,
    retries: 0,
    failures: 0,
    mentions: 0,
    engaged: 0,
    ownMessages: 0,
    dropped: { self: 0, duplicate: 0, "over-capacity": 0, "group-closed": 0, "retries-exhausted": 0, "not-for-reply": 0, answered: 0, "refused-sender": 0 },
    held: 0,
    dispatching: false,
  };
}

export interface GroupClient {
  readonly identityId: string;
  readonly groupId: string;
  readonly settings: GroupSettings;
  /** Keywords built at init (seed §4.2), in order. */
  readonly mentionKeywords: readonly string[];
  /** One call = one batch (for `batchesMerged`). Never throws for message content. */
  feedBufferGate(messages: readonly GroupMessage[]): void;
  /**
   * Our reply was sent: lastSelfSpeakAt, my_messages_in_5m, engaged speakers. Idempotent per
   * msg id; the later echo of the same message from the group is not counted again.
   */
  recordOwnMessage(m: OwnMessage): void;
  /** Vitality now (server-time estimate). */
  computeVitality(): GroupVitality;
  /** Server-time estimate now: newest server timestamp seen + local time elapsed since. */
  serverNow(): number;
  /** Speakers engaged right now (lower-cased). */
  engagedSpeakers(): string[];
  /** Highest numeric msg id seen (own echoes included; 0 if none) — persist it, pull after it. */
  readonly cursor: number;
  /** Server time of our newest message, or null. */
  readonly lastSelfSpeakAt: number | null;
  readonly closed: boolean;
  stats(): GroupClientStats;
  /** Resolves when nothing is buffered, pending or dispatching. */
  whenIdle(): Promise<void>;
  /** Same as closeGroupClientForIdentity. */
  close(): Promise<void>;
}
