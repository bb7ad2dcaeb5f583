// Server-time estimate. Vitality windows, engaged windows and lastSelfSpeakAt are server time
// (agents' local clocks drift); timers are local time. This is the only bridge between the two.

/**
 * The estimate is the local clock plus `offset` (server minus local time). Each message says
 * `offset ≥ timestamp − arrival`: equal when it arrived live, lower by its age when it is history.
 * So a timestamp *ahead* of the estimate is proof and moves it at once; one *behind* is either an
 * old message (a backlog pulled after a restart) or a sign that the local clock runs ahead (or
 * jumped). One delivery cannot tell which, so a lower offset waits as a `candidate` until a later
 * delivery agrees with it — live traffic does, a backlog delivered in one go never can.
 */
export interface ServerClock {
  /** Server minus local time; 0 until a timestamp showed otherwise (synced clocks are the norm). */
  offset: number;
  /** A lower offset seen in one delivery, waiting for a later one to confirm it; null when none. */
  candidate: { offset: number; local: number } | null;
}

export function createServerClock(): ServerClock {
  return { offset: 0, candidate: null };
}

/**
 * How far behind the estimate a live message may be stamped and still count as on time (the
 * group service's push and the network on the way). Older is news: history, or a wrong estimate.
 */
export const LATE_TOLERANCE_MS = 5_000;
/** Two lower offsets confirm each other when they agree this closely... */
export const CONFIRM_AGREEMENT_MS = 2_000;
/**
 * ...and arrived at least this far apart (local time): pages of one backlog arrive within moments
 * of each other, live messages as they are written.
 */
export const CONFIRM_GAP_MS = 2_000;

/** Server time now, estimated from the local time `localNow`. */
export function serverNow(c: ServerClock, localNow: number): number {
  return localNow + c.offset;
}

/**
 * The earliest server time "now" may turn out to be: the estimate, or the pending lower one. Windows
 * are pruned against this (what is pruned is gone for good) and counted against serverNow, so the
 * messages that arrived while a skewed clock waits for confirmation still count once it is confirmed.
 */
export function serverNowLowerBound(c: ServerClock, localNow: number): number {
  const k = c.candidate;
  return k === null ? localNow + c.offset : localNow + Math.min(c.offset, k.offset);
}

/**
 * Feeds one server timestamp that arrived at local time `localNow` (all messages of one delivery
 * arrive at the same `localNow`). A timestamp ahead of the estimate moves it forward at once; one
 * within {@link LATE_TOLERANCE_MS} behind it is a live message on time; one further behind moves
 * the estimate back only when a later delivery ({@link CONFIRM_GAP_MS} on) agrees with it. A
 * backlog (stamped minutes or hours ago, delivered in one go) therefore never becomes "now", and a
 * local clock that runs or jumps ahead is corrected by the second live message.
 */
export function observeServerTime(c: ServerClock, serverTs: number, localNow: number): void {
  const offset = serverTs - localNow;
  if (offset > c.offset) {
    c.offset = offset;
    c.candidate = null;
    return;
  }
  if (offset >= c.offset - LATE_TOLERANCE_MS) {
    // On time for the current estimate: it holds, and a lower candidate was history after all.
    c.candidate = null;
    return;
  }
  const k = c.candidate;
  if (k !== null && Math.abs(offset - k.offset) <= CONFIRM_AGREEMENT_MS) {
    if (localNow - k.local >= CONFIRM_GAP_MS) {
      c.offset = Math.max(offset, k.offset);
      c.candidate = null;
    }
    // Agreeing but too soon: keep the older candidate for a later delivery to confirm.
    return;
  }
  c.candidate = { offset, local: localNow };
}
