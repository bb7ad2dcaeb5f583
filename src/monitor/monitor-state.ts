// What one (identity, group) monitor remembers between dispatches. The snapshot survives restarts:
// budget events, the agent chain and who paid for addressed calls. For this run only: other
// members' recent lines, and how many arrived since our last unaddressed call. What we said in the group is not here: it is the group's memory
// (src/group/memory.ts), which every dispatch reads through its context. Every field is private;
// the dispatch steps change it through the one method that names what happened.
import type { InboundMessage, PersistedGroupState } from "../types.ts";
import { pruneBudgetEvents, recordBudgetEvent, type BudgetEvent } from "./budget-windows.ts";
import { pruneSenderCharges, recordSenderCharge, type SenderCharge } from "./sender-share.ts";
import { BoundedSet } from "../util/bounded-map.ts";

/** Msg ids of questions we answered, remembered for orphans: far more than the questions watched at once. */
const ANSWERED_LIMIT = 256;
/**
 * The fewest people's lines the agents' share is counted over (src/monitor/dispatch/gate.ts): a
 * monitor that has seen less of the room (just started, a quiet day) allows what this many lines
 * would — at 0.05, five agents' lines, so the first questions of a fresh room can be helped.
 */
export const SHARE_MIN_LINES = 100;
const MINUTE_MS = 60_000;
/** Minutes of the longest budget window (24 h): the pace and the agents' share are kept for as long. */
const DAY_MINUTES = 24 * 60;
const DAY_MS = DAY_MINUTES * MINUTE_MS;

/** Lines per minute of server time (minute → count), forgetting minutes more than 24 h before the latest. */
class MinuteCounts {
  readonly #minutes = new Map<number, number>();
  /** The newest minute the map was last pruned at: it is walked again only when a newer minute arrives. */
  #prunedAt = -Infinity;

