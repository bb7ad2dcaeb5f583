// Message ids as the SDK makes them (milliseconds as a string), but never the same twice: two
// frames in one millisecond, or a clock that steps back, still get increasing ids. Pure.

/** The next id after `last` at local time `now`. */
export const nextMessageId = (last: number, now: number): number => Math.max(Math.floor(now), last + 1);
