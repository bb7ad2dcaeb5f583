// The lines a replay walks, without holding the log: a file is scanned once (every line checked as
// `readLog` checks it, the line count and first time noted) and then read again from the disk
// each time the replay walks it — a file in time order as it is, one out of order through sorted
// runs in temp files (sort-runs.ts). A log that repeats an id is walked the same way: the repeat is
// refused naming its line, as `readLog` does, or with `skipBad` left out of every walk (what is
// kept is each repeated id's first line), however many ids it repeats: the repeats are found by
// joining ids a bucket at a time on disk (findRepeats). Only lines given as an array are held.
import { statSync } from "node:fs";
import { duplicateIdReason, goodLines, LogParseError, MAX_LOG_LINE_BYTES, parseLine, rawLines, tooLongReason, type LogLine } from "./log.ts";
import { HashBuckets } from "./hash-buckets.ts";
import { RUN_BYTES, sortRuns } from "./sort-runs.ts";
import { idHash, IdHashes } from "./id-check.ts";
import { holdHeapGrowth } from "./heap-growth.ts";
import { BoundedMap } from "../util/bounded-map.ts";

/** A log in time order that can be walked as often as needed. */
export interface LineSource {
  /** Good lines. */
  readonly count: number;
  /** The first line's time (undefined: no lines). */
  readonly firstTs: number | undefined;
  /** The first bad lines skipped with `skipBad`, with why, and how many in all. */
  readonly skipped: ReadonlyArray<{ line: number; reason: string }>;
  readonly skippedCount: number;
  /** Whether the lines are held in memory (lines given as an array; a file is walked from the disk). */
  readonly inMemory: boolean;
  /** A fresh walk over the good lines, in time order. */
  lines(): Iterable<LogLine>;
  /** Removes what the source wrote (the sorted runs of a log out of order); no walk after. */
  close(): void;
}

/** A source over lines already in memory (sorted by `ts`). */
export function arraySource(lines: readonly LogLine[], skipped: { skipped: ReadonlyArray<{ line: number; reason: string }>; skippedCount: number } = { skipped: [], skippedCount: 0 }): LineSource {
  return {
    count: lines.length,
    firstTs: lines[0]?.ts,
    skipped: skipped.skipped,
    skippedCount: skipped.skippedCount,
    inMemory: true,
    lines: () => lines,
    close: () => {},
  };
}

const MAX_SKIPPED_KEPT = 1000;
/** Hashes seen twice whose lines alone are looked at for repeated ids; past this many, every line is. */
const MAX_SUSPECTS = 100_000;
/** Log bytes per bucket of the ids looked at for repeats, by default. */
const REPEAT_BUCKET_LOG_BYTES = 8 * 1024 * 1024;
/**
 * Sender names a walk shares between its lines (one string per sender rather than one per line,
 * for the lines a replay keeps a while): the most recently first-met, so a log with a new sender
 * on every line keeps this many.
 */
const INTERNED_SENDERS = 4096;

type SourceOptions = { skipBad?: boolean; maxLineBytes?: number; runBytes?: number; bucketBytes?: number; maxSuspects?: number };

/**
 * Opens a log file for a replay. Errors are `readLog`'s, for the same line. Memory: nothing per
 * sender or per line but the ids' hashes a bucket at a time (id-check.ts: buckets of `bucketBytes` of log, 16 MB by
 * default, in temp files past one); the lines of an id whose hash came twice (every line's, past
 * `maxSuspects` such hashes) are looked at again, their ids joined a bucket at a time (see
 * {@link findRepeats}). A log out of time order is sorted in runs of `runBytes` of text (default
 * 2 MB) written to temp files. `close` removes what was written.
 */
