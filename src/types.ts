// Domain types shared by every layer. Nothing here runs; pure modules import only this file.
export type { ChannelConfig, GroupSettings, IdentityConfig, BudgetSettings, BudgetWindowName, ReplyPolicySettings } from "./config/schema.ts";
export type { DedupSettings, DelaySettings, LlmSettings, DirectSettings, DmPolicy } from "./config/schema.ts";
// The kinds of conversation (a group, or one to one) and the pairing hook of direct messages.
export type { ConversationRef, DirectPairing } from "./conversation-ref.ts";
import type { SkipReason } from "./skip-reason.ts";
import type { ConversationRef } from "./conversation-ref.ts";

/** A message as the group service delivers it, normalised at the transport edge. */
export interface GroupMessage {
  /**
   * Stable id inside the group. ACP `msg_id` numbers are carried as decimal strings; replay logs
   * may use any string. Ordering ties are broken with {@link compareMsgIds} semantics.
   */
  msgId: string;
  groupId: string;
  /** Sender aid, e.g. `bob.agentcp.io` (or a nick in replayed logs). */
  sender: string;
  content: string;
  contentType: string;
  /** Server time, epoch ms. Never the local clock. */
  timestamp: number;
  metadata: Readonly<Record<string, unknown>> | null;
}

/**
 * A message accepted by the group client, with the flags the engine computed for it. The client
 * builds every one with all fields present (the optional ones undefined when they do not apply),
 * so they share one shape on the per-message path.
 */
export interface InboundMessage extends GroupMessage {
  /** Named us (keywords) or replied to one of our messages. */
  isMention: boolean;
  /** From a speaker we are engaged with (soft-addressed), and not a mention. */
  engaged: boolean;
  /**
   * Set when the network's metadata marks the message as a reaction or as expecting no reply:
   * it rides along in a batch but is never the reason for a dispatch (src/group/signals.ts).
   */
  passive?: "reaction" | "no-reply-expected";
  /**
   * Why the line is or is not ours: the addressing rule that decided it (src/group/addressing/),
   * with the addressee's name where it has one. Undefined for plain talk.
   */
  addressing?: AddressingReason;
  /**
   * Not marked engaged, but possibly for us: a line from someone in a conversation with us that
   * another member joined, one right after another member's line, or a first answer to our line
   * that named nobody. It follows up as promptly as an engaged line and on the addressed
   * allowance, and the model sees it unmarked.
   */
  maybeOurs?: boolean;
}

/** Why a line is ours or not: the addressing rule that decided it (src/group/addressing/rules.ts), printed as its name, then `:<name>` where it has the addressee (`addressed-other:bob`). */
export type AddressingReason =
  | { readonly rule: "metadata-mention" | "mention" | "reply-to-us" | "answers-our-command" | "bot-command" | "engaged" | "continues" | "private-exchange" | "back-and-forth" | "second-person" }
  | { readonly rule: "after-another-speaker" | "shared-conversation" | "after-our-line" | "continues-after-our-line" | "continues-addressed-other" | "addressed-by-another" }
  | { readonly rule: "named-us" | "addressed-other" | "named-other" | "mention-to-other"; readonly name: string };

export type VitalityState = "DORMANT" | "COOLING" | "ACTIVE" | "HEATED";

export interface GroupVitality {
  state: VitalityState;
  messagesIn5m: number;
  uniqueSpeakersIn5m: number;
  myMessagesIn5m: number;
  /** Server-time estimate at which this was computed. */
  updatedAt: number;
}

/** `orphan`: an open question nobody answered, taken after its grace period (src/group/orphans.ts). */
export type TriggerType = "normal" | "mention" | "engaged" | "orphan";

export interface MentionInfo {
  mentioned: boolean;
  mentionCount: number;
  batchesMerged: number;
  triggerType: TriggerType;
}

export type ReplyType = "reaction" | "short" | "normal" | "long";

