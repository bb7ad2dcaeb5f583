export interface RateLimit {
  /** Messages allowed … */
  messages: number;
  /** … per this sliding window. */
  perMs: number;
}

export type RateDecision = { ok: true } | { ok: false; reason: "rate-limited"; retryAfterMs: number };

/**
 * Sliding-window check over the send times in the window (oldest first), pruned with `now` on
 * read rather than by a background timer.
 */
export function checkRateLimit(sentAt: readonly number[], limit: RateLimit, now: number): RateDecision {
  if (limit.messages <= 0) return { ok: false, reason: "rate-limited", retryAfterMs: Math.max(1, limit.perMs) };
  const windowStart = now - limit.perMs;
  const inWindow = sentAt.filter((t) => t > windowStart);
  if (inWindow.length < limit.messages) return { ok: true };
  const oldestThatMustExpire = inWindow[inWindow.length - limit.messages]!;
  return { ok: false, reason: "rate-limited", retryAfterMs: Math.max(1, oldestThatMustExpire + limit.perMs - now) };
}

/** Per-key sliding windows (key = group + member). */
export class RateLimiter {
  readonly #limit: RateLimit;
  readonly #sent = new Map<string, number[]>();

  constructor(limit: RateLimit) {
    this.#limit = limit;
  }

  /** Records a send when allowed. */
  take(key: string, now: number): RateDecision {
    const times = (this.#sent.get(key) ?? []).filter((t) => t > now - this.#limit.perMs);
    const decision = checkRateLimit(times, this.#limit, now);
    if (decision.ok) times.push(now);
    if (times.length > 0) this.#sent.set(key, times);
    else this.#sent.delete(key);
    return decision;
  }
}
