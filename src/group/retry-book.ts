// Failed tries per held message, and the backoff of a failing back-end. Each message counts its
// own tries, so one that joins a failing batch late still gets all of its retries. No timers.
import { retryDelayMs } from "./dispatch-gate.ts";

export class RetryBook<T extends object> {
  /** Failed tries per message; created on the first failure (most groups never fail). */
  #tries: WeakMap<T, number> | null = null;
  /** Consecutive failed dispatches (the backoff exponent); 0 after a success. */
  #failures = 0;

  /** The batch's attempt number: the most tries any of its messages has had. */
  attemptOf(messages: readonly T[]): number {
    if (this.#tries === null) return 0;
    let attempt = 0;
    for (const m of messages) attempt = Math.max(attempt, this.#tries.get(m) ?? 0);
    return attempt;
  }

  succeeded(): void {
    this.#failures = 0;
  }

  /**
   * A dispatch of `messages` failed: which go again (with the backoff before the retry) and which
   * have used up `maxRetries`. No retry (null) when none goes again.
   */
  failed(messages: readonly T[], p: { maxRetries: number; retryBackoffMs: number }): { again: T[]; exhausted: T[]; retryInMs: number | null } {
    const book = (this.#tries ??= new WeakMap());
    const again: T[] = [];
    const exhausted: T[] = [];
    for (const m of messages) {
      const tries = (book.get(m) ?? 0) + 1;
      book.set(m, tries);
      (tries > p.maxRetries ? exhausted : again).push(m);
    }
    if (again.length === 0) {
      this.#failures = 0;
      return { again, exhausted, retryInMs: null };
    }
    this.#failures++;
    return { again, exhausted, retryInMs: retryDelayMs(p.retryBackoffMs, this.#failures - 1) };
  }
}
