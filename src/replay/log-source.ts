// The lines a replay walks, without holding the log: a file is scanned once (every line checked as
// `readLog` checks it, the senders and the line count noted) and then read again from the disk
// each time the replay walks it — a file in time order as it is, one out of order through sorted
// runs in temp files (sort-runs.ts). A log that repeats an id is walked the same way: the repeat is
// refused naming its line, as `readLog` does, or with `skipBad` left out of every walk (what is
// kept is each repeated id's first line). Only a log with more than MAX_SUSPECTS ids whose hash
// came twice is read whole into memory.
import { statSync } from "node:fs";
import { duplicateIdReason, goodLines, LogParseError, MAX_LOG_LINE_BYTES, parseLine, rawLines, readLog, tooLongReason, type LogLine } from "./log.ts";
import { RUN_BYTES, sortRuns } from "./sort-runs.ts";
import { idHash, IdHashes } from "./id-check.ts";
import { holdHeapGrowth } from "./heap-growth.ts";

/** A log in time order that can be walked as often as needed. */
export interface LineSource {
  /** Good lines. */
  readonly count: number;
  /** Each sender once, in order of first appearance. */
  readonly senders: readonly string[];
  /** The first line's time (undefined: no lines). */
  readonly firstTs: number | undefined;
  /** The first bad lines skipped with `skipBad`, with why, and how many in all. */
  readonly skipped: ReadonlyArray<{ line: number; reason: string }>;
  readonly skippedCount: number;
  /** Whether the lines are held in memory (lines given as an array, or a log with more than MAX_SUSPECTS repeated id hashes). */
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
    senders: [...new Set(lines.map((l) => l.sender))],
    firstTs: lines[0]?.ts,
    skipped: skipped.skipped,
    skippedCount: skipped.skippedCount,
    inMemory: true,
    lines: () => lines,
    close: () => {},
  };
}

const MAX_SKIPPED_KEPT = 1000;
/** Hashes seen twice, whose ids are checked by a second walk; past this many, the log is read whole. */
const MAX_SUSPECTS = 100_000;

/**
 * Opens a log file for a replay. Errors are `readLog`'s, for the same line. Memory: the senders,
 * and the ids' hashes a bucket at a time (id-check.ts: buckets of `bucketBytes` of log, 16 MB by
 * default, in temp files past one); an id whose hash came twice is checked by a second walk, and a
 * repeated id sends the log to `readLog`, which names it. A log out of time order is sorted in runs
 * of `runBytes` of text (default 2 MB) written to temp files. `close` removes what was written.
 */
