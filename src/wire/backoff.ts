// Exponential backoff with jitter: the delay both ends (the client's retries, the network's
// redials) wait before trying again. Pure.

export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
  /**
   * Fraction of the delay that is randomised, 0..1. With jitter j the delay is drawn from
   * [d·(1−j), d]: many clients dropped by one server restart do not return in lockstep.
   */
  jitter?: number;
}

/**
 * Delay before retry number `attempt` (0-based): min(maxMs, baseMs·2^attempt), reduced by up to
 * `jitter` of itself. `random` returns [0, 1).
 */
export function computeBackoffDelay(attempt: number, settings: BackoffSettings, random: () => number): number {
  const jitter = Math.min(1, Math.max(0, settings.jitter ?? 0));
  const exp = settings.baseMs * 2 ** Math.min(Math.max(0, attempt), 30);
  const capped = Math.min(settings.maxMs, exp);
  return Math.round(capped * (1 - jitter * random()));
}
