// What the collaborators of one group client share: the messages held, the group's traffic
// record, the lock, the closed flag, and the books — counters, counted drops, the observer and the
// idle waiters. Every field is private; each collaborator changes it through the one method that
// names what happened (`lock`, `drop`, `count`, …) and reads it through a getter.
import { childLogger, errorFields } from "../log.ts";
import type { DispatchBatch, DropReason, GroupMessage, GroupSettings, InboundMessage, Logger, SentOutcome, SkippedOutcome } from "../types.ts";
import { HeldMessages } from "./held.ts";
import type { GroupIngest } from "./ingest.ts";
import type { SentMessage } from "./memory.ts";

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
  | { type: "dispatch-end"; dispatchId: number; atLocal: number; ok: true; outcome: SentOutcome | SkippedOutcome }
  /** A `retry` outcome, or the agent side threw. `retryInMs` null: the batch was dropped (retries exhausted or closed). */
  | { type: "dispatch-end"; dispatchId: number; atLocal: number; ok: false; error: unknown; retryInMs: number | null };

export interface GroupClientStats {
  /** Messages passed to feedBufferGate (after close too). */
  received: number;
  /** Entered the buffer gate: received minus duplicate, self and after-close drops. */
  accepted: number;
  /** Messages inside dispatches that completed (sent or skipped). */
  dispatched: number;
  /** Dispatch attempts started, retries included. */
  dispatches: number;
  /** Attempts that were retries (attempt > 0). */
  retries: number;
  /** Attempts that came back as `retry` or threw. */
  failures: number;
  mentions: number;
  engaged: number;
  ownMessages: number;
  dropped: Record<DropReason, number>;
  /** Messages buffered or pending right now. */
  held: number;
  dispatching: boolean;
}

/** The counters one method call adds to. */
export type CountedStat = "dispatched" | "dispatches" | "retries" | "failures" | "mentions" | "engaged";

function emptyDrops(): Record<DropReason, number> {
  return { self: 0, duplicate: 0, "over-capacity": 0, "group-closed": 0, "retries-exhausted": 0, "not-for-reply": 0, answered: 0, "refused-sender": 0 };
}

export class ClientState {
  readonly identityId: string;
  readonly groupId: string;
  readonly settings: GroupSettings;
  readonly localNow: () => number;
  readonly ingest: GroupIngest;
  /** Accepted, not yet dispatched: buffer gate (incoming) + dispatch gate (pending). */
  readonly held = new HeldMessages<InboundMessage>();
  /** Set by close(), never cleared: later feeds are counted drops. */
  #closed = false;
  /** The lock: true while the handler runs. Taken and released by the dispatcher alone. */
  #dispatching = false;
  readonly #counts: Record<CountedStat | "ownMessages", number> = { dispatched: 0, dispatches: 0, retries: 0, failures: 0, mentions: 0, engaged: 0, ownMessages: 0 };
  readonly #dropped = emptyDrops();
  readonly #onEvent: ((e: GroupClientEvent) => void) | undefined;
  readonly #parentLog: Logger;
  /** Made on the first line: most groups never log, and thousands of them are held. */
  #log: Logger | null = null;
  /** Resolved when nothing is held and no dispatch runs; made on the first wait. */
  #idleWaiters: Array<() => void> | null = null;

  constructor(p: {
    identityId: string;
    groupId: string;
    settings: GroupSettings;
    localNow: () => number;
    /** The identity's logger: every line of the group adds its identity and group. */
    log: Logger;
    ingest: GroupIngest;
    onEvent: ((e: GroupClientEvent) => void) | undefined;
  }) {
    this.identityId = p.identityId;
    this.groupId = p.groupId;
    this.settings = p.settings;
    this.localNow = p.localNow;
    this.ingest = p.ingest;
    this.#onEvent = p.onEvent;
    this.#parentLog = p.log;
  }

  get log(): Logger {
    return (this.#log ??= childLogger(this.#parentLog, { identity: this.identityId, group: this.groupId }));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** close() was called: from now on every feed is a counted drop. */
  markClosed(): void {
    this.#closed = true;
  }

  get dispatching(): boolean {
    return this.#dispatching;
  }

  /** The dispatcher takes the lock for one dispatch… */
  lock(): void {
    this.#dispatching = true;
  }

  /** …and releases it in its one finally. */
  unlock(): void {
    this.#dispatching = false;
  }

  /** Someone watches the events: build them (otherwise a feed skips the work). */
  get observed(): boolean {
    return this.#onEvent !== undefined;
  }

  count(stat: CountedStat, n = 1): void {
    this.#counts[stat] += n;
  }

  /** Nothing held and no dispatch running. */
  get idle(): boolean {
    return !this.#dispatching && this.held.length === 0;
  }

  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => (this.#idleWaiters ??= []).push(resolve));
  }

  /** Resolves the idle waiters if nothing is held and no dispatch runs. */
  checkIdle(): void {
    if (this.#idleWaiters === null || !this.idle) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = null;
    for (const resolve of waiters) resolve();
  }

  /** The counters, with the per-feed ones the client keeps itself. */
  stats(feed: { received: number; accepted: number }): GroupClientStats {
    return { ...this.#counts, received: feed.received, accepted: feed.accepted, dropped: { ...this.#dropped }, held: this.held.length, dispatching: this.#dispatching };
  }

  /** A message that will never be dispatched, counted under its reason. */
  drop(m: GroupMessage, reason: DropReason, stage: "arrival" | "held"): void {
    this.#dropped[reason]++;
    if (this.#onEvent) this.emit({ type: "dropped", msgId: m.msgId, sender: m.sender, reason, stage, atLocal: this.localNow() });
  }

  /** Our own message, counted once (the group's memory knows whether this msg id was counted already). */
  recordOwn(m: SentMessage & { replyTo?: string | undefined }): void {
    if (!this.ingest.recordOwn(m, this.localNow())) return;
    this.#counts.ownMessages++;
    this.emit({ type: "own-message", msgId: m.msgId, timestamp: m.timestamp });
  }

  emit(e: GroupClientEvent): void {
    if (!this.#onEvent) return;
    try {
      this.#onEvent(e);
    } catch (err) {
      // An observer's bug must not break the engine's bookkeeping.
      this.log.log("error", "group.observer-failed", { event: e.type, ...errorFields(err) });
    }
  }
}