export function openLogSource(file: string, opts: { skipBad?: boolean; maxLineBytes?: number; runBytes?: number; bucketBytes?: number } = {}): LineSource {
  // A log walked from its file keeps the heap from growing with it (heap-growth.ts) until it is closed.
  const release = holdHeapGrowth();
  try {
    const source = scanLog(file, opts);
    if (source.inMemory) {
      release();
      return source;
    }
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

function scanLog(file: string, opts: { skipBad?: boolean; maxLineBytes?: number; runBytes?: number; bucketBytes?: number }): LineSource {
  const ids = new IdHashes(statSync(file).size, opts.bucketBytes);
  try {
    return scanWith(file, opts, ids);
  } finally {
    ids.remove();
  }
}

function scanWith(file: string, opts: { skipBad?: boolean; maxLineBytes?: number; runBytes?: number }, ids: IdHashes): LineSource {
  const skipBad = opts.skipBad === true;
  const max = opts.maxLineBytes ?? MAX_LOG_LINE_BYTES;
  const whole = (): LineSource => {
    // The hashes are not needed past here: their files go before the log is read whole.
    ids.remove();
    const parsed = readLog(file, { skipBad, maxLineBytes: max });
    return arraySource(parsed.lines, parsed);
  };
  const senders = new Map<string, string>();
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
        if (!senders.has(l.sender)) senders.set(l.sender, l.sender);
        count++;
        continue;
      } catch (err) {
        if (!(err instanceof LogParseError)) throw err;
        reason = err.reason;
      }
    }
    // An earlier line may repeat an id: that error would come first.
    if (!skipBad) {
      const suspects = ids.repeated(MAX_SUSPECTS);
      if (suspects === undefined) return whole();
      if (suspects.size > 0) repeatsInFileOrder(file, max, suspects, false, raw.line);
      throw new LogParseError(raw.line, reason);
    }
    skippedCount++;
    if (skipped.length < MAX_SKIPPED_KEPT) skipped.push({ line: raw.line, reason });
  }
  const suspects = ids.repeated(MAX_SUSPECTS);
  if (suspects === undefined) return whole();
  ids.remove();
  // An id whose hash came twice: is it on two lines? Without skipBad the first repeat is refused
  // here; with it, the repeats are left out of every walk and counted as skipped.
  const repeats = suspects.size > 0 ? repeatsInFileOrder(file, max, suspects, skipBad) : undefined;
  const firstLine = repeats && repeats.count > 0 ? repeats.firstLine : undefined;
  /** Not a later line of a repeated id (with skipBad; without it a repeat was refused above). */
  const kept = (l: LogLine): boolean => {
    const first = firstLine?.get(l.id);
    return first === undefined || first === l.line;
  };
  let firstSenders = senders;
  if (repeats && repeats.count > 0) {
    count -= repeats.count;
    skippedCount += repeats.count;
    skipped.push(...repeats.skipped);
    skipped.sort((a, b) => a.line - b.line);
    skipped.length = Math.min(skipped.length, MAX_SKIPPED_KEPT);
    firstSenders = repeats.senders;
  }
  const intern = (sender: string) => senders.get(sender) ?? sender;
  // Out of time order: walked through sorted runs on disk.
  const runs = sorted ? undefined : sortRuns(file, max, intern, opts.runBytes ?? RUN_BYTES);
  // Sorted, the first line and the senders' order of first appearance are those of time order.
  let order = [...firstSenders.keys()];
  if (runs) {
    const inTime = new Set<string>();
    firstTs = undefined;
    for (const l of runs.lines()) {
      if (!kept(l)) continue;
      firstTs ??= l.ts;
      inTime.add(l.sender);
    }
    order = [...inTime];
  }
  const source: LineSource = {
    count,
    senders: order,
    firstTs,
    skipped,
    skippedCount,
    inMemory: false,
    *lines() {
      if (runs) {
        for (const l of runs.lines()) if (kept(l)) yield l;
        return;
      }
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

/**
 * The ids of `suspects` (hashes seen twice) that are on two good lines, walked in file order as
 * `readLog` reads: each such id's first line (the one kept), how many later lines repeat one, the
 * first MAX_SKIPPED_KEPT of those with why, and the senders of the lines kept in order of first
 * appearance. Without `skipBad` the first repeat is thrown instead, as `readLog` throws it. Stops
 * before line `before`. Memory: the suspected ids' lines, not the log's.
 */
function repeatsInFileOrder(
  file: string,
  max: number,
  suspects: ReadonlySet<number>,
  skipBad: boolean,
  before = Infinity,
): { firstLine: Map<string, number>; count: number; skipped: Array<{ line: number; reason: string }>; senders: Map<string, string> } {
  const seen = new Map<string, number>();
  const senders = new Map<string, string>();
  const skipped: Array<{ line: number; reason: string }> = [];
  let count = 0;
  // Bad lines are passed over: the first scan refused or counted them, and their ids count for nothing.
  for (const { line: l } of goodLines(file, max)) {
    if (l.line >= before) break;
    if (suspects.has(idHash(l.id))) {
      if (seen.has(l.id)) {
        if (!skipBad) throw new LogParseError(l.line, duplicateIdReason(l.id));
        count++;
        if (skipped.length < MAX_SKIPPED_KEPT) skipped.push({ line: l.line, reason: duplicateIdReason(l.id) });
        continue;
      }
      seen.set(l.id, l.line);
    }
    if (!senders.has(l.sender)) senders.set(l.sender, l.sender);
  }
  // A suspected id on one line only is kept there, as every other line is.
  return { firstLine: seen, count, skipped, senders };
}
