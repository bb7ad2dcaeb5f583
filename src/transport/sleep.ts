// An abortable wait for the transport's retry back-offs.

/** Resolves after `ms`, or rejects with `onAbort()` as soon as `signal` aborts. The timer is unref'ed. */
export function sleep(ms: number, signal: AbortSignal, onAbort: () => Error): Promise<void> {
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<void>((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(onAbort());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", abort);
      resolve();
    }, ms);
    timer.unref?.();
    signal.addEventListener("abort", abort, { once: true });
  });
}
