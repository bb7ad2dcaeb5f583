// The group client of one (identity, group): everything before "hand the batch to the agent".
// Buffer gate with a max wait, mention fast path, engaged follow-ups, cooldown, one dispatch at a
// time, retries — and the bookkeeping that every accepted message ends in exactly one dispatch or
// one counted drop. Decisions live in the pure siblings; this file owns timers, lock and state.
import { childLogger, errorFields, silentLogger } from "../log.ts";
import type { DispatchBatch, DispatchHandler, DispatchOutcome, DropReason, GroupMessage, GroupSettings, GroupVitality, InboundMessage, Logger } from "../types.ts";
import { CappedDebounce } from "./capped-debounce.ts";
import { BUDGET_WINDOW_MS } from "../monitor/budget.ts";
import {
  followsUp,
  followUpPaceMs,
  checkMentionDispatch,
  checkNormalDispatch,
  scaledCooldownMs,
  triggerOf,
} from "./dispatch-gate.ts";
import {
  emptyStats,
  type GroupClient,
  type GroupClientEvent,
  type GroupClientParams,
  type GroupClientStats,
  type OwnMessage,
} from "./group-client-types.ts";
import { GroupIngest } from "./ingest.ts";
import { compileSenderAccess } from "./sender-access.ts";
import { allAnswered, answeredThroughOf } from "./answered.ts";
import { compileMentionMatcher, sharedMentionKeywords } from "./mention.ts";
import { HeldMessages } from "./held.ts";
import { RetryBook } from "./retry-book.ts";
import { compareMessages } from "./order.ts";

export type { GroupClient, GroupClientEvent, GroupClientParams, GroupClientStats, OwnMessage } from "./group-client-types.ts";

type Timer = ReturnType<typeof setTimeout>;

class GroupClientImpl implements GroupClient {
  // What every feedBufferGate call reads comes first: fields sit in memory in declaration order,
  // so these share one or two cache lines of a client that is otherwise cold among thousands.
  #closed = false;
  #localNow: () => number;
  /** Counted per message here, beside the other hot fields; the rest of the stats live in #stats. */
  #received = 0;
  #accepted = 0;
  #batchSeq = 0;
  #ingest: GroupIngest;
  /** Accepted, not yet dispatched: buffer gate (incoming) + dispatch gate (pending). */
  #held = new HeldMessages<InboundMessage>();
  #onEvent: ((e: GroupClientEvent) => void) | undefined;
  readonly settings: GroupSettings;
  // Timers hold pending messages, so they keep the process alive until close() clears them.
  /** Buffer gate: trailing debounce (bufferGateMs) capped at bufferGateMaxWaitMs. */
  #bufferGate: CappedDebounce;
  /** Engaged follow-up: armed while a message from an engaged speaker waits. */
  #engagedGate: CappedDebounce;

  readonly identityId: string;
  readonly groupId: string;
  readonly mentionKeywords: readonly string[];
  #handler: DispatchHandler;
  #log: Logger;
  #stats: GroupClientStats = emptyStats();
  /** True from the first over-capacity drop until a dispatch takes what is held (one log line). */
  #overloaded = false;
  #overloadDrops = 0;
  #dispatching = false;
  /** Resolved when the lock is next released (close() waits on them). */
  #unlockWaiters: Array<() => void> = [];
  #mentionWaiting = false;
  #engagedWaiting = false;
  /** Failed tries per held message (each gets its own maxRetries) and the backoff. */
  #retries = new RetryBook<InboundMessage>();
  #dispatchSeq = 0;
  #lastDispatchEndLocal: number | null = null;
  #lastMentionDispatchLocal: number | null = null;
  /** Local start times of recent mention and engaged dispatches (pacing follow-ups, oldest first). */
  #addressedStarts: number[] = [];
  /** Armed while a follow-up waits for its pace (followUpPaceMs). */
  #paceTimer: Timer | undefined;
  /** People, lower-cased (null: everyone is). An agent's mention waits agentMentionGapMs. */
  #humans: ReadonlySet<string> | null;
  readonly #memberTypes: GroupClientParams["memberTypes"];
  /** Only agents' mentions wait: the earliest local time they may dispatch; null otherwise. */
  #agentGapUntil: number | null = null;
  /** Aborted when a mention arrives during the running dispatch (ends its send delay). */
  #mentionController: AbortController | null = null;

