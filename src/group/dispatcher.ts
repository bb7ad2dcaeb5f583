// One dispatch at a time: take everything held, build the batch, run the handler under the lock,
// and settle what comes back — handled, handed back (`notHandled`), or failed and retried with
// backoff (retry-book.ts). The lock is released in one finally and nowhere else.
import { errorFields } from "../log.ts";
import type { DispatchBatch, DispatchHandler, DispatchOutcome, InboundMessage } from "../types.ts";
import type { ClientState } from "./client-state.ts";
import { triggerOf } from "./dispatch-gate.ts";
import type { DispatchGates } from "./gates.ts";
import { compareMessages } from "./order.ts";
import type { Overload } from "./overload.ts";
import { RetryBook } from "./retry-book.ts";

/** What the dispatcher tells the gates, and asks of them. */
export type DispatchTiming = Pick<DispatchGates, "mentionWaiting" | "taken" | "reset" | "dispatchStarted" | "heldAgain" | "retryIn" | "dispatchEnded" | "afterDispatch">;

export class Dispatcher {
  readonly #s: ClientState;
  readonly #gates: DispatchTiming;
  readonly #overload: Pick<Overload, "end">;
  readonly #handler: DispatchHandler;
  /** Failed tries per held message (each gets its own maxRetries) and the backoff. */
  readonly #retries = new RetryBook<InboundMessage>();
  #seq = 0;
  /** Resolved when the lock is next released (close() waits on them); made on the first wait. */
  #unlockWaiters: Array<() => void> | null = null;

  constructor(p: { state: ClientState; gates: DispatchTiming; overload: Pick<Overload, "end">; handler: DispatchHandler }) {
    this.#s = p.state;
    this.#gates = p.gates;
    this.#overload = p.overload;
    this.#handler = p.handler;
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
    const gates = this.#gates;
    const batch: DispatchBatch = {
      identityId: s.identityId,
      groupId: s.groupId,
      dispatchId: ++this.#seq,
      messages,
      vitality: s.ingest.vitalityAt(now),
      mentionInfo: { mentioned: mentionCount > 0, mentionCount, batchesMerged, triggerType: trigger },
      lastSelfSpeakAt: s.ingest.lastSelfSpeakAt,
      now: s.ingest.serverNow(now),
      attempt: this.#retries.attemptOf(messages),
      hasPendingMention: () => gates.mentionWaiting,
      mentionSignal,
      // What arrived since this dispatch took its batch (the monitor remembers earlier batches).
      heldNow: () => s.held.snapshot(),
      findOwnEcho: (content, since) => s.ingest.findOwnEcho(content, since),
      newestMsgId: s.ingest.cursor,
    };
    s.dispatching = true;
    s.counts.dispatches++;
    if (batch.attempt > 0) s.counts.retries++;
    s.log.log("debug", "group.dispatch", {
      dispatchId: batch.dispatchId,
      trigger,
      messages: messages.length,
      batchesMerged,
      attempt: batch.attempt,
      vitality: batch.vitality.state,
    });
    s.emit({ type: "dispatch-start", batch, atLocal: now });
    void this.#run(batch).catch((err: unknown) => s.log.log("error", "group.dispatch-bookkeeping-failed", errorFields(err)));
  }

  async #run(batch: DispatchBatch): Promise<void> {
    const s = this.#s;
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
      if (failed) this.#failed(batch, error);
      else this.#done(batch, outcome ?? { sent: false });
    } finally {
      // The lock is released here and nowhere else: no path leaves the group locked.
      s.dispatching = false;
      this.#gates.dispatchEnded(s.localNow());
      const waiters = this.#unlockWaiters;
      this.#unlockWaiters = null;
      if (waiters !== null) for (const resolve of waiters) resolve();
      if (!s.closed) this.#gates.afterDispatch(s.localNow());
      s.checkIdle();
    }
  }

  #done(batch: DispatchBatch, outcome: DispatchOutcome): void {
    const s = this.#s;
    this.#retries.succeeded();
    const notHandled = outcome.notHandled?.length ? new Set(outcome.notHandled) : undefined;
    if (notHandled) {
      const back = batch.messages.filter((m) => notHandled.has(m.msgId));
      // Closed meanwhile: dropped like everything else held at close (the next run pulls them again).
      if (s.closed) for (const m of back) s.drop(m, "group-closed", "held");
      else {
        // Held again, in front of what arrived meanwhile; a mention among them goes next.
        s.held.requeue(back, 1);
        this.#gates.heldAgain(back);
      }
      s.counts.dispatched += batch.messages.length - back.length;
    } else s.counts.dispatched += batch.messages.length;
    if (outcome.sent) {
      const sentAt = outcome.sentAt ?? s.ingest.serverNow(s.localNow());
      // With its reply target: the echo of this message is "already counted" and is not read again.
      s.recordOwn({ msgId: outcome.sentMsgId, timestamp: sentAt, content: outcome.text ?? "", replyTo: outcome.replyTo });
    }
    s.emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: s.localNow(), ok: true, outcome });
  }

  #failed(batch: DispatchBatch, error: unknown): void {
    const s = this.#s;
    s.counts.failures++;
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
        // Back at the front, merged with whatever arrived meanwhile; the next dispatch re-sorts.
        s.held.requeue(again, batch.mentionInfo.batchesMerged);
        this.#gates.retryIn(retryInMs);
        s.log.log("warn", "group.dispatch-failed", { ...fields, retryInMs });
      }
    }
    s.emit({ type: "dispatch-end", dispatchId: batch.dispatchId, atLocal: s.localNow(), ok: false, error, retryInMs });
  }
}
