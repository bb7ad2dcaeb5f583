// Whether a log repeats an id, in bounded memory: each id's 52-bit hash goes to one of a few
// buckets by its top bits (held in memory for a log of one bucket, else appended to temp files,
// 0600 in a folder of their own, 8 KB at a time), and each bucket is sorted on its own; equal
// hashes name the ids that may repeat (a repeat, or rarely two ids with one hash), which the
// caller checks by a walk of the log. Memory: one bucket, about `bucketLogBytes` of log (16 MB:
// ~0.6 MB of hashes at 240 bytes a line), and 8 KB per bucket waiting to be written.
import { closeSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "./temp-dirs.ts";

/** Log bytes per bucket by default. */
export const BUCKET_LOG_BYTES = 16 * 1024 * 1024;
/** Hashes a bucket holds before they are appended to its file. */
const WRITE_HASHES = 1024;
const TWO_52 = 2 ** 52;

/** A 52-bit hash of an id (an integer a double holds exactly). */
export function idHash(id: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35);
  h2 ^= h2 >>> 16;
  return (h1 >>> 0) * 2 ** 20 + (h2 >>> 12);
}

/** The ids of a log, as hashes in buckets; `repeated` finds the hashes seen twice. */
export class IdHashes {
  readonly #buckets: number;
  #pending: Float64Array[];
  readonly #held: number[];
  #dir: string | undefined;

  /** For a log of `fileBytes`; buckets of about `bucketLogBytes` of it. */
  constructor(fileBytes: number, bucketLogBytes = BUCKET_LOG_BYTES) {
    this.#buckets = Math.max(1, Math.ceil(fileBytes / Math.max(1, bucketLogBytes)));
    this.#pending = Array.from({ length: this.#buckets }, () => new Float64Array(WRITE_HASHES));
    this.#held = new Array<number>(this.#buckets).fill(0);
  }

  add(id: string): void {
    const h = idHash(id);
    const b = this.#buckets === 1 ? 0 : Math.floor((h / TWO_52) * this.#buckets);
    let pending = this.#pending[b]!;
    if (this.#held[b] === pending.length) {
      // One bucket: the hashes stay in memory, the log being no bigger than a bucket.
      if (this.#buckets === 1) {
        const more = new Float64Array(pending.length * 2);
        more.set(pending);
        this.#pending[b] = pending = more;
      } else this.#flush(b);
    }
    pending[this.#held[b]!++] = h;
  }

  /** The hashes added more than once so far; undefined once there are more than `max`. */
  repeated(max: number): Set<number> | undefined {
    const out = new Set<number>();
    // One array for every bucket in turn: a fresh one each would leave a bucket's worth of
    // garbage outside the heap per bucket (16 MB of log: ~0.6 MB) until V8 next collects.
    let scratch = new Float64Array(0);
    for (let b = 0; b < this.#buckets; b++) {
      const file = this.#dir === undefined ? undefined : this.#file(b);
      const onDisk = file === undefined ? 0 : fileHashes(file);
      const n = onDisk + this.#held[b]!;
      if (scratch.length < n) scratch = new Float64Array(Math.ceil(n * 1.125));
      const all = scratch.subarray(0, n);
      if (onDisk > 0) readHashes(file!, all, onDisk);
      all.set(this.#pending[b]!.subarray(0, this.#held[b]), onDisk);
      all.sort();
      for (let i = 1; i < all.length; i++) {
        if (all[i] !== all[i - 1]) continue;
        out.add(all[i]!);
        if (out.size > max) return undefined;
      }
    }
    return out;
  }

  /** Removes the temp files; not used after. */
  remove(): void {
    if (this.#dir !== undefined) removeTempDir(this.#dir);
    this.#dir = undefined;
    this.#pending = [];
  }

  #file(b: number): string {
    return join(this.#dir!, `ids-${b}.f64`);
  }

  #flush(b: number): void {
    this.#dir ??= makeTempDir("acp-replay-ids-");
    const fd = openSync(this.#file(b), "a", 0o600);
    try {
      const p = this.#pending[b]!;
      writeSync(fd, new Uint8Array(p.buffer, p.byteOffset, this.#held[b]! * 8));
    } finally {
      closeSync(fd);
    }
    this.#held[b] = 0;
  }
}

const fileHashes = (file: string): number => {
  try {
    return statSync(file).size / 8;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
};

/** Reads the first `n` hashes of `file` into `into`. */
function readHashes(file: string, into: Float64Array, n: number): void {
  const bytes = new Uint8Array(into.buffer, into.byteOffset, n * 8);
  const fd = openSync(file, "r");
  try {
    for (let at = 0; at < bytes.length; ) {
      const got = readSync(fd, bytes, at, bytes.length - at, at);
      if (got === 0) throw new Error(`${file}: ${at} of ${bytes.length} bytes`);
      at += got;
    }
  } finally {
    closeSync(fd);
  }
}
