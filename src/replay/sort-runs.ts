// A log out of time order, sorted without holding it: its good lines are read a run at a time
// (about `runBytes` of log text), each run sorted and written to a temp file (0600, in a folder of
// its own), and a walk merges the runs, holding one line and one small read buffer per run (all the
// read buffers in one piece of at most MERGE_READ_BYTES, kept from walk to walk). A log cut into
// more than MAX_MERGE_RUNS runs (past about 2 GB) has them merged that many at a time into longer
// runs on disk first, in rounds, so that no walk reads more than MAX_MERGE_RUNS files at
// MIN_CHUNK_BYTES each. The order is `readLog`'s: by `ts`, lines of one time in file order.
import { closeSync, openSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { FileWriter } from "./file-writer.ts";
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
/** The most runs a walk merges (each read MIN_CHUNK_BYTES at a time): more are merged on disk first. */
export const MAX_MERGE_RUNS = MERGE_READ_BYTES / MIN_CHUNK_BYTES;

/** Each run's read buffer when a walk merges `runs` runs: 16 KB, less past 256 runs (MERGE_READ_BYTES in all), never below 4 KB. */
export function mergeChunkBytes(runs: number): number {
  return Math.max(MIN_CHUNK_BYTES, Math.min(MERGE_CHUNK_BYTES, Math.floor(MERGE_READ_BYTES / Math.max(1, runs) / 1024) * 1024));
}

export interface SortedRuns {
  /** A fresh walk over the good lines, in time order. */
  lines(): Generator<LogLine>;
  /** How many sorted runs a walk merges (each a temp file; at most `maxRuns`). */
  readonly runs: number;
  /** Removes the temp files; no walk after. */
  remove(): void;
}

/** `readLog`'s order: time, then position in the file. */
const before = (a: LogLine, b: LogLine): boolean => a.ts < b.ts || (a.ts === b.ts && a.line < b.line);

/**
 * Sorts the good lines of `file` (lines longer than `max`, blank or bad are left out: the caller
 * has checked them) into runs on disk, at most `maxRuns` of them once sorted. `intern` gives
 * each sender's one string.
 */
export function sortRuns(file: string, max: number, intern: (sender: string) => string, runBytes = RUN_BYTES, maxRuns = MAX_MERGE_RUNS): SortedRuns {
  const dir = makeTempDir("acp-replay-sort-");
  let files: string[] = [];
  let made = 0;
  const create = (): { f: string; fd: number } => {
    const f = join(dir, `run-${made++}.jsonl`);
    return { f, fd: openSync(f, "w", 0o600) };
  };
  // What the merges read into: one piece for every merge on disk, then kept for the walks.
  let kept: Buffer | undefined;
  try {
    // A run holds each line as the bytes its file gets, with its time and place (run-bytes below):
    // neither the parsed line nor its text outlives the line's turn, so none is carried into V8's
    // old generation, and the arrays serve every run.
    const run = new RunBytes();
    let held = 0;
    const flush = () => {
      if (run.count === 0) return;
      const { f, fd } = create();
      try {
        run.writeSorted(fd);
      } finally {
        closeSync(fd);
      }
      files.push(f);
      run.clear();
      held = 0;
    };
    for (const { line, chars } of goodLines(file, max)) {
      run.add(line.ts, line.line, `${JSON.stringify(line)}\n`);
      held += chars;
      if (held >= runBytes) flush();
    }
    flush();
    // Rounds of merges on disk, `fanIn` runs into one, until a walk merges no more than that.
    const fanIn = Math.max(2, maxRuns);
    const out = Buffer.allocUnsafeSlow(WRITE_BYTES);
    while (files.length > fanIn) {
      const merged: string[] = [];
      for (let k = 0; k < files.length; k += fanIn) {
        const group = files.slice(k, k + fanIn);
        if (group.length === 1) {
          merged.push(group[0]!);
          continue;
        }
        // Enough for a group of any size up to fanIn (what it reads is not monotonic in its size).
        kept ??= Buffer.allocUnsafeSlow(Math.max(Math.min(MERGE_CHUNK_BYTES * fanIn, MERGE_READ_BYTES), MIN_CHUNK_BYTES * fanIn));
        const { f, fd } = create();
        try {
          const w = new FileWriter(fd, out);
          for (const { text } of merge(group, kept)) {
            w.write(text);
            w.write("\n");
          }
          w.flush();
        } finally {
          closeSync(fd);
        }
        for (const g of group) unlinkSync(g);
        merged.push(f);
      }
      files = merged;
    }
  } catch (err) {
    removeTempDir(dir);
    throw err;
  }
  let removed = false;
  // The runs' read buffers, one piece kept for every walk; a walk that starts while another is under way has its own.
  const bytes = mergeChunkBytes(files.length) * files.length;
  if (kept && kept.length < bytes) kept = undefined;
  let keptInUse = false;
  return {
    runs: files.length,
    *lines() {
      if (removed) throw new Error("sorted log already removed");
      const mine = !keptInUse;
      const buffers = mine ? (kept ??= Buffer.allocUnsafeSlow(bytes)) : Buffer.allocUnsafeSlow(bytes);
      if (mine) keptInUse = true;
      try {
        for (const { l } of merge(files, buffers)) {
          l.sender = intern(l.sender);
          yield l;
        }
      } finally {
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

/** The lines of sorted run files in `readLog`'s order, each parsed and as its file holds it; `buffers`: what the runs are read into. */
function* merge(files: readonly string[], buffers: Buffer): Generator<{ l: LogLine; text: string }> {
  const chunkBytes = mergeChunkBytes(files.length);
  if (buffers.length < chunkBytes * files.length) throw new Error(`merge of ${files.length} runs given ${buffers.length} bytes to read into`);
  const readers = files.map((f, i) => rawLines(f, Number.MAX_SAFE_INTEGER, buffers.subarray(i * chunkBytes, (i + 1) * chunkBytes)));
  const next = (i: number): { l: LogLine; text: string; i: number } | undefined => {
    for (;;) {
      const r = readers[i]!.next();
      if (r.done) return undefined;
      if (!r.value.text) continue;
      return { l: parseJsonText(r.value.text) as LogLine, text: r.value.text, i };
    }
  };
  // A binary heap of each run's next line, earliest on top.
  const heap: Array<{ l: LogLine; text: string; i: number }> = [];
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
      const e = next(i);
      if (e) {
        heap.push(e);
        up(heap.length - 1);
      }
    });
    while (heap.length) {
      const top = heap[0]!;
      yield top;
      const e = next(top.i);
      if (e) heap[0] = e;
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
  }
}

/** A run's lines as UTF-8 in one buffer, with each line's time, place in the log and slice; `writeSorted` writes them in `readLog`'s order. */
class RunBytes {
  #text = Buffer.allocUnsafeSlow(1 << 20);
  #used = 0;
  #ts = new Float64Array(1024);
  #line = new Float64Array(1024);
  #start = new Uint32Array(1025);
  #order = new Uint32Array(1024);
  #n = 0;
  readonly #out = Buffer.allocUnsafeSlow(WRITE_BYTES);

  get count(): number {
    return this.#n;
  }

  add(ts: number, line: number, text: string): void {
    const bytes = Buffer.byteLength(text);
    if (this.#used + bytes > this.#text.length) {
      const more = Buffer.allocUnsafeSlow(Math.max(this.#text.length * 2, this.#used + bytes));
      this.#text.copy(more, 0, 0, this.#used);
      this.#text = more;
    }
    if (this.#n === this.#ts.length) {
      const grow = <A extends Float64Array | Uint32Array>(a: A, n: number): A => {
        const b = new (a.constructor as new (n: number) => A)(n);
        b.set(a);
        return b;
      };
      this.#ts = grow(this.#ts, this.#n * 2);
      this.#line = grow(this.#line, this.#n * 2);
      this.#start = grow(this.#start, this.#n * 2 + 1);
      this.#order = new Uint32Array(this.#n * 2);
    }
    this.#ts[this.#n] = ts;
    this.#line[this.#n] = line;
    this.#start[this.#n] = this.#used;
    this.#used += this.#text.write(text, this.#used);
    this.#n++;
    this.#start[this.#n] = this.#used;
  }

  /** Writes the lines to `fd` by time, lines of one time by place in the log. */
  writeSorted(fd: number): void {
    const ts = this.#ts;
    const line = this.#line;
    const order = this.#order.subarray(0, this.#n);
    for (let i = 0; i < order.length; i++) order[i] = i;
    order.sort((a, b) => ts[a]! - ts[b]! || line[a]! - line[b]!);
    const out = new FileWriter(fd, this.#out);
    for (const i of order) out.writeBytes(this.#text, this.#start[i]!, this.#start[i + 1]!);
    out.flush();
  }

  clear(): void {
    this.#n = 0;
    this.#used = 0;
  }
}
