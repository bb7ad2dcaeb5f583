// Group vitality (seed 003 §3): a sliding window of {server ts, sender} and the four-state rule.
// Pure: every function takes the server-time `now`; nothing here reads a clock or arms a timer.
import type { GroupVitality, VitalityState } from "../types.ts";

/**
 * Events kept ascending by server timestamp in two parallel arrays (no object per event), read
 * from `start`; the dead prefix is compacted away in bulk. An idle group holds two empty arrays.
 */
export interface VitalityWindow {
  readonly windowMs: number;
  readonly maxEvents: number;
  ts: number[];
  senders: string[];
  start: number;
}

export function createVitalityWindow(p: { windowMs: number; maxEvents: number }): VitalityWindow {
  return { windowMs: p.windowMs, maxEvents: p.maxEvents, ts: [], senders: [], start: 0 };
}

/** Number of live events (after the last prune; computeVitality still filters by `now`). */
export function vitalityWindowSize(w: VitalityWindow): number {
  return w.ts.length - w.start;
}

/**
 * Adds one message. Keeps ascending order even when a late pull delivers older messages, and
 * keeps only the newest `maxEvents` (seed §3.5: at most 200).
 */
export function appendVitalityEvent(w: VitalityWindow, ts: number, sender: string): void {
  const n = w.ts.length;
  if (n === w.start || (w.ts[n - 1] as number) <= ts) {
    w.ts.push(ts);
    w.senders.push(sender);
  } else {
    const at = upperBound(w.ts, w.start, n, ts);
    w.ts.splice(at, 0, ts);
    w.senders.splice(at, 0, sender);
  }
  if (w.ts.length - w.start > w.maxEvents) w.start = w.ts.length - w.maxEvents;
  compact(w);
}

/** Drops events older than `now - windowMs` (server time). */
export function pruneVitalityWindow(w: VitalityWindow, now: number): void {
  w.start = lowerBound(w.ts, w.start, w.ts.length, now - w.windowMs);
  compact(w);
}

function compact(w: VitalityWindow): void {
  if (w.start === 0) return;
  if (w.start === w.ts.length) {
    // Fresh arrays let an idle group give its backing store back.
    w.ts = [];
    w.senders = [];
    w.start = 0;
  } else if (w.start >= 32 && w.start * 2 >= w.ts.length) {
    w.ts.splice(0, w.start);
    w.senders.splice(0, w.start);
    w.start = 0;
  }
}

/** First index in [lo, hi) with a[i] >= x. */
function lowerBound(a: readonly number[], lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index in [lo, hi) with a[i] > x. */
function upperBound(a: readonly number[], lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Seed §3.3: 0 → DORMANT; ≤ 5 messages and ≤ 2 speakers → COOLING; ≤ 15 → ACTIVE; else HEATED. */
export function classifyVitality(messagesIn5m: number, uniqueSpeakersIn5m: number): VitalityState {
  if (messagesIn5m === 0) return "DORMANT";
  if (messagesIn5m <= 5 && uniqueSpeakersIn5m <= 2) return "COOLING";
  if (messagesIn5m <= 15) return "ACTIVE";
  return "HEATED";
}

/**
 * Vitality at server time `now`: events with `ts >= now - windowMs` (seed §3.5), distinct
 * senders among them, and our own sends in the same window. Does not mutate the window.
 */
export function computeVitality(w: VitalityWindow, now: number, myMessageTimes: readonly number[]): GroupVitality {
  const cutoff = now - w.windowMs;
  const from = lowerBound(w.ts, w.start, w.ts.length, cutoff);
  const messagesIn5m = w.ts.length - from;
  const speakers = new Set<string>();
  for (let i = from; i < w.senders.length; i++) speakers.add(w.senders[i] as string);
  let myMessagesIn5m = 0;
  for (const t of myMessageTimes) if (t >= cutoff) myMessagesIn5m++;
  return {
    state: classifyVitality(messagesIn5m, speakers.size),
    messagesIn5m,
    uniqueSpeakersIn5m: speakers.size,
    myMessagesIn5m,
    updatedAt: now,
  };
}

/** Keeps a plain list of server timestamps (our own sends) inside the window: prune + cap. */
export function appendOwnTime(times: number[], ts: number, now: number, windowMs: number, max: number): void {
  times.push(ts);
  pruneOwnTimes(times, now, windowMs);
  if (times.length > max) times.splice(0, times.length - max);
}

export function pruneOwnTimes(times: number[], now: number, windowMs: number): void {
  const cutoff = now - windowMs;
  let keep = 0;
  for (const t of times) if (t >= cutoff) times[keep++] = t;
  times.length = keep;
}

/** Distinct senders currently in the window (for naming checks on our own messages). */
export function windowSenders(w: VitalityWindow): Set<string> {
  const out = new Set<string>();
  for (let i = w.start; i < w.senders.length; i++) out.add(w.senders[i] as string);
  return out;
}
