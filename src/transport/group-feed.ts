// Per-group delivery: pull after the cursor on every (re)connect, hold pushes while pulling, feed
// the handler serially, ack what it accepted. Nothing at or below `lastFed` is ever fed again.
// The id arithmetic is feed-sequence.ts; the paged pull feed-pull.ts.
import type { GroupMessage, Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { BoundedSet } from "../util/bounded-map.ts";
import type { BatchRange } from "../wire/frames.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import type { PullPage } from "../wire/responses.ts";
import { pullPages } from "./feed-pull.ts";
import { claimedUpTo, continuesFrom, firstGap, freshMessages, highestId, isRefusal } from "./feed-sequence.ts";

export type GroupFeedStatus = "offline" | "syncing" | "live" | "retrying" | "closed";

export interface GroupFeedCounters {
  handlerErrors: number;
  pullFailures: number;
  messagesFed: number;
  heldOverflows: number;
  /** Pushes that skipped an id (a message we never saw) and were replaced by a pull. */
  gapResyncs: number;
  /** Pulls retried with a smaller page after a timeout or a response too large to read. */
  pageShrinks: number;
  /** Messages too large to receive even alone: skipped (the cursor moves past them), logged with their id. */
  droppedOversize: number;
}

export interface GroupFeedParams {
  groupId: string;
  onMessages(groupId: string, messages: GroupMessage[]): void | Promise<void>;
  /** One pull_messages request; rejects when it fails. */
  pull(afterMsgId: number, limit: number): Promise<PullPage>;
  /** Fire-and-forget ack_messages. */
  ack(msgId: number): void;
  /** Delay before retry number `attempt` after a handler or pull failure. */
  retryDelay(attempt: number): number;
  counters: GroupFeedCounters;
  logger: Logger;
  pageSize: number;
  /** Pushes held during a pull beyond this are dropped and re-pulled instead. */
  maxHeld: number;
}

export class GroupFeed {
  readonly groupId: string;
  readonly #p: GroupFeedParams;
  /** Highest msg id the handler accepted. Starts at the persisted cursor. */
  #lastFed = 0;
  /** Highest msg id handed to the delivery chain; the next push must continue from here. */
  #lastQueued = 0;
  /** Highest msg id seen on the wire, so a `new_message` notify can tell whether we are behind. */
  #highestSeen = 0;
  #status: GroupFeedStatus = "offline";
  /** Bumped on every (dis)connect: loops and retries of an older connection stop at their next step. */
  #epoch = 0;
  #resync = false;
  #syncPromise: Promise<void> | undefined;
  /** Pushes that arrived while a pull was running; fed right after it. */
  #held: GroupMessage[] = [];
  /**
   * Ids of our own sends above what was fed: a service that does not echo our messages back must
   * not make the next push look like a gap (one pull per push otherwise). Pruned as the feed
   * moves past them; bounded (the oldest send first out) for a feed that never does.
   */
  readonly #own = new BoundedSet<number>(1000);
  /**
   * Serialises deliveries: pages and pushes reach the handler one batch at a time, in order. The
   * delivery last queued while one waits on an async handler; null when none waits — then a batch
   * is handed over at once, with no promise made (the per-message path of a sync handler).
   */
  #chain: Promise<boolean> | null = null;
  /**
   * This group's ids increase but skip numbers: learnt when a pull made for a skipped id found
   * nothing in between. From then on a push with higher ids is fed as it is (a batch's own range
   * and `new_message` still bring a pull when something was not carried).
   */
  #sparseIds = false;
  /** The id range a gap pull is checking: any message fed inside it means the gap was real. */
  #gapProbe: { after: number; before: number; filled: boolean } | undefined;
  /**
   * Set by a handler or pull failure until the retry: pushes and queued batches are dropped then,
   * because feeding them would move lastFed past messages the retry must re-pull.
   */
  #blocked = false;
  #failures = 0;
  /** Armed after a handler or pull failure; cleared on disconnect, reconnect and close. */
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Waiting for the feed to be live (caught up with the service); resolved then, or on close. */
  #liveWaiters: Array<() => void> = [];

  constructor(params: GroupFeedParams) {
    this.groupId = params.groupId;
    this.#p = params;
  }

  get lastFed(): number {
    return this.#lastFed;
  }

  get status(): GroupFeedStatus {
    return this.#status;
  }

  /** A new connection is open: resume from the larger of our last-fed id and the persisted cursor. */
  connect(cursor: number): Promise<void> {
    if (this.#status === "closed") return Promise.resolve();
    this.#epoch++;
    this.#clearRetry();
    this.#held = [];
    this.#blocked = false;
    this.#syncPromise = undefined;
    this.#status = "syncing";
    if (Number.isSafeInteger(cursor) && cursor > this.#lastFed) this.#lastFed = cursor;
    this.#lastQueued = this.#lastFed;
    this.#highestSeen = Math.max(this.#highestSeen, this.#lastFed);
    return this.sync();
  }

  disconnect(): void {
    if (this.#status === "closed") return;
    this.#epoch++;
    this.#clearRetry();
    this.#held = [];
    this.#syncPromise = undefined;
    this.#status = "offline";
    // The session that waited is gone; the next one waits again.
    this.#wakeLiveWaiters();
  }

  close(): void {
    this.#epoch++;
    this.#clearRetry();
    this.#held = [];
    this.#syncPromise = undefined;
    this.#status = "closed";
    this.#wakeLiveWaiters();
  }

  /** Resolves once a pull caught up with the service (now, if it has), or when the feed closes. */
  whenLive(): Promise<void> {
    if (this.#status === "live" || this.#status === "closed") return Promise.resolve();
    return new Promise((resolve) => this.#liveWaiters.push(resolve));
  }

  #wakeLiveWaiters(): void {
    for (const wake of this.#liveWaiters.splice(0)) wake();
  }

  /** Pull everything after lastFed. While a pull runs, a second call makes it go round once more. */
  sync(): Promise<void> {
    if (this.#status === "closed" || this.#status === "offline") return Promise.resolve();
    if (this.#syncPromise) {
      this.#resync = true;
      return this.#syncPromise;
    }
    const epoch = this.#epoch;
    this.#status = "syncing";
    const run = this.#runSync(epoch);
    this.#syncPromise = run;
    return run;
  }

  /** Our own send_message was stored as `msgId`: the next push may follow it without a gap. */
  noteOwnSend(msgId: number): void {
    if (!Number.isSafeInteger(msgId) || msgId <= this.#lastFed) return;
    this.#own.add(msgId);
  }

  /**
   * Messages pushed by the server (message_push / message_batch_push). A batch's `range` tells
   * what it covers: a start past the next expected id, or a latest id past its last message,
   * means messages it did not carry, fetched by a pull.
   */
  push(messages: readonly GroupMessage[], range?: BatchRange): void {
    if (this.#status === "closed" || this.#status === "offline" || this.#blocked) return;
    const carriedUpTo = highestId(messages, 0);
    this.#highestSeen = Math.max(this.#highestSeen, carriedUpTo);
    const claimed = claimedUpTo(range);
    if (claimed > carriedUpTo) {
      this.#highestSeen = Math.max(this.#highestSeen, claimed);
      this.#p.counters.gapResyncs++;
      this.#p.logger.log("debug", "transport.push-incomplete", { groupId: this.groupId, carriedUpTo, claimed });
      void this.sync();
      return;
    }
    if (this.#syncPromise) {
      if (this.#held.length + messages.length > this.#p.maxHeld) {
        this.#p.counters.heldOverflows++;
        this.#held = [];
        this.#resync = true;
        return;
      }
      this.#held.push(...messages);
      return;
    }
    this.#acceptPush(messages);
  }

  /**
   * ACP msg ids count up by one per group, so a push that skips an id means a message we never
   * saw (a push lost around a reconnect, a server that only notifies): pull instead of feeding
   * past it. A server whose ids skip numbers costs one such pull: finding nothing in between, the
   * feed takes increasing ids as in order from then on.
   */
  #acceptPush(messages: readonly GroupMessage[]): void {
    let expected = Math.max(this.#lastFed, this.#lastQueued);
    // Our own stored sends fill their ids unless the push carries them (then they are fed). Almost
    // always there are none waiting: then nothing here runs.
    if (this.#own.size > 0) {
      for (const id of this.#own) if (id <= this.#lastFed) this.#own.delete(id);
      const ids = new Set(messages.map((m) => msgIdValue(m.msgId)));
      while (this.#own.has(expected + 1) && !ids.has(expected + 1)) expected++;
    }
    this.#lastQueued = Math.max(this.#lastQueued, expected);
    const fresh = freshMessages(messages, expected);
    if (fresh.length === 0) return;
    if (!continuesFrom(fresh, expected, this.#sparseIds)) {
      this.#p.counters.gapResyncs++;
      this.#p.logger.log("debug", "transport.push-gap", { groupId: this.groupId, expected: expected + 1, got: fresh[0]!.msgId });
      const probe = { ...firstGap(fresh, expected), filled: false };
      this.#gapProbe = probe;
      void this.sync().then(() => {
        if (this.#gapProbe !== probe) return;
        this.#gapProbe = undefined;
        if (!probe.filled && this.#lastFed >= probe.before && !this.#sparseIds) {
          this.#sparseIds = true;
          this.#p.logger.log("info", "transport.sparse-ids", { groupId: this.groupId, after: probe.after, next: probe.before });
        }
      });
      return;
    }
    void this.#enqueue(fresh);
  }

  /** A `new_message` notify: pull if the server has something we have not seen. */
  notifyLatest(latestMsgId: number): void {
    if (this.#status === "closed" || this.#status === "offline") return;
    if (latestMsgId <= this.#highestSeen || latestMsgId <= this.#lastFed) return;
    this.#highestSeen = latestMsgId;
    if (this.#blocked) return;
    void this.sync();
  }

  async #runSync(epoch: number): Promise<void> {
    let ok = true;
    try {
      do {
        this.#resync = false;
        ok = await this.#pullAll(epoch);
      } while (ok && this.#resync && epoch === this.#epoch);
    } catch (err) {
      ok = false;
      if (epoch === this.#epoch) {
        this.#p.counters.pullFailures++;
        this.#p.logger.log("warn", "transport.pull-failed", { groupId: this.groupId, after: this.#lastFed, ...errorFields(err) });
        this.#scheduleRetry();
        // A group that refuses us (not a member, gone) will not be fed by waiting: ready goes on without it.
        if (isRefusal(err)) this.#wakeLiveWaiters();
      }
    } finally {
      if (epoch === this.#epoch) {
        this.#syncPromise = undefined;
        const held = this.#held.splice(0);
        if (ok) {
          this.#status = "live";
          this.#wakeLiveWaiters();
          // Accepted before any later push: the chain keeps wire order.
          if (held.length > 0) this.#acceptPush(held);
        }
      }
    }
  }

  /** Returns false when the handler refused a page or the connection changed. */
  async #pullAll(epoch: number): Promise<boolean> {
    if (this.#chain !== null) await this.#chain;
    if (epoch !== this.#epoch || this.#blocked) return false;
    // The chain is drained: whatever was queued has been fed or dropped.
    this.#lastQueued = this.#lastFed;
    return pullPages(
      {
        groupId: this.groupId,
        pageSize: this.#p.pageSize,
        pull: this.#p.pull,
        counters: this.#p.counters,
        logger: this.#p.logger,
        stale: () => epoch !== this.#epoch,
        skipTo: (skipped) => this.#skipTo(skipped),
        take: (page, after) => this.#takePage(page, after),
      },
      this.#lastFed,
    );
  }

  #takePage(page: PullPage, after: number): boolean | Promise<boolean> {
    if (page.latestMsgId !== undefined && page.latestMsgId < after) {
      // The server's history restarted below our cursor (e.g. a local server without a history
      // file): everything up to our cursor will be ignored. Say so loudly; never re-feed.
      this.#p.logger.log("error", "transport.cursor-ahead-of-server", { groupId: this.groupId, cursor: after, serverLatest: page.latestMsgId });
    }
    this.#highestSeen = highestId(page.messages, this.#highestSeen);
    if (page.latestMsgId !== undefined) this.#highestSeen = Math.max(this.#highestSeen, page.latestMsgId);
    return this.#enqueue(page.messages);
  }

  /** A message too large to receive even alone was skipped: lastFed moves past it and is acked, so no pull asks for it again. */
  #skipTo(skipped: number): void {
    this.#lastFed = Math.max(this.#lastFed, skipped);
    this.#lastQueued = Math.max(this.#lastQueued, this.#lastFed);
    this.#highestSeen = Math.max(this.#highestSeen, skipped);
    this.#p.ack(this.#lastFed);
  }

  /** Hands `messages` to the handler after what is queued before them: true when it took them. */
  #enqueue(messages: readonly GroupMessage[]): boolean | Promise<boolean> {
    const epoch = this.#epoch;
    for (const m of messages) this.#lastQueued = Math.max(this.#lastQueued, msgIdValue(m.msgId));
    const probe = this.#gapProbe;
    if (probe && messages.some((m) => msgIdValue(m.msgId) > probe.after && msgIdValue(m.msgId) < probe.before)) probe.filled = true;
    const waiting = this.#chain;
    const run = waiting === null ? this.#deliver(messages, epoch) : waiting.then(() => this.#deliver(messages, epoch));
    if (typeof run === "boolean") return run;
    this.#chain = run;
    // The last one queued, once done, leaves the way free for batches handed over at once.
    void run.then(() => {
      if (this.#chain === run) this.#chain = null;
    });
    return run;
  }

  /**
   * Never rejects: a handler failure is logged, counted and turned into a re-pull later. Batches
   * of an older connection are dropped: the new connection's pull fetches them again from lastFed.
   * A handler that returns no promise is done when it returns: the batch is settled then.
   */
  #deliver(messages: readonly GroupMessage[], epoch: number): boolean | Promise<boolean> {
    if (epoch !== this.#epoch || this.#status === "closed" || this.#blocked) return false;
    const fresh = freshMessages(messages, this.#lastFed);
    if (fresh.length === 0) return true;
    let handled: void | Promise<void>;
    try {
      handled = this.#p.onMessages(this.groupId, fresh);
    } catch (err) {
      return this.#handlerFailed(fresh, epoch, err);
    }
    if (handled === undefined || typeof handled.then !== "function") return this.#delivered(fresh);
    return handled.then(
      () => this.#delivered(fresh),
      (err: unknown) => this.#handlerFailed(fresh, epoch, err),
    );
  }

  #delivered(fresh: readonly GroupMessage[]): boolean {
    this.#lastFed = Math.max(this.#lastFed, msgIdValue(fresh[fresh.length - 1]!.msgId));
    this.#failures = 0;
    this.#p.counters.messagesFed += fresh.length;
    if (!this.#isClosed()) this.#p.ack(this.#lastFed);
    return true;
  }

  #handlerFailed(fresh: readonly GroupMessage[], epoch: number, err: unknown): false {
    if (this.#isClosed()) return false;
    this.#p.counters.handlerErrors++;
    this.#p.logger.log("error", "transport.handler-failed", {
      groupId: this.groupId,
      firstMsgId: fresh[0]!.msgId,
      lastMsgId: fresh[fresh.length - 1]!.msgId,
      ...errorFields(err),
    });
    if (epoch === this.#epoch) this.#scheduleRetry();
    return false;
  }

  /** Re-reads the status after an await (TypeScript keeps the narrowing from before it). */
  #isClosed(): boolean {
    return this.#status === "closed";
  }

  #scheduleRetry(): void {
    if (this.#status === "closed" || this.#status === "offline") return;
    this.#clearRetry();
    this.#blocked = true;
    this.#status = "retrying";
    const epoch = this.#epoch;
    const delay = this.#p.retryDelay(this.#failures++);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (epoch !== this.#epoch) return;
      this.#blocked = false;
      void this.sync();
    }, delay);
    this.#retryTimer.unref?.();
  }

  #clearRetry(): void {
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }
}