/** One hand-over from the group client to the agent side: facts taken when the dispatch started. */
export interface DispatchBatch {
  identityId: string;
  groupId: string;
  /** Monotonic per (identity, group), starting at 1. */
  dispatchId: number;
  /** Sorted by timestamp, then msg id. Never empty. */
  messages: readonly InboundMessage[];
  vitality: GroupVitality;
  mentionInfo: MentionInfo;
  /** Server-time estimate when the dispatch started. */
  now: number;
  /** 0 for the first attempt, then 1.. for re-queued retries. */
  attempt: number;
  /** Aborted when a mention arrives while this dispatch runs: a send delay ends at once. */
  mentionSignal?: AbortSignal;
  /** The newest numeric msg id the group client had seen when this batch was taken (0: none). */
  newestMsgId?: number;
  /** What the last attempt handed back with its `retry` outcome: the agent side's own work, returned to it unread. */
  carried?: RetryCarry;
  /** Trigger `orphan`: the msg id of the open question (the batch's one message) nobody answered. */
  orphan?: string;
}

/** One of our own messages as the group saw it: the prompt shows it, a reply to it is to us. */
export interface OwnReply {
  /** Server time. */
  timestamp: number;
  text: string;
  msgId?: string | undefined;
}

/** Weak-dedup memory of our recent replies, newest last (src/monitor/dedup.ts compares against it). */
export interface ReplyMemory {
  /** 64-bit xxhash of each normalised text, hex. */
  hashes: readonly string[];
  /** Normalised texts, parallel to `hashes`. */
  texts: readonly string[];
}

/** The weak-dedup key of one text: its normalised form and that form's hash. */
export interface DedupKey {
  hash: string;
  normalized: string;
}

/**
 * What we said in one group, as the agent side may read it. One record per group, written by
 * the group client alone: when a dispatch settles with a `sent` outcome, when a line of ours is
 * sent by other means, and when one of our messages comes back from the group (src/group/memory.ts).
 */
export interface GroupMemoryView {
  /** Server time of our newest message here, or null if we never spoke. */
  readonly lastSelfSpeakAt: number | null;
  /** The newest msg id our own returning messages say they answered (`answered_through`): everything up to it is settled. */
  readonly answeredThrough: number | undefined;
  /** Our recent replies, oldest first. */
  readonly ownReplies: readonly OwnReply[];
  /** The weak-dedup memory of our recent replies. */
  readonly replies: ReplyMemory;
  /** Our message with exactly this text, seen coming back from the group at or after `since` (server time). */
  findEcho(content: string, since: number): { msgId: string; timestamp: number } | undefined;
}

/**
 * What the agent side may read of its group while a dispatch runs: facts, never a way to change
 * the group client. The group client passes one with every dispatch; it stays current while the
 * dispatch runs (a mention arriving meanwhile shows in `mentionWaiting`).
 */
export interface GroupContext {
  readonly memory: GroupMemoryView;
  /** A mention arrived after this dispatch started and waits for the lock: the next dispatch answers it. */
  readonly mentionWaiting: boolean;
  /** Set when the conversation ended while this dispatch ran (a direct exchange the peer closed, or a limit): nothing more is sent. */
  readonly endedBy?: string | undefined;
  /** What arrived after this dispatch took its batch and waits for the next one, oldest first (a copy). */
  held(): readonly InboundMessage[];
}

/** How soon a reply should go: the send delay's range (src/monitor/delay.ts). */
export type DelayHint = "fast" | "normal" | "slow";

/** A two-phase decision (`decision: "two-phase"`): the batch it was made for, and what it chose. */
export interface TwoPhaseDecision {
  readonly ids: ReadonlySet<string>;
  readonly replyType: ReplyType;
  readonly delayHint: DelayHint;
}

