// Group vitality (seed 003 §3): a sliding window of {server ts, sender} and the four-state rule.
// Pure: every function takes the server-time `now`; nothing here reads a clock or arms a timer.
import type { GroupVitality, VitalityState } from "../types.ts";

/**
 * Events kept ascending by server timestamp in one array of pairs `[offset, sender, …]`, where
 * `offset = ts - base` is a small integer (no boxed number per event): a message writes one
 * place, which matters when thousands of groups each take a message in turn. Read from event
 * index `start`; the dead prefix is compacted away in bulk. An idle group holds one empty array.
 */
export interface VitalityWindow {
  readonly windowMs: number;
  readonly maxEvents: number;
  /** `[ts - base, sender]` per event, ascending. */
  ev: Array<number | string>;
  /** Server time that offsets count from; reset whenever the window empties. */
  base: number;
  /** First live event (an event index: its pair starts at `2 * start`). */
  start: number;
}

/** Offsets are rebased before they leave the small-integer range (~12 days from `base`). */
const REBASE_AT = 2 ** 29;

export function createVitalityWindow(p: { windowMs: number; maxEvents: number }): VitalityWindow {
  return { windowMs: p.windowMs, maxEvents: p.maxEvents, ev: [], base: 0, start: 0 };
}

/** Number of live events (after the last prune; computeVitality still filters by `now`). */
export function vitalityWindowSize(w: VitalityWindow): number {
  return (w.ev.length >> 1) - w.start;
}

/** The live events as plain lists (a copy, oldest first). */
export function windowEvents(w: VitalityWindow): { ts: number[]; senders: string[] } {
  const ts: number[] = [];
  const senders: string[] = [];
  for (let i = 2 * w.start; i < w.ev.length; i += 2) {
    ts.push((w.ev[i] as number) + w.base);
    senders.push(w.ev[i + 1] as string);
  }
  return { ts, senders };
}

/**
 * Adds one message. Keeps ascending order even when a late pull delivers older messages, and
 * keeps only the newest `maxEvents` (seed §3.5: at most 200).
 */
export function appendVitalityEvent(w: VitalityWindow, ts: number, sender: string): void {
  const ev = w.ev;
  const n = ev.length;
  if (n === 2 * w.start) {
    if (n !== 0) w.ev = [];
    w.base = ts;
    w.start = 0;
    w.ev.push(0, sender);
    return;
  }
  let off = ts - w.base;
  if (off >= REBASE_AT || off <= -REBASE_AT) off = rebase(w, ts);
  if ((ev[n - 2] as number) <= off) ev.push(off, sender);
  else {
    const at = 2 * upperBound(ev, w.start, n >> 1, off);
    ev.splice(at, 0, off, sender);
  }
  if ((ev.length >> 1) - w.start > w.maxEvents) w.start = (ev.length >> 1) - w.maxEvents;
  compact(w);
}

/** Moves `base` to `ts` (shifting every live offset) and returns the offset of `ts`: 0. */
function rebase(w: VitalityWindow, ts: number): number {
  const shift = ts - w.base;
  for (let i = 2 * w.start; i < w.ev.length; i += 2) w.ev[i] = (w.ev[i] as number) - shift;
  w.base = ts;
  return 0;
}

/** Drops events older than `now - windowMs` (server time). */
export function pruneVitalityWindow(w: VitalityWindow, now: number): void {
  w.start = lowerBound(w.ev, w.start, w.ev.length >> 1, now - w.windowMs - w.base);
  compact(w);
}

function compact(w: VitalityWindow): void {
  if (w.start === 0) return;
  const events = w.ev.length >> 1;
  if (w.start === events) {
    // A fresh array lets an idle group give its backing store back.
    w.ev = [];
    w.start = 0;
  } else if (w.start >= 32 && w.start * 2 >= events) {
    w.ev.splice(0, 2 * w.start);
    w.start = 0;
  }
}

/** First event index in [lo, hi) whose offset is >= x. */
function lowerBound(ev: ReadonlyArray<number | string>, lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ev[2 * mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First event index in [lo, hi) whose offset is > x. */
function upperBound(ev: ReadonlyArray<number | string>, lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ev[2 * mid] as number) <= x) lo = mid + 1;
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
  const events = w.ev.length >> 1;
  const from = lowerBound(w.ev, w.start, events, cutoff - w.base);
  const messagesIn5m = events - from;
  const speakers = new Set<string>();
  for (let i = 2 * from + 1; i < w.ev.length; i += 2) speakers.add(w.ev[i] as string);
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
  for (let i = 2 * w.start + 1; i < w.ev.length; i += 2) out.add(w.ev[i] as string);
  return out;
}
