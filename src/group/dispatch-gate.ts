// Pure timing decisions of the group client: when the buffer gate fires, whether a dispatch may
// start now, how long to back off. Local-clock milliseconds in, reasons out; no timers here.
import type { GroupSettings, InboundMessage, TriggerType, VitalityState } from "../types.ts";

export type GateBlockReason = "dispatching" | "retry-backoff" | "mention-waiting" | "cooldown" | "mention-interval" | "agent-gap";

export type GateDecision = { ok: true } | { ok: false; reason: GateBlockReason; waitMs?: number };

/**
 * Trailing debounce with a cap: each message pushes the deadline to `now + gateMs`, but never
 * past `capAt` (the first buffered message's arrival + max wait), so a busy group still flushes.
 */
export function bufferDeadline(p: { now: number; gateMs: number; capAt: number }): number {
  return Math.min(p.now + p.gateMs, p.capAt);
}

/** Cooldown after a dispatch for unaddressed talk: a hot group raises the bar (seed §3.4). */
export function scaledCooldownMs(settings: Pick<GroupSettings, "cooldownMs" | "cooldownScale">, state: VitalityState): number {
  return Math.round(settings.cooldownMs * settings.cooldownScale[state]);
}

/** The normal path (buffer gate or cooldown timer fired): may the held messages go now? */
export function checkNormalDispatch(p: {
  now: number;
  dispatching: boolean;
  retryPending: boolean;
  mentionWaiting: boolean;
  lastDispatchEndedAt: number | null;
  cooldownMs: number;
}): GateDecision {
  if (p.dispatching) return { ok: false, reason: "dispatching" };
  // A scheduled retry or a spaced-out mention will take everything held; do not race it.
  if (p.retryPending) return { ok: false, reason: "retry-backoff" };
  if (p.mentionWaiting) return { ok: false, reason: "mention-waiting" };
  if (p.lastDispatchEndedAt !== null) {
    const waitMs = p.lastDispatchEndedAt + p.cooldownMs - p.now;
    if (waitMs > 0) return { ok: false, reason: "cooldown", waitMs };
  }
  return { ok: true };
}

/**
 * The mention path: never waits for cooldown; only the lock, the spacing and a retry backoff — a
 * failing back-end is not hit again by each new mention; the retry takes the mention with it.
 */
export function checkMentionDispatch(p: {
  now: number;
  dispatching: boolean;
  retryPending?: boolean;
  lastMentionDispatchAt: number | null;
  mentionMinIntervalMs: number;
  /** Only agents' mentions are waiting: not before this local time (their arrival + the agent gap). */
  agentGapUntil?: number | null;
}): GateDecision {
  if (p.dispatching) return { ok: false, reason: "dispatching" };
  if (p.retryPending) return { ok: false, reason: "retry-backoff" };
  if (p.agentGapUntil != null && p.agentGapUntil > p.now) return { ok: false, reason: "agent-gap", waitMs: p.agentGapUntil - p.now };
  if (p.lastMentionDispatchAt !== null && p.mentionMinIntervalMs > 0) {
    const waitMs = p.lastMentionDispatchAt + p.mentionMinIntervalMs - p.now;
    if (waitMs > 0) return { ok: false, reason: "mention-interval", waitMs };
  }
  return { ok: true };
}

/** Backoff before retry number `attempt + 1`: base × 2^attempt (the exponent capped at 6). */
export function retryDelayMs(retryBackoffMs: number, attempt: number): number {
  return retryBackoffMs * 2 ** Math.min(attempt, 6);
}

/** A follow-up that may be for us: an engaged speaker's line, or one in a shared conversation. It goes as promptly as an engaged one. */
export function followsUp(m: Pick<InboundMessage, "engaged" | "maybeOurs">): boolean {
  return m.engaged || m.maybeOurs === true;
}

/** A batch's trigger follows its content: any mention → mention; any engaged (or maybe ours) → engaged. */
export function triggerOf(messages: readonly InboundMessage[]): { trigger: TriggerType; mentionCount: number } {
  let mentionCount = 0;
  let engaged = false;
  for (const m of messages) {
    if (m.isMention) mentionCount++;
    else if (followsUp(m)) engaged = true;
  }
  return { trigger: mentionCount > 0 ? "mention" : engaged ? "engaged" : "normal", mentionCount };
}

/**
 * Engaged follow-ups and lines that may be ours share the addressed allowance with mentions. They
 * may use it up to a reserve (a fifth of the 5-minute share, at least one call) kept for
 * mentions; past that, the next follow-up waits until enough earlier dispatches have left the
 * window, and what arrived meanwhile goes with it in one call. A fast back-and-forth so batches
 * its lines instead of spending the allowance and finding it spent when someone mentions us.
 * Mentions are never paced. Returns the wait in ms (0: go now). `recentStarts`: local start
 * times of addressed dispatches, oldest first.
 */
export function followUpPaceMs(p: { now: number; recentStarts: readonly number[]; allowance: number; windowMs: number }): number {
  if (p.allowance <= 0) return 0;
  const limit = Math.max(1, p.allowance - Math.max(1, Math.floor(p.allowance / RESERVE_SHARE)));
  const inWindow = p.recentStarts.filter((t) => t > p.now - p.windowMs);
  if (inWindow.length < limit) return 0;
  // The start whose leaving brings the count back under the limit.
  const leaving = inWindow[inWindow.length - limit]!;
  return Math.max(0, leaving + p.windowMs - p.now + 1);
}

/** A 1/RESERVE_SHARE part of the addressed allowance is kept for mentions. */
const RESERVE_SHARE = 5;