/** A reply ready to go out; carried with its batch's retry when its send did not (surely) get through. */
export interface UnsentReply {
  /** The batch it answers. */
  ids: ReadonlySet<string>;
  text: string;
  replyType: ReplyType;
  replyTo: string | undefined;
  /** What the reply carries: `reply_to`, `answered_through`, or a reaction's `group_meta`. */
  metadata: Record<string, unknown> | undefined;
  /** Its weak-dedup key: the reply memory takes it once the reply is sent. */
  key: DedupKey;
  /** A person spoke in the batch: sending ends the agents' chain. */
  hasHuman: boolean;
  ratio: number;
  /** The last send may have reached the server: look for its echo first. */
  maybeSent: boolean;
  /** Server time before the first send attempt: an echo is no older. */
  since: number;
  /** Newest msg id known before the first send attempt: a stored copy has a higher id. */
  afterMsgId: number | undefined;
  /** The dispatch whose model call wrote it (a retry delivers it under another dispatch id). */
  writtenBy: number;
  /** The open question the reply took the floor for (src/monitor/floor.ts), if any. */
  claim?: string;
}

/** The agent side's work on a batch, handed back with a `retry` outcome so the retry neither asks the model nor pays again. */
export interface RetryCarry {
  /** A reply whose send did not (surely) get through: the retry delivers it. */
  reply?: UnsentReply;
  /** Two-phase: the decision made (and paid for) before the reply call failed. */
  decision?: TwoPhaseDecision;
}

export type { SkipReason } from "./skip-reason.ts";

/** A reply went out. The group client records it in the group's memory (src/group/memory.ts). */
export interface SentOutcome {
  kind: "sent";
  /** The text that was sent (after trimming). */
  text: string;
  replyType: ReplyType;
  budgetRatio?: number;
  /** msg id the group service gave our reply, when known. */
  msgId?: string;
  /** Server time our reply was stamped with, when known. */
  sentAt?: number;
  /** msg id our reply answers (also sent as `metadata.reply_to`), when it answers one. */
  replyTo?: string;
  /** The weak-dedup key of `text`: the reply memory takes it. Absent: the reply is not compared against later. */
  key?: DedupKey;
  /**
   * Messages of the batch this dispatch did not look at (it delivered a reply prepared for an
   * earlier batch, and they arrived since): held again for the next dispatch, not settled.
   */
  notHandled?: readonly string[];
}

/** Nothing was sent, for `reason` — a silence is a success. The batch is settled. */
export interface SkippedOutcome {
  kind: "skipped";
  reason: SkipReason;
  /** The reply type decided before the skip, if it got that far. */
  replyType?: ReplyType;
  budgetRatio?: number;
}

/** A failure a retry may fix: the group client holds the batch again, with backoff, and hands `carry` back with it. */
export interface RetryOutcome {
  kind: "retry";
  reason: "send-failed" | "backend-failed";
  /** What failed (the group client logs it with its retry; never shown in the group). */
  error: unknown;
  carry?: RetryCarry;
  replyType?: ReplyType;
  budgetRatio?: number;
}

/** What the agent side did with a dispatch. */
export type DispatchOutcome = SentOutcome | SkippedOutcome | RetryOutcome;

/**
 * The agent side of a dispatch, as the group client sees it: the batch, and what it may read of
 * the group meanwhile. Handled conditions come back as outcomes; a throw is a bug, which the
 * group client retries like a `retry` outcome.
 */
export type DispatchHandler = (batch: DispatchBatch, group: GroupContext) => Promise<DispatchOutcome>;

/**
 * `not-for-reply`: a reaction or no-reply-expected message with nothing to ride along with;
 * `answered`: held when our own reply to it came back (echo or history after a restart);
 * `refused-sender`: from a sender the group's `allowFrom` / `denyFrom` refuses (never the owner).
 */
export type DropReason = "self" | "duplicate" | "over-capacity" | "group-closed" | "retries-exhausted" | "not-for-reply" | "answered" | "refused-sender";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the provider's prefix cache, when reported. */
  cachedTokens?: number;
}

