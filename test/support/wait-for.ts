// The one wait of the integration tests: vi.waitFor over a probe. It resolves with the probe's
// value once that is neither undefined nor false, and fails after `timeoutMs` naming what it
// waited for. Under fake timers vi.waitFor advances the clock itself; with real sockets it
// checks every `interval` ms. A wait is always for something that happens: a check that
// something did NOT happen waits for the event that proves it (a settled group, a closed
// connection, a skip decision), never for time to pass.
import { vi } from "vitest";

export function waitFor<T>(probe: () => T | undefined | false, what: string | (() => string), timeoutMs = 5000, interval = 5): Promise<T> {
  return vi.waitFor(
    () => {
      const v = probe();
      if (v === undefined || v === false) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`);
      return v;
    },
    { timeout: timeoutMs, interval },
  );
}
