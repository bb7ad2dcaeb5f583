// The local clock of a group: the group client's default (its timers and its server-time
// estimate) and the monitor's time inside a dispatch, so elapsed time added to a server time
// estimated on one side comes from the same clock on the other.

/**
 * A monotonic clock on the epoch scale, not the wall clock: waits and elapsed times are durations,
 * and a wall clock stepped an hour (NTP, a user) would move them by that hour. Read on each call:
 * fake timers replace `performance` after this module may have been loaded.
 */
export function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}
