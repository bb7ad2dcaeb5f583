// Text sorted into named buckets as it comes, each read back whole later, in one piece: what the
// page needs when one walk of the log fills several parts that the page writes one after another
// (a column of the page data, a path of the chart). A bucket past FLUSH_BYTES goes to a temp file
// of its own (0600, in a folder removed by `remove`), so what is held is a little per bucket.
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { makeTempDir, removeTempDir } from "../replay/temp-dirs.ts";

const FLUSH_BYTES = 32 * 1024;
// A spilled bucket is read back 16 KB at a time: each piece is a string of at most 16 K characters.
// At 64 KB, a piece of mostly ASCII holding one character past Latin-1 was a two-byte string of
// 128 KB, which V8 puts in its large-object space; those alive at a scavenge (the one being written)
// went to the old generation whole and stayed until a full collection: the last seconds of a
// 1,500 MB log's page took that space from 2 to 17 MB.
const READ_BYTES = 16 * 1024;

interface Bucket {
  /** The text not yet in the file, as UTF-8 (allocated at the first add). */
  buf: Buffer | undefined;
  used: number;
  file: string | undefined;
  fd: number | undefined;
}

export class Buckets {
  readonly #buckets = new Map<string, Bucket>();
  readonly #flushBytes: number;
  readonly #readBytes: number;
  #dir: string | undefined;
  #files = 0;

  /** `flushBytes`: a bucket's text held (as UTF-8) before it goes to its file; `readBytes`: the read-back chunk. */
  constructor(opts: { flushBytes?: number; readBytes?: number } = {}) {
    this.#flushBytes = Math.max(1, opts.flushBytes ?? FLUSH_BYTES);
    this.#readBytes = opts.readBytes ?? READ_BYTES;
  }

  /**
   * Appends `text` to the bucket `key` (made on first use: {@link keys} keeps that order). The text
   * is copied into the bucket's bytes at once: a page's many small strings die young instead of
   * waiting in the bucket long enough to be carried into V8's old generation as garbage.
   */
  add(key: string, text: string): void {
    let b = this.#buckets.get(key);
    if (!b) this.#buckets.set(key, (b = { buf: undefined, used: 0, file: undefined, fd: undefined }));
    const n = Buffer.byteLength(text);
    if (b.used + n > this.#flushBytes) this.#flush(b);
    if (n > this.#flushBytes) {
      writeSync(this.#open(b), text);
      return;
    }
    b.buf ??= Buffer.allocUnsafe(this.#flushBytes);
    b.used += b.buf.write(text, b.used);
  }

  /** The buckets, in the order each got its first text. */
  keys(): string[] {
    return [...this.#buckets.keys()];
  }

  /** Whether the bucket has any text. */
  has(key: string): boolean {
    return this.#buckets.has(key);
  }

  /** Gives the bucket's text to `out` in order, a piece at a time (nothing for a bucket never added to). */
  drain(key: string, out: (text: string) => void): void {
    const b = this.#buckets.get(key);
    if (!b) return;
    if (b.file !== undefined) {
      this.#flush(b);
      const fd = openSync(b.file, "r");
      try {
        const chunk = Buffer.allocUnsafe(this.#readBytes);
        const decoder = new StringDecoder("utf8");
        for (let n = readSync(fd, chunk, 0, chunk.length, null); n > 0; n = readSync(fd, chunk, 0, chunk.length, null)) out(decoder.write(chunk.subarray(0, n)));
        const rest = decoder.end();
        if (rest) out(rest);
      } finally {
        closeSync(fd);
      }
    }
    if (b.used > 0) out(b.buf!.toString("utf8", 0, b.used));
  }

  /** Removes the temp files; the buckets are not used after. */
  remove(): void {
    for (const b of this.#buckets.values()) if (b.fd !== undefined) closeSync(b.fd);
    this.#buckets.clear();
    if (this.#dir !== undefined) removeTempDir(this.#dir);
    this.#dir = undefined;
  }

  #open(b: Bucket): number {
    if (b.fd === undefined) {
      this.#dir ??= makeTempDir("acp-replay-page-");
      b.file = join(this.#dir, `bucket-${this.#files++}.txt`);
      b.fd = openSync(b.file, "w", 0o600);
    }
    return b.fd;
  }

  #flush(b: Bucket): void {
    if (b.used === 0) return;
    writeSync(this.#open(b), b.buf!, 0, b.used);
    b.used = 0;
  }
}
