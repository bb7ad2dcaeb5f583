// Server-time estimate. Vitality windows, engaged windows and lastSelfSpeakAt are server time
// (agents' local clocks drift); timers are local time. This is the only bridge between the two.

/**
 * Anchor = the newest server timestamp seen and the local time it arrived. Estimate = anchor +
 * local time elapsed since. Before any message is seen there is nothing better than the local
 * clock, so the estimate is the local time.
 */
export interface ServerClock {
  anchorServer: number | null;
  anchorLocal: number;
}

export function createServerClock(): ServerClock {
  return { anchorServer: null, anchorLocal: 0 };
}

/** Server time now, estimated from the local time `localNow`. */
export function serverNow(c: ServerClock, localNow: number): number {
  return c.anchorServer === null ? localNow : c.anchorServer + (localNow - c.anchorLocal);
}

/**
 * Feeds one server timestamp that arrived at `localNow`. The anchor only moves forward: a
 * message stamped earlier than the current estimate (delivered late, or history) says nothing
 * new about the server's clock, and the estimate never runs backwards.
 */
export function observeServerTime(c: ServerClock, serverTs: number, localNow: number): void {
  if (c.anchorServer === null || serverTs > c.anchorServer + (localNow - c.anchorLocal)) {
    c.anchorServer = serverTs;
    c.anchorLocal = localNow;
  }
}
