// Exponential backoff with jitter, the one the project uses everywhere: the transport's re-pulls,
// register retries and 1010 send retries, the network layer's redials and session rebuilds. Pure.

export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
  /**
   * Fraction of the delay that is randomised, 0..1. With jitter j the delay is drawn from
   * [d·(1−j), d]: many clients dropped by one server restart do not return in lockstep. The
   * network layer uses ½ ("equal jitter": never sooner than half a step).
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
