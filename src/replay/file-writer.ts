// Text written to a file a piece at a time: each piece is copied at once into a byte buffer that
// is written out when full, so the many small strings a long output is made of die young, rather
// than waiting in an array until it is joined (long enough for V8 to carry them into the old
// generation as garbage, and the joined text into its large-object space).
import { writeSync } from "node:fs";

/** The buffer's size by default. */
export const WRITE_BYTES = 64 * 1024;

export class FileWriter {
  readonly #fd: number;
  readonly #buf: Buffer;
  #used = 0;

  /** `buffer`: its size, or one to write through (a caller's, reused from file to file). */
  constructor(fd: number, buffer: number | Buffer = WRITE_BYTES) {
    this.#fd = fd;
    this.#buf = typeof buffer === "number" ? Buffer.allocUnsafeSlow(Math.max(4, buffer)) : buffer;
  }

  /** Appends `text` (as UTF-8); a piece too long for the buffer is written straight to the file. */
  write(text: string): void {
    // At most 3 bytes of UTF-8 per UTF-16 unit (a surrogate pair's 4 for two): what fits is written whole.
    if (text.length * 3 > this.#buf.length - this.#used) {
      this.flush();
      if (text.length * 3 > this.#buf.length) {
        writeSync(this.#fd, text);
        return;
      }
    }
    this.#used += this.#buf.write(text, this.#used);
  }

  /** Appends `src[from, to)` as it is; a piece too long for the buffer is written straight to the file. */
  writeBytes(src: Uint8Array, from: number, to: number): void {
    if (to - from > this.#buf.length - this.#used) {
      this.flush();
      if (to - from > this.#buf.length) {
        for (let done = from; done < to; ) done += writeSync(this.#fd, src, done, to - done);
        return;
      }
    }
    this.#buf.set(src.subarray(from, to), this.#used);
    this.#used += to - from;
  }

  /** Writes out what the buffer holds. */
  flush(): void {
    let done = 0;
    while (done < this.#used) done += writeSync(this.#fd, this.#buf, done, this.#used - done);
    this.#used = 0;
  }
}