  /** Armed when pending messages wait out the cooldown after the last dispatch. */
  #cooldownTimer: Timer | undefined;
  /** Armed after a failed dispatch; the retry takes everything held. */
  #retryTimer: Timer | undefined;
  /** Armed when a mention must wait for mentionMinIntervalMs. */
  #mentionTimer: Timer | undefined;

  #closing: Promise<void> | null = null;
  /** Senders whose refusal was logged already (lower-cased). */
  #refusedLogged = new Set<string>();
  #idleWaiters: Array<() => void> = [];

  constructor(p: GroupClientParams) {
    this.identityId = p.identityId;
    this.groupId = p.groupId;
    this.settings = p.settings;
    this.mentionKeywords = sharedMentionKeywords(p.identity); // one list per identity, not per group
    this.#ingest = new GroupIngest({
      aid: p.identity.aid,
      keywords: this.mentionKeywords,
      matcher: compileMentionMatcher(this.mentionKeywords, p.settings.mentionMatch),
      settings: p.settings,
      restored: p.restored,
      listedMembers: p.memberTypes?.memberKeysOf ? () => p.memberTypes!.memberKeysOf!(p.groupId) : undefined,
      access: compileSenderAccess({ allowFrom: p.settings.allowFrom, denyFrom: p.settings.denyFrom, owner: p.identity.owner }),
    });
    this.#handler = p.dispatch;
    this.#memberTypes = p.memberTypes;
    this.#humans = p.humans ? new Set([...p.humans, ...(p.identity.owner ? [p.identity.owner] : [])].map((h) => h.toLowerCase())) : null;
    this.#log = childLogger(p.logger ?? silentLogger, { identity: p.identityId, group: p.groupId });
    // A monotonic clock on the epoch scale, not the wall clock: timers, cooldowns and waits are
    // durations, and a wall clock set back an hour would hold a message for that hour. Looked up
    // on each call: fake timers replace `performance` after this module may have been loaded.
    this.#localNow = p.localNow ?? (() => performance.timeOrigin + performance.now());
    this.#onEvent = p.onEvent;
    this.#bufferGate = new CappedDebounce(() => this.#onBufferGate(), this.#localNow);
    this.#engagedGate = new CappedDebounce(() => this.#onEngagedGate(), this.#localNow);
  }

  get cursor(): number {
    return this.#ingest.cursor;
  }
  get lastSelfSpeakAt(): number | null {
    return this.#ingest.lastSelfSpeakAt;
  }
  get closed(): boolean {
    return this.#closed;
  }

  feedBufferGate(messages: readonly GroupMessage[]): void {
    const now = this.#localNow();
    if (this.#closed) {
      for (const m of messages) {
        this.#received++;
        this.#drop(m, "group-closed", "arrival");
      }
      return;
    }
    const batchSeq = ++this.#batchSeq;
    let added = 0;
    let mention = false;
    let humanMention = false;
    let engagedSeen = false;
    const n = messages.length;
    this.#received += n;
    for (let i = 0; i < n; i++) {
      const m = messages[i] as GroupMessage;
      const inbound = this.#ingest.admit(m, now);
      if (typeof inbound === "string") {
        this.#drop(m, inbound, "arrival");
        if (inbound === "refused-sender") this.#noteRefused(m.sender);
        // Our own reply came back — what it answered is settled, not answered again.
        if (inbound === "self" && this.#settleAnswered(answeredThroughOf(m.metadata)) && mention) mention = this.#held.holdsMention();
        continue;
      }
      if (inbound.isMention) {
        mention = true;
        if (this.#isHuman(inbound.sender)) humanMention = true;
        this.#stats.mentions++;
      } else if (inbound.engaged) {
        engagedSeen = true;
        this.#stats.engaged++;
      } else if (inbound.maybeOurs) engagedSeen = true;
      this.#held.add(inbound);
      added++;
      if (this.#onEvent) this.#emit({ type: "accepted", message: inbound, batchSeq, atLocal: now });
    }
    this.#ingest.endBatch(now);
    if (added === 0) return this.#checkIdle();
    this.#accepted += added;
    this.#held.batches++;
    if (this.#enforceCapacity() && mention) mention = this.#held.holdsMention();
    if (mention) this.#onMention(now, humanMention);
    else {
      const { bufferGateMs, bufferGateMaxWaitMs, engagedFollowUpMs } = this.settings;
      // A follow-up waits engagedFollowUpMs of quiet, but a person typing line after line to us
      // is answered within twice that of their first line (never later than the buffer's cap).
      if (engagedSeen) this.#engagedGate.touch(now, engagedFollowUpMs, Math.min(bufferGateMaxWaitMs, 2 * engagedFollowUpMs));
      this.#bufferGate.touch(now, bufferGateMs, bufferGateMaxWaitMs);
    }
  }

  recordOwnMessage(m: OwnMessage): void {
    if (!this.#ingest.recordOwn(m, this.#localNow())) return;
    this.#stats.ownMessages++;
    this.#emit({ type: "own-message", msgId: m.msgId, timestamp: m.timestamp });
  }

  computeVitality(): GroupVitality {
    return this.#ingest.vitalityAt(this.#localNow());
  }

  serverNow(): number {
    return this.#ingest.serverNow(this.#localNow());
  }

  engagedSpeakers(): string[] {
    return this.#ingest.engagedSpeakers(this.#localNow());
  }

  stats(): GroupClientStats {
    const s = this.#stats;
    return { ...s, received: this.#received, accepted: this.#accepted, dropped: { ...s.dropped }, held: this.#held.length, dispatching: this.#dispatching };
  }

  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    this.#clearTimers();
    const held = this.#takeHeld().messages;
    for (const m of held) this.#drop(m, "group-closed", "held");
    this.#mentionWaiting = this.#engagedWaiting = false;
    if (held.length > 0) this.#log.log("info", "group.closed-with-held", { dropped: held.length });
    const settled = this.#dispatching ? new Promise<void>((resolve) => this.#unlockWaiters.push(resolve)) : Promise.resolve();
    this.#closing = settled.then(() => this.#checkIdle());
    return this.#closing;
  }

  // ── capacity ───────────────────────────────────────────────────────────────────────────────

  /** Drops the oldest held messages past maxPendingMessages. True if anything was dropped. */
  #enforceCapacity(): boolean {
    const dropped = this.#held.dropOverCapacity(this.settings.maxPendingMessages);
    if (dropped.length === 0) return false;
    for (const m of dropped) this.#drop(m, "over-capacity", "held");
    this.#overloadDrops += dropped.length;
    if (!this.#overloaded) {
      // One line per overload episode, not one per feed: a summary follows when it ends.
      this.#overloaded = true;
      this.#log.log("warn", "group.over-capacity", { dropped: dropped.length, max: this.settings.maxPendingMessages });
    }
    if (this.#held.incoming.length === 0) this.#bufferGate.cancel();
    // A waiting mention (or follow-up) that was dropped is no longer waiting: the running dispatch
    // must not cancel its reply for it, and the next plain batch waits its cooldown.
    if (this.#mentionWaiting && !this.#held.holdsMention()) {
      this.#mentionWaiting = false;
      this.#agentGapUntil = null;
      clearTimeout(this.#mentionTimer);
      this.#mentionTimer = undefined;
    }
    if (this.#engagedWaiting && !this.#held.pending.some(followsUp)) this.#engagedWaiting = false;
    return true;
  }

  #endOverload(): void {
    if (!this.#overloaded) return;
    this.#log.log("warn", "group.over-capacity-ended", { dropped: this.#overloadDrops, max: this.settings.maxPendingMessages });
    this.#overloaded = false;
    this.#overloadDrops = 0;
  }

  // ── the paths to a dispatch ────────────────────────────────────────────────────────────────

  #onBufferGate(): void {
    this.#flushBufferGateToQueue();
    this.#tryDispatch(this.#localNow());
  }

  #onEngagedGate(): void {
    const now = this.#localNow();
    this.#flushBufferGateToQueue();
    // Capacity drops may have taken the engaged messages: then this is plain unaddressed talk.
    if (!this.#held.pending.some(followsUp)) return this.#tryDispatch(now);
    // A follow-up skips the cooldown, but not the lock, a pending retry or a waiting mention.
    if (this.#dispatching) this.#engagedWaiting = true;
    else if (this.#retryTimer === undefined && !this.#mentionWaiting) this.#tryFollowUpDispatch(now);
  }

  /** A follow-up goes now, or when its pace allows (a mention arriving meanwhile takes it along). */
  #tryFollowUpDispatch(now: number): void {
    if (!this.#waitForPace(now)) this.#startDispatch(now);
  }

  /**
   * True when held follow-ups must wait for their pace (followUpPaceMs): the pace timer is armed
   * and dispatches them (with whatever is held then) when the reserve allows.
   */
  #waitForPace(now: number): boolean {
    const budget = this.settings.budget;
    if (!budget.enabled || !this.#held.pending.some(followsUp)) return false;
    const wait = followUpPaceMs({ now, recentStarts: this.#addressedStarts, allowance: budget.addressed["5m"].messages, windowMs: BUDGET_WINDOW_MS["5m"] });
    if (wait <= 0) return false;
    if (this.#paceTimer === undefined) {
      this.#paceTimer = setTimeout(() => {
        this.#paceTimer = undefined;
        if (this.#closed) return;
        if (this.#dispatching) this.#engagedWaiting = true;
        else if (this.#retryTimer === undefined && !this.#mentionWaiting) this.#tryFollowUpDispatch(this.#localNow());
      }, wait);
    }
    return true;
  }

  #flushBufferGateToQueue(): void {
    this.#bufferGate.cancel();
    this.#held.flush();
  }

  /** Normal path: lock, pending retry or mention, then cooldown (scaled by vitality). */
  #tryDispatch(now: number): void {
    if (this.#closed || this.#held.length === 0) return;
    const state = this.#ingest.vitalityAt(now).state;
    const decision = checkNormalDispatch({
      now,
      dispatching: this.#dispatching,
      retryPending: this.#retryTimer !== undefined,
      mentionWaiting: this.#mentionWaiting,
      lastDispatchEndedAt: this.#lastDispatchEndLocal,
      cooldownMs: scaledCooldownMs(this.settings, state),
    });
    if (decision.ok) {
      // Held follow-ups make this an addressed dispatch: it keeps their pace.
      if (!this.#waitForPace(now)) this.#startDispatch(now);
      return;
    }
    if (decision.reason === "cooldown") {
      clearTimeout(this.#cooldownTimer);
      this.#cooldownTimer = setTimeout(() => {
        this.#cooldownTimer = undefined;
        this.#tryDispatch(this.#localNow());
      }, decision.waitMs);
    }
  }

  /**
   * Mention path: everything held goes now, past cooldown. A human's mention is instant; when only
   * agents' mentions wait, they go agentMentionGapMs after the first of them, so two agents cannot
   * answer each other at machine speed. A running dispatch's send delay ends at once.
   */
  #onMention(now: number, human: boolean): void {
    clearTimeout(this.#cooldownTimer);
    this.#cooldownTimer = undefined;
    this.#flushBufferGateToQueue();
    if (human) this.#agentGapUntil = null;
    else if (!this.#mentionWaiting && this.settings.agentMentionGapMs > 0) this.#agentGapUntil = now + this.settings.agentMentionGapMs;
    this.#mentionWaiting = true;
    this.#mentionController?.abort();
    this.#tryMentionDispatch(now);
  }

  #isHuman(sender: string): boolean {
    if (this.#humans === null || this.#humans.has(sender.toLowerCase())) return true;
    return this.#memberTypes?.typeOf(sender).type === "human";
  }


  #tryMentionDispatch(now: number): void {
    if (this.#closed || this.#held.length === 0) {
      this.#mentionWaiting = false;
      return;
    }
    const decision = checkMentionDispatch({
      now,
      dispatching: this.#dispatching,
      retryPending: this.#retryTimer !== undefined,
      lastMentionDispatchAt: this.#lastMentionDispatchLocal,
      mentionMinIntervalMs: this.settings.mentionMinIntervalMs,
      agentGapUntil: this.#agentGapUntil,
    });
    if (decision.ok) return this.#startDispatch(now);
    if (decision.reason === "mention-interval" || decision.reason === "agent-gap") {
      clearTimeout(this.#mentionTimer);
      this.#mentionTimer = setTimeout(() => {
        this.#mentionTimer = undefined;
        this.#tryMentionDispatch(this.#localNow());
      }, decision.waitMs);
    }
  }

  #onRetryTimer(): void {
    this.#retryTimer = undefined;
    if (this.#dispatching || this.#closed) return;
    const now = this.#localNow();
    if (this.#mentionWaiting) this.#tryMentionDispatch(now);
    else this.#startDispatch(now);
  }

  // ── dispatch under the lock ────────────────────────────────────────────────────────────────

  #startDispatch(now: number): void {
    if (this.#closed || this.#dispatching) return;
    const { messages, batchesMerged } = this.#takeHeld();
    if (messages.length === 0) return this.#checkIdle();
    // Reactions and no-reply-expected messages ride along but never start a dispatch on their own.
    // Everything held was taken, as for a dispatch: no timer or waiting flag may outlive it (a
    // stale mention flag would hold back every later message).
    if (messages.every((m) => m.passive !== undefined)) {
      this.#clearTimers();
      this.#mentionWaiting = this.#engagedWaiting = false;
      for (const m of messages) this.#drop(m, "not-for-reply", "held");
      return this.#checkIdle();
    }
    this.#clearTimers();
    this.#mentionWaiting = this.#engagedWaiting = false;
    this.#agentGapUntil = null;
    const mentionController = (this.#mentionController = new AbortController());
    messages.sort(compareMessages);
    const { trigger, mentionCount } = triggerOf(messages);
    if (trigger === "mention") this.#lastMentionDispatchLocal = now;
    if (trigger !== "normal") {
      const starts = this.#addressedStarts;
      starts.push(now);
      while (starts.length > 0 && (starts[0]! <= now - BUDGET_WINDOW_MS["5m"] || starts.length > 1024)) starts.shift();
    }
    const batch: DispatchBatch = {
      identityId: this.identityId,
      groupId: this.groupId,
      dispatchId: ++this.#dispatchSeq,
      messages,
      vitality: this.#ingest.vitalityAt(now),
      mentionInfo: { mentioned: mentionCount > 0, mentionCount, batchesMerged, triggerType: trigger },
      lastSelfSpeakAt: this.#ingest.lastSelfSpeakAt,
      now: this.#ingest.serverNow(now),
      attempt: this.#retries.attemptOf(messages),
      hasPendingMention: () => this.#mentionWaiting,
      mentionSignal: mentionController.signal,
      // What arrived since this dispatch took its batch (the monitor remembers earlier batches).
      heldNow: () => this.#held.snapshot(),
      findOwnEcho: (content, since) => this.#ingest.findOwnEcho(content, since),
      newestMsgId: this.#ingest.cursor,
    };
    this.#dispatching = true;
    this.#stats.dispatches++;
    if (batch.attempt > 0) this.#stats.retries++;
    this.#log.log("debug", "group.dispatch", {
      dispatchId: batch.dispatchId,
      trigger,
      messages: messages.length,
      batchesMerged,
      attempt: batch.attempt,
      vitality: batch.vitality.state,
    });
    this.#emit({ type: "dispatch-start", batch, atLocal: now });
    void this.#runDispatch(batch).catch((err: unknown) => this.#log.log("error", "group.dispatch-bookkeeping-failed", errorFields(err)));
  }

  async #runDispatch(batch: DispatchBatch): Promise<void> {
    try {
      let outcome: DispatchOutcome | undefined;
      let failed = false;
      let error: unknown;
      try {
        outcome = await this.#handler(batch);
      } catch (err) {
        failed = true;
        error = err;
      }
      if (failed) this.#onDispatchFailed(batch, error);
      else this.#onDispatchDone(batch, outcome ?? { sent: false });
    } finally {
      // The lock is released here and nowhere else: no path leaves the group locked.
      this.#dispatching = false;
      this.#mentionController = null;
      this.#lastDispatchEndLocal = this.#localNow();
      const waiters = this.#unlockWaiters;
      this.#unlockWaiters = [];
      for (const resolve of waiters) resolve();
      this.#afterDispatch();
    }
  }

  #onDispatchDone(batch: DispatchBatch, outcome: DispatchOutcome): void {
    this.#retries.succeeded();
    const notHandled = outcome.notHandled?.length ? new Set(outcome.notHandled) : undefined;
    if (notHandled) {
      const back = batch.messages.filter((m) => notHandled.has(m.msgId));
      // Closed meanwhile: dropped like everything else held at close (the next run pulls them again).
      if (this.#closed) for (const m of back) this.#drop(m, "group-closed", "held");
      else {
        // Held again, in front of what arrived meanwhile; a mention among them goes next.
        this.#held.requeue(back, 1);
        if (back.some((m) => m.isMention)) this.#mentionWaiting = true;
        else if (back.some(followsUp)) this.#engagedWaiting = true;
      }
      this.#stats.dispatched += batch.messages.length - back.length;
    } else this.#stats.dispatched += batch.messages.length;
    if (outcome.sent) {
      const sentAt = outcome.sentAt ?? this.serverNow();
      // With its reply target: the echo of this message is "already counted" and is not read again.
      this.recordOwnMessage({ msgId: outcome.sentMsgId, timestamp: sentAt, content: outcome.text ?? "", replyTo: outcome.replyTo });
    }
    this.#emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: this.#localNow(), ok: true, outcome });
  }

  #onDispatchFailed(batch: DispatchBatch, error: unknown): void {
    this.#stats.failures++;
    const fields = { dispatchId: batch.dispatchId, attempt: batch.attempt, messages: batch.messages.length, ...errorFields(error) };
    let retryInMs: number | null = null;
    if (this.#closed) {
      for (const m of batch.messages) this.#drop(m, "group-closed", "held");
      this.#log.log("warn", "group.dispatch-failed-on-close", fields);
    } else {
      const { again, exhausted, retryInMs: wait } = this.#retries.failed(batch.messages, this.settings);
      for (const m of exhausted) this.#drop(m, "retries-exhausted", "held");
      if (exhausted.length > 0) this.#log.log("error", "group.dispatch-retries-exhausted", { ...fields, dropped: exhausted.length });
      if (wait !== null) {
        retryInMs = wait;
        // Back at the front, merged with whatever arrived meanwhile; the next dispatch re-sorts.
        this.#held.requeue(again, batch.mentionInfo.batchesMerged);
        clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => this.#onRetryTimer(), retryInMs);
        this.#log.log("warn", "group.dispatch-failed", { ...fields, retryInMs });
      }
    }
    this.#emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: this.#localNow(), ok: false, error, retryInMs });
  }

  /** After the lock is released: a waiting mention or follow-up goes at once; else cooldown. */
  #afterDispatch(): void {
    if (this.#closed) return this.#checkIdle();
    const now = this.#localNow();
    if (this.#mentionWaiting) this.#tryMentionDispatch(now);
    else if (this.#retryTimer !== undefined) {
      // The retry timer takes everything held when it fires.
    } else if (this.#engagedWaiting) {
      this.#engagedWaiting = false;
      this.#tryFollowUpDispatch(now);
    } else {
      this.#flushBufferGateToQueue();
      this.#tryDispatch(now);
    }
    this.#checkIdle();
  }

  // ── bookkeeping ────────────────────────────────────────────────────────────────────────────

  #takeHeld(): { messages: InboundMessage[]; batchesMerged: number } {
    const held = this.#held.takeAll();
    this.#endOverload();
    this.#bufferGate.cancel();
    this.#engagedGate.cancel();
    return held;
  }

  #clearTimers(): void {
    this.#bufferGate.cancel();
    this.#engagedGate.cancel();
    clearTimeout(this.#cooldownTimer);
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#mentionTimer);
    clearTimeout(this.#paceTimer);
    this.#cooldownTimer = this.#retryTimer = this.#mentionTimer = this.#paceTimer = undefined;
  }

  /** Drops held messages at or below `through` as `answered` (src/group/answered.ts). True if any. */
  #settleAnswered(through: number | undefined): boolean {
    if (through === undefined || this.#held.length === 0) return false;
    const answered = this.#held.removeWhere((h) => allAnswered([h], through));
    for (const h of answered) this.#drop(h, "answered", "held");
    if (answered.length > 0) this.#log.log("info", "group.settled-answered", { messages: answered.length, through });
    return answered.length > 0;
  }

  /** One info line per refused sender (bounded), then only the counter: a flood cannot flood the log. */
  #noteRefused(sender: string): void {
    const key = sender.toLowerCase();
    if (this.#refusedLogged.has(key)) return;
    if (this.#refusedLogged.size >= 256) this.#refusedLogged.clear();
    this.#refusedLogged.add(key);
    this.#log.log("info", "group.sender-refused", { sender, allowFrom: this.settings.allowFrom.length, denyFrom: this.settings.denyFrom.length });
  }

  #drop(m: GroupMessage, reason: DropReason, stage: "arrival" | "held"): void {
    this.#stats.dropped[reason]++;
    if (this.#onEvent) this.#emit({ type: "dropped", msgId: m.msgId, sender: m.sender, reason, stage, atLocal: this.#localNow() });
  }

  #emit(e: GroupClientEvent): void {
    if (!this.#onEvent) return;
    try {
      this.#onEvent(e);
    } catch (err) {
      // An observer's bug must not break the engine's bookkeeping.
      this.#log.log("error", "group.observer-failed", { event: e.type, ...errorFields(err) });
    }
  }

  #isIdle(): boolean {
    return !this.#dispatching && this.#held.length === 0;
  }

  #checkIdle(): void {
    if (this.#idleWaiters.length === 0 || !this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** Builds the per-(identity, group) client: mention matcher, vitality window, empty buffers. */
export function initGroupClientForIdentity(p: GroupClientParams): GroupClient {
  return new GroupClientImpl(p);
}

/**
 * Clears every timer; buffered and pending messages become counted "group-closed" drops (each
 * reported via onEvent); waits for a running dispatch to settle. Later feeds are dropped the same way.
 */
export function closeGroupClientForIdentity(c: GroupClient): Promise<void> {
  return c.close();
}