export function openLogSource(file: string, opts: SourceOptions = {}): LineSource {
  // A log walked from its file keeps the heap from growing with it (heap-growth.ts) until it is closed.
  const release = holdHeapGrowth();
  try {
    const source = scanLog(file, opts);
    const close = source.close;
    return {
      ...source,
      close: () => {
        try {
          close();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

function scanLog(file: string, opts: SourceOptions): LineSource {
  const bytes = statSync(file).size;
  const ids = new IdHashes(bytes, opts.bucketBytes);
  try {
    return scanWith(file, opts, ids, Math.ceil(bytes / Math.max(1, opts.bucketBytes ?? REPEAT_BUCKET_LOG_BYTES)));
  } finally {
    ids.remove();
  }
}

function scanWith(file: string, opts: SourceOptions, ids: IdHashes, repeatBuckets: number): LineSource {
  const skipBad = opts.skipBad === true;
  const max = opts.maxLineBytes ?? MAX_LOG_LINE_BYTES;
  const maxSuspects = opts.maxSuspects ?? MAX_SUSPECTS;
  const skipped: Array<{ line: number; reason: string }> = [];
  let skippedCount = 0;
  let count = 0;
  let firstTs: number | undefined;
  let lastTs = -Infinity;
  let sorted = true;
  for (const raw of rawLines(file, max)) {
    let reason: string;
    if (raw.text === null) reason = tooLongReason(max);
    else {
      const t = raw.text.trim();
      if (t === "") continue;
      try {
        const l = parseLine(t, raw.line);
        // Repeated ids are looked for once the scan is done.
        ids.add(l.id);
        if (l.ts < lastTs) sorted = false;
        lastTs = l.ts;
        firstTs ??= l.ts;
        count++;
        continue;
      } catch (err) {
        if (!(err instanceof LogParseError)) throw err;
        reason = err.reason;
      }
    }
    // An earlier line may repeat an id: that error would come first.
    if (!skipBad) {
      const suspects = ids.repeated(maxSuspects);
      ids.remove();
      if (suspects === undefined || suspects.size > 0) findRepeats(file, max, { suspects, buckets: repeatBuckets, skipBad: false, before: raw.line });
      throw new LogParseError(raw.line, reason);
    }
    skippedCount++;
    if (skipped.length < MAX_SKIPPED_KEPT) skipped.push({ line: raw.line, reason });
  }
  // undefined: too many hashes came twice to look at their lines alone.
  const suspects = ids.repeated(maxSuspects);
  ids.remove();
  // Is an id whose hash came twice on two lines? Without skipBad the first repeat is refused
  // here; with it, the repeats are left out of every walk and counted as skipped.
  const repeats = suspects === undefined || suspects.size > 0 ? findRepeats(file, max, { suspects, buckets: repeatBuckets, skipBad }) : undefined;
  /** Not a later line of a repeated id (with skipBad; without it a repeat was refused above). */
  const kept = (l: LogLine): boolean => repeats === undefined || !repeats.has(l.line);
  if (repeats !== undefined && repeats.count > 0) {
    count -= repeats.count;
    skippedCount += repeats.count;
    skipped.push(...repeats.skipped);
    skipped.sort((a, b) => a.line - b.line);
    skipped.length = Math.min(skipped.length, MAX_SKIPPED_KEPT);
  }
  const runs = sorted ? undefined : sortRuns(file, max, interner(), opts.runBytes ?? RUN_BYTES);
  // Out of time order, the first line is the sorted walk's first kept; in time order it is the
  // file's first good line (never a repeat left out: it is its id's first).
  if (runs) {
    firstTs = undefined;
    for (const l of runs.lines()) {
      if (!kept(l)) continue;
      firstTs = l.ts;
      break;
    }
  }
  const source: LineSource = {
    count,
    firstTs,
    skipped,
    skippedCount,
    inMemory: false,
    *lines() {
      if (runs) {
        for (const l of runs.lines()) if (kept(l)) yield l;
        return;
      }
      const intern = interner();
      for (const { line } of goodLines(file, max)) {
        if (!kept(line)) continue;
        line.sender = intern(line.sender);
        yield line;
      }
    },
    close: () => runs?.remove(),
  };
  return source;
}

/** The later lines of a log's repeated ids, by line number. */
interface Repeats {
  has(line: number): boolean;
  /** How many lines repeat an earlier line's id. */
  readonly count: number;
  /** The first MAX_SKIPPED_KEPT of them, with why. */
  readonly skipped: Array<{ line: number; reason: string }>;
}

/**
 * The good lines of `file` that repeat an earlier line's id, in file order as `readLog` reads
 * (before line `before`). Without `skipBad` the first of them is thrown instead, as `readLog`
 * throws it. Only the lines whose id's hash is in `suspects` are looked at (all, when undefined):
 * their (line, id) go to `buckets` buckets by hash (hash-buckets.ts, in temp files), and each
 * bucket's ids are then joined in memory on their own. Memory: a bucket's distinct ids, 8 KB a
 * bucket while they are written, and a bit per line of the file once a repeat is found.
 */
function findRepeats(file: string, max: number, p: { suspects: ReadonlySet<number> | undefined; buckets: number; skipBad: boolean; before?: number }): Repeats {
  const buckets = new HashBuckets<[number, string]>({ name: "repeats", buckets: p.buckets, spill: true });
  try {
    let lastLine = 0;
    // Bad lines are passed over: the scan refused or counted them, and their ids count for nothing.
    for (const l of fileOrder(file, max)) {
      if (l.line >= (p.before ?? Infinity)) break;
      const h = idHash(l.id);
      if (p.suspects !== undefined && !p.suspects.has(h)) continue;
      buckets.add(h, [l.line, l.id]);
      lastLine = l.line;
    }
    let bits: Uint8Array | undefined;
    let count = 0;
    // The earliest repeats (kept to twice MAX_SKIPPED_KEPT, then cut back), with their ids.
    let first: Array<[number, string]> = [];
    const cut = () => {
      first.sort((a, b) => a[0] - b[0]);
      first.length = Math.min(first.length, MAX_SKIPPED_KEPT);
    };
    for (let b = 0; b < buckets.count; b++) {
      // A bucket's lines are in file order: an id's first line is the one kept.
      const seen = new Set<string>();
      for (const [line, id] of buckets.records(b)) {
        if (!seen.has(id)) {
          seen.add(id);
          continue;
        }
        bits ??= new Uint8Array((lastLine >> 3) + 1);
        bits[line >> 3]! |= 1 << (line & 7);
        count++;
        first.push([line, id]);
        if (first.length >= 2 * MAX_SKIPPED_KEPT) cut();
      }
    }
    cut();
    if (!p.skipBad && first.length > 0) throw new LogParseError(first[0]![0], duplicateIdReason(first[0]![1]));
    const set = bits;
    return {
      has: (line) => set !== undefined && line >> 3 < set.length && (set[line >> 3]! & (1 << (line & 7))) !== 0,
      count,
      skipped: first.map(([line, id]) => ({ line, reason: duplicateIdReason(id) })),
    };
  } finally {
    buckets.remove();
  }
}

/** One walk's sender names, shared between its lines (the {@link INTERNED_SENDERS} most recently first-met). */
function interner(): (sender: string) => string {
  const names = new BoundedMap<string, string>(INTERNED_SENDERS);
  return (sender) => {
    const known = names.get(sender);
    if (known !== undefined) return known;
    names.set(sender, sender);
    return sender;
  };
}

function* fileOrder(file: string, max: number): Generator<LogLine> {
  for (const { line } of goodLines(file, max)) yield line;
}
