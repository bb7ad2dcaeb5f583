// The one abortable wait: `setTimeout` from node:timers/promises with an AbortSignal. Used by the
// transport's retry back-offs, the monitor's send delays, the OpenClaw host's retry pauses and the
// scripted back-end's latency.
import timers from "node:timers/promises";

/**
 * Resolves after `ms` (at once when `ms` ≤ 0). When `signal` aborts first, or has already, the
 * timer is cleared and the wait rejects with `signal.reason` — the one abort behaviour: a caller
 * for whom an abort is no error (a send delay a newer mention cuts short) catches it; one that
 * must stop says how (`TransportError("CLOSED")`). The timer never keeps the process alive.
 */
export async function wait(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw signal.reason;
  if (ms <= 0) return;
  try {
    // Through the module object, not a named import: a fake clock (replay, tests) replaces this
    // method on the module, and only a lookup at call time sees the replacement.
    await timers.setTimeout(ms, undefined, signal ? { signal, ref: false } : { ref: false });
  } catch (err) {
    // Node rejects with an AbortError whose cause is the reason; a fake clock with the reason itself.
    if (signal?.aborted) throw signal.reason;
    throw err;
  }
}
