// The lines a replay walks, without holding the log: a file is scanned once (every line checked as
// `readLog` checks it, the senders and the line count noted) and then read again from the disk
// each time the replay walks it — a file in time order as it is, one out of order through sorted
// runs in temp files (sort-runs.ts). Only a log that repeats an id is read whole into memory, as
// `readLog` reads it (to refuse or skip the repeat as it does).
import { statSync } from "node:fs";
import { goodLines, LogParseError, MAX_LOG_LINE_BYTES, parseLine, rawLines, readLog, tooLongReason, type LogLine } from "./log.ts";
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
  /** Whether the lines are held in memory (lines given as an array, or a log that repeats an id). */
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
      if (ids.repeated(MAX_SUSPECTS)?.size !== 0) return whole();
      throw new LogParseError(raw.line, reason);
    }
    skippedCount++;
    if (skipped.length < MAX_SKIPPED_KEPT) skipped.push({ line: raw.line, reason });
  }
  const suspects = ids.repeated(MAX_SUSPECTS);
  if (suspects === undefined) return whole();
  ids.remove();
  const intern = (sender: string) => senders.get(sender) ?? sender;
  // Out of time order: walked through sorted runs on disk.
  const runs = sorted ? undefined : sortRuns(file, max, intern, opts.runBytes ?? RUN_BYTES);
  // Sorted, the first line and the senders' order of first appearance are those of time order.
  let order = [...senders.keys()];
  if (runs) {
    const inTime = new Set<string>();
    firstTs = undefined;
    for (const l of runs.lines()) {
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
        yield* runs.lines();
        return;
      }
      for (const { line } of goodLines(file, max)) {
        line.sender = intern(line.sender);
        yield line;
      }
    },
    close: () => runs?.remove(),
  };
  /** Whether an id whose hash came twice is on two lines. */
  function repeats(hashes: ReadonlySet<number>): boolean {
    if (hashes.size === 0) return false;
    const once = new Set<string>();
    for (const l of source.lines()) {
      if (!hashes.has(idHash(l.id))) continue;
      if (once.has(l.id)) return true;
      once.add(l.id);
    }
    return false;
  }
  // An id on two lines: readLog names (or skips) the repeat.
  let repeated = true;
  try {
    repeated = repeats(suspects);
  } finally {
    if (repeated) source.close();
  }
  return repeated ? whole() : source;
}
