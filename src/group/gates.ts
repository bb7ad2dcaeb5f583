// When held messages go: the buffer gate (a trailing debounce with a cap), the engaged follow-up,
// the mention path, the cooldown, the follow-ups' pace and the retry backoff. Every timer of the
// group lives here and clear() clears them all; the flags say what waits. The decisions are the
// pure ones of dispatch-gate.ts; taking the batch and holding the lock are the dispatcher's.
import { BUDGET_WINDOW_MS } from "../config/budget-windows.ts";
import type { InboundMessage, TriggerType } from "../types.ts";
import { CappedDebounce } from "./capped-debounce.ts";
import type { ClientState } from "./client-state.ts";
import { checkMentionDispatch, checkNormalDispatch, followsUp, followUpPaceMs, scaledCooldownMs } from "./dispatch-gate.ts";
import { OrphanWatch, orphanDue } from "./orphans.ts";

type Timer = ReturnType<typeof setTimeout>;

/** What the gates read of the client's shared state. */
export type GatesState = Pick<ClientState, "closed" | "dispatching" | "held" | "ingest" | "settings" | "localNow">;

const NO_STARTS: readonly number[] = Object.freeze([]);

/** The orphan path's side of the gates: whose rank, whether a room contends, how an orphan dispatch starts. */
export interface OrphanPath {
  aid: string;
  /** Another agent is known in the group: the room the orphan path serves. */
  inRoom(): boolean;
  /** Starts an `orphan` dispatch of `question`; false when the lock is held or the client closed. */
  start(question: InboundMessage, now: number): boolean;
  /** The grace the room's pace gives a question asked now (orphans.ts orphanGraceMs). */
  graceMs(): number;
  /** At its due time: the question is still the room's (its asker has not turned to an exchange meanwhile). */
  stillOpen(question: InboundMessage): boolean;
}

export class DispatchGates {
  readonly #s: GatesState;
  /** Starts a dispatch of everything held (the dispatcher checks the lock and close itself). */
  readonly #start: (now: number) => void;
  readonly #orphanPath: OrphanPath | undefined;
  /** Open questions waiting for their grace period (orphans.ts); made on the first. */
  #orphans: OrphanWatch | null = null;
  /** Armed for the watch's earliest due time; kept across dispatches (it holds no held message). */
  #orphanTimer: Timer | undefined;
  // Timers hold pending messages, so they keep the process alive until clear() clears them.
  /** Buffer gate: trailing debounce (bufferGateMs) capped at bufferGateMaxWaitMs. */
  readonly #bufferGate: CappedDebounce;
  /** Engaged follow-up: armed while a message from an engaged speaker waits. */
  readonly #engagedGate: CappedDebounce;
  /** Armed when pending messages wait out the cooldown after the last dispatch. */
  #cooldownTimer: Timer | undefined;
  /** Armed after a failed dispatch; the retry takes everything held. */
  #retryTimer: Timer | undefined;
  /** Armed when a mention must wait for mentionMinIntervalMs. */
  #mentionTimer: Timer | undefined;
  /** Armed while a follow-up waits for its pace (followUpPaceMs). */
  #paceTimer: Timer | undefined;
  #mentionWaiting = false;
  #engagedWaiting = false;
  /** Only agents' mentions wait: the earliest local time they may dispatch; null otherwise. */
  #agentGapUntil: number | null = null;
  #lastDispatchEndLocal: number | null = null;
  #lastMentionDispatchLocal: number | null = null;
  /** Local start times of recent mention and engaged dispatches (pacing follow-ups, oldest first); made on the first. */
  #addressedStarts: number[] | null = null;
  /** Aborted when a mention arrives during the running dispatch (ends its send delay). */
  #mentionController: AbortController | null = null;

  constructor(s: GatesState, start: (now: number) => void, orphanPath?: OrphanPath) {
    this.#s = s;
    this.#start = start;
    this.#orphanPath = orphanPath;
    this.#bufferGate = new CappedDebounce(() => this.#onBufferGate(), s.localNow);
    this.#engagedGate = new CappedDebounce(() => this.#onEngagedGate(), s.localNow);
  }

  /** A mention waits for its dispatch (a running dispatch asks: its reply may be cancelled). */
  get mentionWaiting(): boolean {
    return this.#mentionWaiting;
  }