  add(timestamps: Iterable<number>): void {
    let latest = -Infinity;
    for (const ts of timestamps) {
      const minute = Math.floor(ts / MINUTE_MS);
      this.#minutes.set(minute, (this.#minutes.get(minute) ?? 0) + 1);
      if (minute > latest) latest = minute;
    }
    if (latest <= this.#prunedAt) return;
    this.#prunedAt = latest;
    const oldest = latest - DAY_MINUTES;
    for (const minute of this.#minutes.keys()) if (minute <= oldest) this.#minutes.delete(minute);
  }

  /** Lines in the `windowMs` before server time `now`, to the minute (the window's first minute counts whole). */
  in(windowMs: number, now: number): number {
    const from = Math.floor((now - windowMs) / MINUTE_MS);
    let n = 0;
    for (const [minute, count] of this.#minutes) if (minute >= from) n += count;
    return n;
  }
}

/** The monitor's part of {@link PersistedGroupState}. */
export type MonitorSnapshot = Pick<PersistedGroupState, "budgetEvents" | "agentChain" | "senderCharges">;

export class MonitorState {
  #budgetEvents: BudgetEvent[];
  #agentChain: number;
  /** Who paid for each addressed call (sender-share.ts): one sender's share is bounded. */
  #senderCharges: SenderCharge[];
  /** Other members' latest messages from earlier batches (dedup.othersHistorySize), oldest first. */
  #othersRecent: readonly InboundMessage[] = [];
  /**
   * Other members' messages since our last unaddressed call (budget.unaddressedEvery), at most one
   * call's worth; null until the first batch (a fresh monitor may look at once).
   */
  #traffic: number | null = null;
  /** Server time of our last unaddressed call, or null. */
  #lookedAt: number | null = null;
  /**
   * Our latest reply was joining in unprompted (an unaddressed call, or a look at the room's
   * reaction): the room's reaction to it is no conversation of ours, and stays unaddressed talk.
   */
  #lastReplyUnprompted = false;
  /** Others' lines per minute of server time, the last 24 h: the channel's pace per budget window. */
  readonly #lineMinutes = new MinuteCounts();
  /** The room's lines by whose they were, the last 24 h: people's, and agents' (others' and ours). */
  readonly #peopleLines = new MinuteCounts();
  readonly #agentLines = new MinuteCounts();
  /** Questions a reply of ours answered (the claim, or every line of its batch): never taken again as orphans. */
  readonly #answered = new BoundedSet<string>(ANSWERED_LIMIT);

  constructor(restored: Partial<PersistedGroupState> | undefined) {
    this.#budgetEvents = [...(restored?.budgetEvents ?? [])].map((e) => [e[0], e[1], e[2]]);
    this.#agentChain = restored?.agentChain ?? 0;
    this.#senderCharges = (restored?.senderCharges ?? []).map((c) => [c[0], c[1], c[2]]);
  }

  /** Model calls in the last 24 h (older ones are dropped when a call is recorded or the budget pruned). */
  get budgetEvents(): readonly BudgetEvent[] {
    return this.#budgetEvents;
  }

  /** Consecutive agent-only exchanges (the bot-loop guard). */
  get agentChain(): number {
    return this.#agentChain;
  }

  get senderCharges(): readonly SenderCharge[] {
    return this.#senderCharges;
  }

  get othersRecent(): readonly InboundMessage[] {
    return this.#othersRecent;
  }

  /** Forgets budget events and sender charges that have left the longest window at server time `now`. */
  pruneBudget(now: number): void {
    this.#budgetEvents = pruneBudgetEvents(this.#budgetEvents, now);
  }

  pruneCharges(now: number): void {
    this.#senderCharges = pruneSenderCharges(this.#senderCharges, now);
  }

  /** One model call paid for: the budget event, and who paid when someone addressed us. */
  charge(event: BudgetEvent, payer: string | undefined): void {
    this.#budgetEvents = recordBudgetEvent(this.#budgetEvents, event);
    if (payer !== undefined) this.#senderCharges = recordSenderCharge(this.#senderCharges, [event[0], event[1], payer]);
  }

  /** Other members' messages since our last unaddressed call, counted up to `every` (one call's worth). */
  traffic(every: number): number {
    return Math.min(every, this.#traffic ?? every);
  }

  /** `count` more messages of others arrived (a batch). */
  countTraffic(count: number, every: number): void {
    this.#traffic = Math.min(every, (this.#traffic ?? every) + count);
  }

  /** Whether we have spoken (server time `lastSelfSpeakAt`) since our last unaddressed call. */
  spokeSinceLook(lastSelfSpeakAt: number | null): boolean {
    return lastSelfSpeakAt !== null && (this.#lookedAt === null || lastSelfSpeakAt > this.#lookedAt);
  }

  /**
   * Whether the first plain batch after our latest line is the room's reaction to a conversation
   * we are in: we have spoken since our last unaddressed call, and that line answered talk
   * addressed to us (or was sent by other means), not talk we joined unprompted.
   */
  reactionDue(lastSelfSpeakAt: number | null): boolean {
    return this.spokeSinceLook(lastSelfSpeakAt) && !this.#lastReplyUnprompted;
  }

  /** A reply of ours was sent: `unprompted` when its dispatch was joining in unprompted. */
  replySent(unprompted: boolean): void {
    this.#lastReplyUnprompted = unprompted;
  }

  /** An unaddressed call at server time `now`: the traffic it looked at is spent. */
  spendTraffic(every: number, now: number): void {
    this.#traffic = Math.max(0, this.traffic(every) - every);
    this.#lookedAt = now;
  }

  /** The agent chain as the loop guard (or a sent reply) leaves it. True when it changed. */
  setAgentChain(n: number): boolean {
    if (n === this.#agentChain) return false;
    this.#agentChain = n;
    return true;
  }

  /** Lines of the room at their server times: an agent's (another agent's, or ours as sent) or a person's. */
  noteRoomLines(lines: Iterable<{ ts: number; agent: boolean }>): void {
    const agents: number[] = [];
    const people: number[] = [];
    for (const l of lines) (l.agent ? agents : people).push(l.ts);
    this.#agentLines.add(agents);
    this.#peopleLines.add(people);
  }

  /** Others' lines arrived at these server times (the channel's pace); minutes older than 24 h are forgotten. */
  countLines(timestamps: Iterable<number>): void {
    this.#lineMinutes.add(timestamps);
  }

  /** Others' lines in the `windowMs` before server time `now`, to the minute (the window's first minute counts whole). */
  linesIn(windowMs: number, now: number): number {
    return this.#lineMinutes.in(windowMs, now);
  }

  /**
   * Whether one more agent's line would take the agents past `share` of the room's talk: agents'
   * lines (ours and others') of the last 24 h against people's lines of the last 24 h, but never
   * fewer than {@link SHARE_MIN_LINES}. `agents`/`people`: the counts it read.
   */
  agentsAtShare(share: number, now: number): { at: boolean; agents: number; people: number } {
    const agents = this.#agentLines.in(DAY_MS, now);
    const people = this.#peopleLines.in(DAY_MS, now);
    return { at: agents + 1 > share * Math.max(SHARE_MIN_LINES, people), agents, people };
  }

  /** A reply of ours went out for these msg ids. */
  noteAnswered(ids: Iterable<string>): void {
    for (const id of ids) this.#answered.add(id);
  }

  answered(msgId: string): boolean {
    return this.#answered.has(msgId);
  }

  /** Other members' lines of a batch join the recent ones (at most `size`). Returns those from before. */
  rememberOthers(others: readonly InboundMessage[], size: number): readonly InboundMessage[] {
    const before = this.#othersRecent;
    if (size > 0) this.#othersRecent = [...before, ...others].slice(-size);
    return before;
  }

  snapshot(): MonitorSnapshot {
    return {
      budgetEvents: this.#budgetEvents.map((e) => [e[0], e[1], e[2]]),
      agentChain: this.#agentChain,
      // Left out while empty: a group nobody addressed saves what it saved before.
      ...(this.#senderCharges.length > 0 ? { senderCharges: this.#senderCharges.map((c): [number, number, string] => [c[0], c[1], c[2]]) } : {}),
    };
  }
}
