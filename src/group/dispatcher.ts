// One dispatch at a time: take everything held, build the batch, run the handler under the lock,
// and settle its outcome — sent (recorded in the group's memory) or skipped, with anything it did
// not handle held again; or retried with backoff (retry-book.ts), carrying back what the agent
// side handed over. The lock is released in one finally and nowhere else.
import { errorFields } from "../log.ts";
import type { DispatchBatch, DispatchHandler, GroupContext, GroupMemoryView, InboundMessage, RetryCarry, SentOutcome, SkippedOutcome } from "../types.ts";
import { compareMessages } from "../wire/msg-id.ts";
import type { ClientState } from "./client-state.ts";
import { triggerOf } from "./dispatch-gate.ts";
import type { DispatchGates } from "./gates.ts";
import type { HeldMessages } from "./held.ts";
import type { Overload } from "./overload.ts";
import { RetryBook } from "./retry-book.ts";

/** What the dispatcher tells the gates, and asks of them. */
export type DispatchTiming = Pick<DispatchGates, "mentionWaiting" | "taken" | "reset" | "dispatchStarted" | "heldAgain" | "retryIn" | "dispatchEnded" | "afterDispatch" | "afterOrphanDispatch" | "orphanWaitsForShare">;

/** What the agent side reads of the group while a dispatch runs (types.ts GroupContext): facts only. */
class DispatchContext implements GroupContext {
  readonly memory: GroupMemoryView;
  readonly #gates: Pick<DispatchTiming, "mentionWaiting">;
  readonly #held: HeldMessages<InboundMessage>;

  constructor(memory: GroupMemoryView, gates: Pick<DispatchTiming, "mentionWaiting">, held: HeldMessages<InboundMessage>) {
    this.memory = memory;
    this.#gates = gates;
    this.#held = held;
  }

  get mentionWaiting(): boolean {
    return this.#gates.mentionWaiting;
  }

  held(): readonly InboundMessage[] {
    return this.#held.snapshot();
  }
}

export class Dispatcher {
  readonly #s: ClientState;
  readonly #gates: DispatchTiming;
  readonly #overload: Pick<Overload, "end">;
  readonly #handler: DispatchHandler;
  readonly #memory: GroupMemoryView;
  /** Made on the first dispatch: most groups never dispatch. */
  #context: DispatchContext | null = null;
  /** Failed tries per held message (each gets its own maxRetries) and the backoff. */
  readonly #retries = new RetryBook<InboundMessage>();
  /** What the last `retry` outcome handed back: goes with the next batch, then is gone. */
  #carry: RetryCarry | undefined;
  #seq = 0;
  /** Resolved when the lock is next released (close() waits on them); made on the first wait. */
  #unlockWaiters: Array<() => void> | null = null;

  constructor(p: { state: ClientState; gates: DispatchTiming; overload: Pick<Overload, "end">; handler: DispatchHandler; memory: GroupMemoryView }) {
    this.#s = p.state;
    this.#gates = p.gates;
    this.#overload = p.overload;
    this.#handler = p.handler;
    this.#memory = p.memory;
  }

  /** Everything held, taken as for a dispatch: the overload episode ends, the debounces stop. */
  take(): { messages: InboundMessage[]; batchesMerged: number } {
    const held = this.#s.held.takeAll();
    this.#overload.end();
    this.#gates.taken();
    return held;
  }

