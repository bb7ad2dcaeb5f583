// How long to wait before the next sign-in/dial after `failures` consecutive failures: pure.
import { computeBackoffDelay } from "../wire/backoff.ts";

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
  // The transport's backoff with half of each step random: `1 − random` so a larger draw waits longer.
  const settings = { baseMs: options.baseMs ?? 1000, maxMs: options.maxMs ?? 60_000, jitter: 0.5 };
  return computeBackoffDelay(failures - 1, settings, () => 1 - Math.min(Math.max(random, 0), 1));
}