/** One model call: a stable system prompt plus the dynamic body. */
export interface GenerateRequest {
  identityId: string;
  /** The group, or a direct conversation's key (`dm:<peer>`); `conversation` says which. */
  groupId: string;
  /** A direct conversation (the peer in it), or a group; absent: a group. */
  conversation?: ConversationRef;
  dispatchId: number;
  trigger: TriggerType;
  /** Stable ACP prefix + "\n\n" + situation block. */
  systemPrompt: string;
  /** The stable ACP prefix alone (for back-ends that cache it separately). */
  stablePrefix: string;
  /** Formatted messages of this dispatch. */
  body: string;
  /** The original messages, for back-ends that need sender/ids (the OpenClaw host). */
  messages: readonly InboundMessage[];
  mentionInfo: MentionInfo;
  replyType: ReplyType;
  maxChars: number;
  /** Set for the first call of `decision: "two-phase"`. */
  phase?: "decide" | "reply";
  signal?: AbortSignal;
}

export interface GenerateResult {
  text: string;
  usage?: Usage;
}

/**
 * What became of a reply the model wrote in dispatch `dispatchId`: sent with the text the group
 * saw (trimmed, cleaned), or not sent and why (a duplicate, a newer mention, a failed send, …).
 * A retried send reports again; the last report holds.
 */
export type ReplySettlement = { identityId: string; groupId: string; dispatchId: number; conversation?: ConversationRef } & (
  | { sent: true; text: string }
  | { sent: false; reason: SkipReason }
);

/** A model (or a host that runs one) behind one call. */
export interface AgentBackend {
  readonly name: string;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** Told what became of each reply it wrote, so a kept history holds what the group saw. */
  settled?(s: ReplySettlement): void;
  close?(): Promise<void>;
}

/** Sending into a group, as the monitor sees it. */
export interface GroupSender {
  /**
   * The group service accepts reaction messages (`group_meta.msg_type: "reaction"`): a reply of
   * type reaction that answers a message is then sent as a reaction to it. Off when absent.
   */
  readonly reactions?: boolean;
  sendMessage(params: {
    groupId: string;
    content: string;
    metadata?: Record<string, unknown>;
  }): Promise<{ msgId: string; timestamp: number }>;
  /**
   * Looks in the group's history (after `afterMsgId`) for our own message with exactly this text:
   * asked before sending again a reply whose last send may have been stored. Resolves undefined
   * when it is not there; rejects when the history cannot be read (then nothing is sent).
   */
  findSent?(params: { groupId: string; content: string; afterMsgId: number }): Promise<{ msgId: string; timestamp: number } | undefined>;
}

export type LogLevel = "debug" | "info" | "warn" | "error";

/** Structured log sink: one event name plus flat fields. Errors go here, never into a group. */
export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void;
}

/** Time source for the shell layers. Pure code takes `now` as a parameter instead. */
export interface Clock {
  now(): number;
}

export interface BudgetWindowUsage {
  /** [server-time ms, tokens] per recorded model call, oldest first. */
  events: Array<[number, number]>;
}

/** What survives a restart per (identity, group) — seed 004 lifecycle. */
export interface PersistedGroupState {
  version: 1;
  /** Highest msg id accepted by the group client (ACP numeric cursor), 0 if none. */
  cursor: number;
  lastSelfSpeakAt: number | null;
  /** Recent reply hashes (hex), newest last. */
  replyHashes: string[];
  /** Recent reply texts (normalised), newest last, for near-duplicate checks. */
  replyTexts: string[];
  /** Model calls: [server-time ms, tokens, addressed(0|1)], oldest first, ≤ 24 h. */
  budgetEvents: Array<[number, number, number]>;
  /** Addressed model calls by who paid: [server-time ms, tokens, sender lower-cased], ≤ 24 h. Absent in older files. */
  senderCharges?: Array<[number, number, string]>;
  /** Consecutive agent-only exchanges (bot-loop guard). */
  agentChain: number;
}
