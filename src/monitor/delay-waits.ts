// The monitor's send delays: a reply waits to look human, but a newer mention (`wake`) or closing
// the monitor ends the wait at once, and a waiting reply never keeps a shutting-down process alive.

export class DelayWaits {
  readonly #lifetime: AbortSignal;
  /** One per reply waiting; created on first use (most groups are idle, and an empty Set per group adds up). */
  #timers: Set<ReturnType<typeof setTimeout>> | undefined;

  constructor(lifetime: AbortSignal) {
    this.#lifetime = lifetime;
  }

  /** Waits `ms`, or less: the monitor's lifetime ending or `wake` aborting ends the wait at once. */
  wait(ms: number, wake?: AbortSignal): Promise<void> {
    if (ms <= 0 || wake?.aborted || this.#lifetime.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#timers?.delete(timer);
        this.#lifetime.removeEventListener("abort", done);
        wake?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref?.();
      (this.#timers ??= new Set()).add(timer);
      this.#lifetime.addEventListener("abort", done, { once: true });
      wake?.addEventListener("abort", done, { once: true });
    });
  }

  /** Clears every waiting timer (the waits themselves end through the lifetime signal). */
  clear(): void {
    for (const t of this.#timers ?? []) clearTimeout(t);
    this.#timers?.clear();
  }
}
