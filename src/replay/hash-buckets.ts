// Records put in buckets by a 52-bit hash of their key (id-check.ts's `idHash`), to be read back a
// bucket at a time in the order given: what a replay joins by id without holding every id (the
// room's questions and the replies to them, a log's repeated ids). Each record is written as JSON
// text into its bucket's few KB of bytes and appended to the bucket's temp file (0600, in a folder
// of their own, removed by `remove` or when the process ends) when full, so no small string lives
// long enough to reach V8's old generation. Memory: `writeBytes` (8 KB) per bucket that was given
// a record, and a bucket's records while it is read.
import { closeSync, existsSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseJsonText } from "./json-text.ts";
import { rawLines } from "./log.ts";
import { makeTempDir, removeTempDir } from "./temp-dirs.ts";

/** Bytes of records a bucket holds before they are appended to its file, by default. */
export const WRITE_BYTES = 8 * 1024;
const TWO_52 = 2 ** 52;

/**
 * `buckets` buckets of records of type R (JSON values). `spill: false` holds every record (a log in
 * memory); `name` names the temp folder.
 */
export class HashBuckets<R> {
  readonly count: number;
  readonly #name: string;
  readonly #spill: boolean;
  readonly #writeBytes: number;
  /** Each bucket's records (JSON text) not yet in its file. */
  #pending: Array<Buffer | undefined>;
  #used: number[];
  #dir: string | undefined;

  constructor(p: { name: string; buckets: number; spill: boolean; writeBytes?: number }) {
    this.#name = p.name;
    this.#spill = p.spill;
    this.count = p.spill ? Math.max(1, Math.floor(p.buckets)) : 1;
    this.#writeBytes = Math.max(1, p.writeBytes ?? WRITE_BYTES);
    this.#pending = new Array<Buffer | undefined>(this.count).fill(undefined);
    this.#used = new Array<number>(this.count).fill(0);
  }

  /** Puts `record` in the bucket of `hash` (an integer below 2^52). */
  add(hash: number, record: R): void {
    const b = this.count === 1 ? 0 : Math.floor((hash / TWO_52) * this.count);
    const text = `${JSON.stringify(record)}\n`;
    const bytes = Buffer.byteLength(text);
    let buf = (this.#pending[b] ??= Buffer.allocUnsafeSlow(this.#writeBytes));
    if (this.#used[b]! + bytes > buf.length && this.#spill && this.#used[b]! > 0) this.#flush(b);
    // Held (a log in memory), or one record longer than the bytes: more room.
    if (this.#used[b]! + bytes > buf.length) {
      const more = Buffer.allocUnsafeSlow(Math.max(buf.length * 2, this.#used[b]! + bytes));
      buf.copy(more, 0, 0, this.#used[b]!);
      this.#pending[b] = buf = more;
    }
    this.#used[b]! += buf.write(text, this.#used[b]!);
  }

  /** Bucket `b`'s records in the order given: those in its file, then those waiting. */
  *records(b: number): Generator<R> {
    if (this.#dir !== undefined && existsSync(this.#file(b))) {
      for (const raw of rawLines(this.#file(b), Number.MAX_SAFE_INTEGER)) if (raw.text) yield parseJsonText(raw.text) as R;
    }
    const buf = this.#pending[b];
    if (buf === undefined) return;
    for (const text of buf.toString("utf8", 0, this.#used[b]!).split("\n")) if (text) yield parseJsonText(text) as R;
  }

  /** Removes the temp files (if any); not used after. */
  remove(): void {
    if (this.#dir !== undefined) removeTempDir(this.#dir);
    this.#dir = undefined;
    this.#pending = [];
    this.#used = [];
  }

  #file(b: number): string {
    return join(this.#dir!, `bucket-${b}.jsonl`);
  }

  #flush(b: number): void {
    this.#dir ??= makeTempDir(`acp-replay-${this.#name}-`);
    const fd = openSync(this.#file(b), "a", 0o600);
    try {
      const buf = this.#pending[b]!;
      for (let at = 0; at < this.#used[b]!; ) at += writeSync(fd, buf, at, this.#used[b]! - at);
    } finally {
      closeSync(fd);
    }
    this.#used[b] = 0;
  }
}
