// A log out of time order, sorted without holding it: its good lines are read a run at a time
// (about `runBytes` of log text), each run sorted and written to a temp file (0600, in a folder of
// its own), and a walk merges the runs, holding one line and one small read buffer per run (all the
// read buffers in one piece of at most MERGE_READ_BYTES while runs are few enough, kept from walk to
// walk). The order is `readLog`'s: by `ts`, lines of one time in file order.
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseJsonText } from "./json-text.ts";
import { goodLines, rawLines, type LogLine } from "./log.ts";
import { makeTempDir, removeTempDir } from "./temp-dirs.ts";

/** Log text per sorted run by default: what the sort holds parsed at once. */
export const RUN_BYTES = 2 * 1024 * 1024;
const WRITE_BYTES = 64 * 1024;
const MERGE_CHUNK_BYTES = 16 * 1024;
/** What a merge reads into, all runs together (each run's share at least MIN_CHUNK_BYTES). */
export const MERGE_READ_BYTES = 4 * 1024 * 1024;
const MIN_CHUNK_BYTES = 4 * 1024;

/** Each run's read buffer when a walk merges `runs` runs: 16 KB, less past 256 runs (MERGE_READ_BYTES in all), never below 4 KB. */
export function mergeChunkBytes(runs: number): number {
  return Math.max(MIN_CHUNK_BYTES, Math.min(MERGE_CHUNK_BYTES, Math.floor(MERGE_READ_BYTES / Math.max(1, runs) / 1024) * 1024));
}

export interface SortedRuns {
  /** A fresh walk over the good lines, in time order. */
  lines(): Generator<LogLine>;
  /** How many runs the log was cut into (each a temp file). */
  readonly runs: number;
  /** Removes the temp files; no walk after. */
  remove(): void;
}

/** `readLog`'s order: time, then position in the file. */
const before = (a: LogLine, b: LogLine): boolean => a.ts < b.ts || (a.ts === b.ts && a.line < b.line);

/**
 * Sorts the good lines of `file` (lines longer than `max`, blank or bad are left out: the caller
 * has checked them) into runs on disk. `intern` gives each sender's one string.
 */
export function sortRuns(file: string, max: number, intern: (sender: string) => string, runBytes = RUN_BYTES): SortedRuns {
  const dir = makeTempDir("acp-replay-sort-");
  const files: string[] = [];
  try {
    // A run holds each line as the text its file gets, with its time and place: the parsed line is
    // dropped at once (young), not kept through the run to be carried into the old generation.
    let run: Array<{ ts: number; line: number; text: string }> = [];
    let held = 0;
    const flush = () => {
      if (run.length === 0) return;
      run.sort((a, b) => a.ts - b.ts || a.line - b.line);
      const f = join(dir, `run-${files.length}.jsonl`);
      const fd = openSync(f, "w", 0o600);
      try {
        let pending: string[] = [];
        let size = 0;
        for (const { text } of run) {
          pending.push(text);
          size += text.length;
          if (size >= WRITE_BYTES) {
            writeSync(fd, pending.join(""));
            pending = [];
            size = 0;
          }
        }
        if (pending.length) writeSync(fd, pending.join(""));
      } finally {
        closeSync(fd);
      }
      files.push(f);
      run = [];
      held = 0;
    };
    for (const { line, chars } of goodLines(file, max)) {
      run.push({ ts: line.ts, line: line.line, text: `${JSON.stringify(line)}\n` });
      held += chars;
      if (held >= runBytes) flush();
    }
    flush();
  } catch (err) {
    removeTempDir(dir);
    throw err;
  }
  let removed = false;
  // The runs' read buffers, one piece kept for every walk; a walk that starts while another is under way has its own.
  const chunkBytes = mergeChunkBytes(files.length);
  let kept: Buffer | undefined;
  let keptInUse = false;
  return {
    runs: files.length,
    *lines() {
      if (removed) throw new Error("sorted log already removed");
      const mine = !keptInUse;
      const buffers = mine ? (kept ??= Buffer.allocUnsafeSlow(chunkBytes * files.length)) : Buffer.allocUnsafeSlow(chunkBytes * files.length);
      if (mine) keptInUse = true;
      const readers = files.map((f, i) => rawLines(f, Number.MAX_SAFE_INTEGER, buffers.subarray(i * chunkBytes, (i + 1) * chunkBytes)));
      const next = (i: number): LogLine | undefined => {
        for (;;) {
          const r = readers[i]!.next();
          if (r.done) return undefined;
          if (!r.value.text) continue;
          const l = parseJsonText(r.value.text) as LogLine;
          l.sender = intern(l.sender);
          return l;
        }
      };
      // A binary heap of each run's next line, earliest on top.
      const heap: Array<{ l: LogLine; i: number }> = [];
      const up = (k: number) => {
        while (k > 0) {
          const parent = (k - 1) >> 1;
          if (!before(heap[k]!.l, heap[parent]!.l)) break;
          [heap[k], heap[parent]] = [heap[parent]!, heap[k]!];
          k = parent;
        }
      };
      const down = (k: number) => {
        for (;;) {
          const a = 2 * k + 1;
          const b = a + 1;
          let top = k;
          if (a < heap.length && before(heap[a]!.l, heap[top]!.l)) top = a;
          if (b < heap.length && before(heap[b]!.l, heap[top]!.l)) top = b;
          if (top === k) return;
          [heap[k], heap[top]] = [heap[top]!, heap[k]!];
          k = top;
        }
      };
      try {
        readers.forEach((_, i) => {
          const l = next(i);
          if (l) {
            heap.push({ l, i });
            up(heap.length - 1);
          }
        });
        while (heap.length) {
          const top = heap[0]!;
          yield top.l;
          const l = next(top.i);
          if (l) heap[0] = { l, i: top.i };
          else {
            const last = heap.pop()!;
            if (heap.length === 0) break;
            heap[0] = last;
          }
          down(0);
        }
      } finally {
        // A walk left early closes its files.
        for (const r of readers) r.return(undefined);
        if (mine) keptInUse = false;
      }
    },
    remove() {
      removed = true;
      kept = undefined;
      removeTempDir(dir);
    },
  };
}