  /** Resolves when the running dispatch releases the lock. */
  whenUnlocked(): Promise<void> {
    return new Promise<void>((resolve) => (this.#unlockWaiters ??= []).push(resolve));
  }

  /** Closing: nothing goes to a retry any more. */
  forgetCarry(): void {
    this.#carry = undefined;
  }

  /** Dispatches everything held now, unless closed or locked. */
  start(now: number): void {
    const s = this.#s;
    if (s.closed || s.dispatching) return;
    const { messages, batchesMerged } = this.take();
    if (messages.length === 0) return s.checkIdle();
    // Reactions and no-reply-expected messages ride along but never start a dispatch on their own.
    // Everything held was taken, as for a dispatch: no timer or waiting flag may outlive it.
    if (messages.every((m) => m.passive !== undefined)) {
      this.#gates.reset();
      for (const m of messages) s.drop(m, "not-for-reply", "held");
      return s.checkIdle();
    }
    messages.sort(compareMessages);
    const { trigger, mentionCount } = triggerOf(messages);
    const mentionSignal = this.#gates.dispatchStarted(trigger, now);
    const carried = this.#carry;
    this.#carry = undefined;
    const batch: DispatchBatch = {
      identityId: s.identityId,
      groupId: s.groupId,
      dispatchId: ++this.#seq,
      messages,
      vitality: s.ingest.vitalityAt(now),
      mentionInfo: { mentioned: mentionCount > 0, mentionCount, batchesMerged, triggerType: trigger },
      now: s.ingest.serverNow(now),
      attempt: this.#retries.attemptOf(messages),
      mentionSignal,
      newestMsgId: s.ingest.cursor,
      ...(carried ? { carried } : {}),
    };
    s.lock();
    s.count("dispatches");
    if (batch.attempt > 0) s.count("retries");
    s.log.log("debug", "group.dispatch", {
      dispatchId: batch.dispatchId,
      trigger,
      messages: messages.length,
      batchesMerged,
      attempt: batch.attempt,
      vitality: batch.vitality.state,
    });
    s.emit({ type: "dispatch-start", batch, atLocal: now });
    const context = (this.#context ??= new DispatchContext(this.#memory, this.#gates, s.held));
    void this.#run(batch, context).catch((err: unknown) => s.log.log("error", "group.dispatch-bookkeeping-failed", errorFields(err)));
  }

  /**
   * An `orphan` dispatch: the open question nobody answered (orphans.ts), alone. It takes nothing
   * held and starts no cooldown; it is never retried (it is a second chance already: a failure is
   * logged and the question left). False when closed or locked.
   */
  startOrphan(question: InboundMessage, now: number): boolean {
    const s = this.#s;
    if (s.closed || s.dispatching) return false;
    const batch: DispatchBatch = {
      identityId: s.identityId,
      groupId: s.groupId,
      dispatchId: ++this.#seq,
      messages: [question],
      vitality: s.ingest.vitalityAt(now),
      mentionInfo: { mentioned: false, mentionCount: 0, batchesMerged: 1, triggerType: "orphan" },
      now: s.ingest.serverNow(now),
      attempt: 0,
      newestMsgId: s.ingest.cursor,
      orphan: question.msgId,
    };
    s.lock();
    s.count("dispatches");
    s.log.log("debug", "group.dispatch", { dispatchId: batch.dispatchId, trigger: "orphan", question: question.msgId, messages: 1, vitality: batch.vitality.state });
    s.emit({ type: "dispatch-start", batch, atLocal: now });
    const context = (this.#context ??= new DispatchContext(this.#memory, this.#gates, s.held));
    void this.#runOrphan(batch, context).catch((err: unknown) => s.log.log("error", "group.dispatch-bookkeeping-failed", errorFields(err)));
    return true;
  }

  async #runOrphan(batch: DispatchBatch, context: GroupContext): Promise<void> {
    const s = this.#s;
    try {
      let outcome;
      try {
        outcome = await this.#handler(batch, context);
      } catch (err) {
        outcome = { kind: "retry" as const, reason: "backend-failed" as const, error: err };
      }
      if (outcome.kind === "retry") {
        s.count("failures");
        s.log.log("warn", "group.orphan-dispatch-failed", { dispatchId: batch.dispatchId, question: batch.orphan, ...errorFields(outcome.error) });
        s.emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: s.localNow(), ok: false, error: outcome.error, retryInMs: null });
        return;
      }
      if (outcome.kind === "sent") {
        const sentAt = outcome.sentAt ?? s.ingest.serverNow(s.localNow());
        s.recordOwn({ msgId: outcome.msgId, timestamp: sentAt, content: outcome.text, replyTo: outcome.replyTo, key: outcome.key });
      } else if (outcome.reason === "agents-share" && !s.closed) this.#gates.orphanWaitsForShare(batch.messages[0]!, s.localNow());
      s.emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: s.localNow(), ok: true, outcome });
    } finally {
      s.unlock();
      const waiters = this.#unlockWaiters;
      this.#unlockWaiters = null;
      if (waiters !== null) for (const resolve of waiters) resolve();
      if (!s.closed) this.#gates.afterOrphanDispatch(s.localNow());
      s.checkIdle();
    }
  }

  async #run(batch: DispatchBatch, context: GroupContext): Promise<void> {
    const s = this.#s;
    try {
      let settled: SentOutcome | SkippedOutcome | undefined;
      let failure: { error: unknown; carry: RetryCarry | undefined } | undefined;
      try {
        const outcome = await this.#handler(batch, context);
        if (outcome.kind === "retry") failure = { error: outcome.error, carry: outcome.carry };
        else settled = outcome;
      } catch (err) {
        // A bug on the agent side: retried like a failure, with nothing carried.
        failure = { error: err, carry: undefined };
      }
      if (failure) this.#failed(batch, failure.error, failure.carry);
      else this.#done(batch, settled!);
    } finally {
      // The lock is released here and nowhere else: no path leaves the group locked.
      s.unlock();
      this.#gates.dispatchEnded(s.localNow());
      const waiters = this.#unlockWaiters;
      this.#unlockWaiters = null;
      if (waiters !== null) for (const resolve of waiters) resolve();
      if (!s.closed) this.#gates.afterDispatch(s.localNow());
      s.checkIdle();
    }
  }

  #done(batch: DispatchBatch, outcome: SentOutcome | SkippedOutcome): void {
    const s = this.#s;
    this.#retries.succeeded();
    const notHandled = outcome.kind === "sent" && outcome.notHandled?.length ? new Set(outcome.notHandled) : undefined;
    if (notHandled) {
      const back = batch.messages.filter((m) => notHandled.has(m.msgId));
      // Closed meanwhile: dropped like everything else held at close (the next run pulls them again).
      if (s.closed) for (const m of back) s.drop(m, "group-closed", "held");
      else {
        // Held again, in front of what arrived meanwhile; a mention among them goes next.
        s.held.requeue(back, 1);
        this.#gates.heldAgain(back);
      }
      s.count("dispatched", batch.messages.length - back.length);
    } else s.count("dispatched", batch.messages.length);
    if (outcome.kind === "sent") {
      const sentAt = outcome.sentAt ?? s.ingest.serverNow(s.localNow());
      // The group's memory takes the reply once, here. With its reply target: the echo of this
      // message is "already counted" and is not read again.
      s.recordOwn({ msgId: outcome.msgId, timestamp: sentAt, content: outcome.text, replyTo: outcome.replyTo, key: outcome.key });
    }
    s.emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: s.localNow(), ok: true, outcome });
  }

  #failed(batch: DispatchBatch, error: unknown, carry: RetryCarry | undefined): void {
    const s = this.#s;
    s.count("failures");
    const fields = { dispatchId: batch.dispatchId, attempt: batch.attempt, messages: batch.messages.length, ...errorFields(error) };
    let retryInMs: number | null = null;
    if (s.closed) {
      for (const m of batch.messages) s.drop(m, "group-closed", "held");
      s.log.log("warn", "group.dispatch-failed-on-close", fields);
    } else {
      const { again, exhausted, retryInMs: wait } = this.#retries.failed(batch.messages, s.settings);
      for (const m of exhausted) s.drop(m, "retries-exhausted", "held");
      if (exhausted.length > 0) s.log.log("error", "group.dispatch-retries-exhausted", { ...fields, dropped: exhausted.length });
      if (wait !== null) {
        retryInMs = wait;
        // What the agent side handed back goes with the retry (it checks the batch still covers it).
        this.#carry = carry;
        // Back at the front, merged with whatever arrived meanwhile; the next dispatch re-sorts.
        s.held.requeue(again, batch.mentionInfo.batchesMerged);
        this.#gates.retryIn(retryInMs);
        s.log.log("warn", "group.dispatch-failed", { ...fields, retryInMs });
      }
    }
    s.emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: s.localNow(), ok: false, error, retryInMs });
  }
}
