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

/**
 * How far the local clock may run ahead of the server's and still be corrected by message
 * timestamps. Synced hosts differ by well under a second and an unsynced one drifts seconds a
 * day; past this the local clock is a floor for the estimate, so a backlog pulled after a
 * restart — stamped an hour ago — can never become "now".
 */
export const MAX_CLOCK_SKEW_MS = 10 * 60_000;

/** Server time now, estimated from the local time `localNow`. */
export function serverNow(c: ServerClock, localNow: number): number {
  if (c.anchorServer === null) return localNow;
  return Math.max(c.anchorServer + (localNow - c.anchorLocal), localNow - MAX_CLOCK_SKEW_MS);
}

/**
 * Feeds one server timestamp that arrived at `localNow`. The anchor only moves forward: a
 * message stamped earlier than the current estimate (delivered late, or history) says nothing
 * new about the server's clock, and the estimate never runs backwards. Before any anchor the
 * estimate is the local clock less {@link MAX_CLOCK_SKEW_MS}: a server behind us by less than that
 * anchors as usual, a backlog pulled after a restart (stamped hours ago) never becomes the clock.
 */
export function observeServerTime(c: ServerClock, serverTs: number, localNow: number): void {
  const known = c.anchorServer === null ? localNow - MAX_CLOCK_SKEW_MS : serverNow(c, localNow);
  if (serverTs > known) {
    c.anchorServer = serverTs;
    c.anchorLocal = localNow;
  }
}
