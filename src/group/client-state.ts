// What the collaborators of one group client share, by name: the messages held, the group's
// traffic record, the lock flag, and the books — counters, counted drops and the observer. Each
// collaborator names the part it reads in its own type; nothing here is private to one of them.
import { childLogger, errorFields } from "../log.ts";
import type { DropReason, GroupMessage, GroupSettings, InboundMessage, Logger } from "../types.ts";
import { emptyStats, type GroupClientEvent, type GroupClientStats, type OwnMessage } from "./group-client-types.ts";
import { HeldMessages } from "./held.ts";
import type { GroupIngest } from "./ingest.ts";

/** What a feed tells the gates (gates.ts) once its messages are held. */
export interface ArrivalGates {
  talkArrived(now: number, engagedSeen: boolean): void;
  mentionArrived(now: number, human: boolean): void;
}

export class ClientState {
  // What every feedBufferGate call reads comes first: fields sit in memory in declaration order,
  // so these share one or two cache lines of a client that is otherwise cold among thousands.
  /** Set by close(), never cleared: later feeds are counted drops. */
  closed = false;
  readonly localNow: () => number;
  /** Counted per message here, beside the other hot fields; the rest of the stats live in `counts`. */
  received = 0;
  accepted = 0;
  batchSeq = 0;
  readonly ingest: GroupIngest;
  /** Accepted, not yet dispatched: buffer gate (incoming) + dispatch gate (pending). */
  readonly held = new HeldMessages<InboundMessage>();
  readonly onEvent: ((e: GroupClientEvent) => void) | undefined;
  readonly settings: GroupSettings;
  /** Set once by the client that wires the gates; kept here so a feed reaches them from the hot fields. */
  arrivals!: ArrivalGates;
  /** The lock: true while the handler runs. Written by the dispatcher alone. */
  dispatching = false;
  readonly counts: GroupClientStats = emptyStats();
  readonly #parentLog: Logger;
  /** Made on the first line: most groups never log, and thousands of them are held. */
  #log: Logger | null = null;
  readonly identityId: string;
  readonly groupId: string;
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
    this.localNow = p.localNow;
    this.ingest = p.ingest;
    this.onEvent = p.onEvent;
    this.settings = p.settings;
    this.#parentLog = p.log;
    this.identityId = p.identityId;
    this.groupId = p.groupId;
  }

  get log(): Logger {
    return (this.#log ??= childLogger(this.#parentLog, { identity: this.identityId, group: this.groupId }));
  }

  /** Nothing held and no dispatch running. */
  get idle(): boolean {
    return !this.dispatching && this.held.length === 0;
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

  stats(): GroupClientStats {
    const s = this.counts;
    return { ...s, received: this.received, accepted: this.accepted, dropped: { ...s.dropped }, held: this.held.length, dispatching: this.dispatching };
  }

  /** A message that will never be dispatched, counted under its reason. */
  drop(m: GroupMessage, reason: DropReason, stage: "arrival" | "held"): void {
    this.counts.dropped[reason]++;
    if (this.onEvent) this.emit({ type: "dropped", msgId: m.msgId, sender: m.sender, reason, stage, atLocal: this.localNow() });
  }

  /** Our own message, counted once (the ingest knows whether this msg id was counted already). */
  recordOwn(m: OwnMessage): void {
    if (!this.ingest.recordOwn(m, this.localNow())) return;
    this.counts.ownMessages++;
    this.emit({ type: "own-message", msgId: m.msgId, timestamp: m.timestamp });
  }

  emit(e: GroupClientEvent): void {
    if (!this.onEvent) return;
    try {
      this.onEvent(e);
    } catch (err) {
      // An observer's bug must not break the engine's bookkeeping.
      this.log.log("error", "group.observer-failed", { event: e.type, ...errorFields(err) });
    }
  }
}
