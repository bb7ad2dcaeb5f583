// How long to wait before the next sign-in/dial after `failures` consecutive failures: pure.

export interface BackoffOptions {
  /** Delay after the first failure, before jitter. Default 1000 ms. */
  baseMs?: number;
  /** Ceiling before jitter. Default 60000 ms. */
  maxMs?: number;
}

/**
 * Exponential with "equal jitter": half the step is fixed, half random, so many identities
 * refused at once do not come back in lockstep, and no retry is ever sooner than half a step.
 * failures ≤ 0 → 0 (a drop after a stable connection redials at once).
 */
export function backoffDelayMs(failures: number, random: number, options: BackoffOptions = {}): number {
  if (failures <= 0) return 0;
  const base = options.baseMs ?? 1000;
  const step = Math.min(options.maxMs ?? 60_000, base * 2 ** Math.min(failures - 1, 30));
  return Math.round(step / 2 + (step / 2) * Math.min(Math.max(random, 0), 1));
}