  // ── arrivals ───────────────────────────────────────────────────────────────────────────────

  /** Talk that mentions nobody arrived: the buffer gate waits for quiet, a follow-up for less. */
  talkArrived(now: number, engagedSeen: boolean): void {
    const { bufferGateMs, bufferGateMaxWaitMs, engagedFollowUpMs } = this.#s.settings;
    // A follow-up goes engagedFollowUpMs after the first line that follows up, with every line
    // that came meanwhile; later lines do not push it back (never later than the buffer's cap).
    // Waiting for quiet beyond that merged no more lines on real chats, and made the first line
    // of a burst wait twice as long.
    const followUpMs = Math.min(bufferGateMaxWaitMs, engagedFollowUpMs);
    if (engagedSeen) this.#engagedGate.touch(now, followUpMs, followUpMs);
    this.#bufferGate.touch(now, bufferGateMs, bufferGateMaxWaitMs);
  }

  /**
   * Mention path: everything held goes now, past cooldown. A human's mention is instant; when only
   * agents' mentions wait, they go agentMentionGapMs after the first of them, so two agents cannot
   * answer each other at machine speed. A running dispatch's send delay ends at once.
   */
  mentionArrived(now: number, human: boolean): void {
    clearTimeout(this.#cooldownTimer);
    this.#cooldownTimer = undefined;
    this.#flushBufferGateToQueue();
    if (human) this.#agentGapUntil = null;
    else if (!this.#mentionWaiting && this.#s.settings.agentMentionGapMs > 0) this.#agentGapUntil = now + this.#s.settings.agentMentionGapMs;
    this.#mentionWaiting = true;
    this.#mentionController?.abort();
    this.#tryMentionDispatch(now);
  }

  /**
   * A person asked a question that may be orphaned (orphans.ts mayBeOrphaned): in a room of agents,
   * it is watched until its due time (grace + this agent's rank of the spread).
   */
  questionArrived(message: InboundMessage, now: number): void {
    const path = this.#orphanPath;
    const settings = this.#s.settings.orphans;
    if (path === undefined || !settings.enabled || !path.inRoom()) return;
    (this.#orphans ??= new OrphanWatch()).add(message, orphanDue({ askedLocal: now, aid: path.aid, msgId: message.msgId, settings, graceMs: path.graceMs() }));
    this.#armOrphanTimer(now);
  }

  /**
   * An orphan dispatch found the room's share of agents' lines taken (`agents-share`): the question
   * waits one more turn of the spread, while it is fresh (the agent side checks that).
   */
  orphanWaitsForShare(message: InboundMessage, now: number): void {
    const settings = this.#s.settings.orphans;
    (this.#orphans ??= new OrphanWatch()).add(message, now + Math.max(1, settings.spreadMs));
    this.#armOrphanTimer(now);
  }

  /**
   * Capacity drops took held messages. A waiting mention (or follow-up) that was dropped is no
   * longer waiting: the running dispatch must not cancel its reply for it, and the next plain
   * batch waits its cooldown.
   */
  afterCapacityDrop(): void {
    const held = this.#s.held;
    if (held.incoming.length === 0) this.#bufferGate.cancel();
    if (this.#mentionWaiting && !held.holdsMention()) {
      this.#mentionWaiting = false;
      this.#agentGapUntil = null;
      clearTimeout(this.#mentionTimer);
      this.#mentionTimer = undefined;
    }
    if (this.#engagedWaiting && !held.pending.some(followsUp)) this.#engagedWaiting = false;
  }

  // ── the dispatcher's side ──────────────────────────────────────────────────────────────────

  /** Everything held was taken: the debounces have nothing left to wait for. */
  taken(): void {
    this.#bufferGate.cancel();
    this.#engagedGate.cancel();
  }

  /** Nothing waits any more: every timer cleared, no waiting flag left (a stale one would hold back every later message). */
  reset(): void {
    this.clear();
    this.#mentionWaiting = this.#engagedWaiting = false;
  }

  /** A dispatch of `trigger` starts at local `now`. The signal is aborted by a mention arriving meanwhile. */
  dispatchStarted(trigger: TriggerType, now: number): AbortSignal {
    this.reset();
    this.#agentGapUntil = null;
    const controller = (this.#mentionController = new AbortController());
    if (trigger === "mention") this.#lastMentionDispatchLocal = now;
    if (trigger !== "normal") {
      const starts = (this.#addressedStarts ??= []);
      starts.push(now);
      while (starts.length > 0 && (starts[0]! <= now - BUDGET_WINDOW_MS["5m"] || starts.length > 1024)) starts.shift();
    }
    return controller.signal;
  }

  /** Messages the dispatch did not handle are held again: a mention among them goes next. */
  heldAgain(back: readonly InboundMessage[]): void {
    if (back.some((m) => m.isMention)) this.#mentionWaiting = true;
    else if (back.some(followsUp)) this.#engagedWaiting = true;
  }

  /** A failed dispatch is retried after `ms`, with everything held then. */
  retryIn(ms: number): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => this.#onRetryTimer(), ms);
  }

  /** The lock was released at local `now`: the cooldown counts from here. */
  dispatchEnded(now: number): void {
    this.#mentionController = null;
    this.#lastDispatchEndLocal = now;
  }

  /**
   * What the lock kept waiting goes first, in order: a waiting mention, a due orphan, whatever the
   * retry timer will take when it fires, a follow-up. False when none of them was waiting.
   */
  #handOnLock(now: number): boolean {
    if (this.#mentionWaiting) {
      this.#tryMentionDispatch(now);
      return true;
    }
    // A due orphan's dispatch holds the lock; what waits goes after it.
    if (this.#startDueOrphan(now)) return true;
    // The retry timer takes everything held when it fires.
    if (this.#retryTimer !== undefined) return true;
    if (this.#engagedWaiting) {
      this.#engagedWaiting = false;
      this.#tryFollowUpDispatch(now);
      return true;
    }
    return false;
  }

  /** After the lock is released: a waiting mention, then a due orphan, then a follow-up go at once; else cooldown. */
  afterDispatch(now: number): void {
    if (this.#handOnLock(now)) return;
    this.#flushBufferGateToQueue();
    this.#tryDispatch(now);
  }

  /**
   * An orphan dispatch released the lock. It took nothing held and started no cooldown: what was
   * kept waiting by the lock goes now (a mention, another due orphan, a follow-up, held talk);
   * the buffer gate keeps its own time.
   */
  afterOrphanDispatch(now: number): void {
    this.#mentionController = null;
    if (!this.#handOnLock(now) && this.#s.held.pending.length > 0) this.#tryDispatch(now);
    this.#armOrphanTimer(now);
  }

  /** Closing: the watched questions go too. */
  shutdown(): void {
    this.reset();
    clearTimeout(this.#orphanTimer);
    this.#orphanTimer = undefined;
    this.#orphans?.clear();
  }

  clear(): void {
    this.#bufferGate.cancel();
    this.#engagedGate.cancel();
    clearTimeout(this.#cooldownTimer);
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#mentionTimer);
    clearTimeout(this.#paceTimer);
    this.#cooldownTimer = this.#retryTimer = this.#mentionTimer = this.#paceTimer = undefined;
  }

  // ── the paths to a dispatch ────────────────────────────────────────────────────────────────

  #onBufferGate(): void {
    this.#flushBufferGateToQueue();
    this.#tryDispatch(this.#s.localNow());
  }

  #onEngagedGate(): void {
    const now = this.#s.localNow();
    this.#flushBufferGateToQueue();
    // Capacity drops may have taken the engaged messages: then this is plain unaddressed talk.
    if (!this.#s.held.pending.some(followsUp)) return this.#tryDispatch(now);
    // A follow-up skips the cooldown, but not the lock, a pending retry or a waiting mention.
    if (this.#s.dispatching) this.#engagedWaiting = true;
    else if (this.#retryTimer === undefined && !this.#mentionWaiting) this.#tryFollowUpDispatch(now);
  }

  /** A follow-up goes now, or when its pace allows (a mention arriving meanwhile takes it along). */
  #tryFollowUpDispatch(now: number): void {
    if (!this.#waitForPace(now)) this.#start(now);
  }

  /**
   * True when held follow-ups must wait for their pace (followUpPaceMs): the pace timer is armed
   * and dispatches them (with whatever is held then) when the reserve allows.
   */
  #waitForPace(now: number): boolean {
    const budget = this.#s.settings.budget;
    if (!budget.enabled || !this.#s.held.pending.some(followsUp)) return false;
    const wait = followUpPaceMs({ now, recentStarts: this.#addressedStarts ?? NO_STARTS, allowance: budget.addressed["5m"].messages, windowMs: BUDGET_WINDOW_MS["5m"] });
    if (wait <= 0) return false;
    if (this.#paceTimer === undefined) {
      this.#paceTimer = setTimeout(() => {
        this.#paceTimer = undefined;
        if (this.#s.closed) return;
        if (this.#s.dispatching) this.#engagedWaiting = true;
        else if (this.#retryTimer === undefined && !this.#mentionWaiting) this.#tryFollowUpDispatch(this.#s.localNow());
      }, wait);
    }
    return true;
  }

  #flushBufferGateToQueue(): void {
    this.#bufferGate.cancel();
    this.#s.held.flush();
  }

  /** Normal path: lock, pending retry or mention, then cooldown (scaled by vitality). */
  #tryDispatch(now: number): void {
    const s = this.#s;
    if (s.closed || s.held.length === 0) return;
    const state = s.ingest.vitalityAt(now).state;
    const decision = checkNormalDispatch({
      now,
      dispatching: s.dispatching,
      retryPending: this.#retryTimer !== undefined,
      mentionWaiting: this.#mentionWaiting,
      lastDispatchEndedAt: this.#lastDispatchEndLocal,
      cooldownMs: scaledCooldownMs(s.settings, state),
    });
    if (decision.ok) {
      // Held follow-ups make this an addressed dispatch: it keeps their pace.
      if (!this.#waitForPace(now)) this.#start(now);
      return;
    }
    if (decision.reason === "cooldown") {
      clearTimeout(this.#cooldownTimer);
      this.#cooldownTimer = setTimeout(() => {
        this.#cooldownTimer = undefined;
        this.#tryDispatch(s.localNow());
      }, decision.waitMs);
    }
  }

  #tryMentionDispatch(now: number): void {
    const s = this.#s;
    if (s.closed || s.held.length === 0) {
      this.#mentionWaiting = false;
      return;
    }
    const decision = checkMentionDispatch({
      now,
      dispatching: s.dispatching,
      retryPending: this.#retryTimer !== undefined,
      lastMentionDispatchAt: this.#lastMentionDispatchLocal,
      mentionMinIntervalMs: s.settings.mentionMinIntervalMs,
      agentGapUntil: this.#agentGapUntil,
    });
    if (decision.ok) return this.#start(now);
    if (decision.reason === "mention-interval" || decision.reason === "agent-gap") {
      clearTimeout(this.#mentionTimer);
      this.#mentionTimer = setTimeout(() => {
        this.#mentionTimer = undefined;
        this.#tryMentionDispatch(s.localNow());
      }, decision.waitMs);
    }
  }

  /** Starts the earliest due orphan when nothing holds the lock or waits before it. True when one started. */
  #startDueOrphan(now: number): boolean {
    const watch = this.#orphans;
    const path = this.#orphanPath;
    if (watch === null || path === undefined || this.#s.closed || this.#s.dispatching || this.#mentionWaiting || this.#retryTimer !== undefined) return false;
    let due = watch.takeDue(now);
    // A question whose asker turned to an exchange meanwhile is nobody's to take: it goes.
    while (due !== undefined && !path.stillOpen(due)) due = watch.takeDue(now);
    if (due === undefined) return false;
    if (path.start(due, now)) return true;
    watch.add(due, now);
    return false;
  }

  /** Armed for the next question that comes due; one due already waits for the lock (afterDispatch). */
  #armOrphanTimer(now: number): void {
    const at = this.#orphans?.nextAfter(now);
    clearTimeout(this.#orphanTimer);
    this.#orphanTimer = undefined;
    if (at === undefined || this.#s.closed) return;
    this.#orphanTimer = setTimeout(() => {
      this.#orphanTimer = undefined;
      const t = this.#s.localNow();
      // Held by the lock, a retry or a waiting mention: afterDispatch starts it when the lock is released.
      this.#startDueOrphan(t);
      this.#armOrphanTimer(t);
    }, at - now);
  }

  #onRetryTimer(): void {
    this.#retryTimer = undefined;
    if (this.#s.dispatching || this.#s.closed) return;
    const now = this.#s.localNow();
    if (this.#mentionWaiting) this.#tryMentionDispatch(now);
    else this.#start(now);
  }
}
