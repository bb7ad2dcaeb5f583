// A column of small unsigned integers (or of doubles, width 8) by position (a replayed line's bits,
// its addressing reason's index, which agents answered it, when a question was first answered) that holds a few pages in memory and the rest in a temp file
// (0600, in a folder of its own, removed by `remove` or when the process ends): what a long
// replay keeps per line no longer grows its memory with the log. A replay writes near the line it
// is feeding and reads the lines back in order, so a few pages serve nearly every access; any
// other position is read back from the file (and written back when changed), so any order works.
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "./temp-dirs.ts";

/** Bytes an entry: unsigned integers of 1, 2 or 4 bytes, or (8) doubles. */
export type ColumnWidth = 1 | 2 | 4 | 8;

type Page = Uint8Array | Uint16Array | Uint32Array | Float64Array;

interface Held {
  no: number;
  page: Page;
  dirty: boolean;
}

/** Entries a page holds by default (64 KB of one-byte entries). */
export const PAGE_ENTRIES = 64 * 1024;
/** Pages held in memory by default. */
export const HELD_PAGES = 4;

const pageOf: Record<ColumnWidth, (n: number) => Page> = {
  1: (n) => new Uint8Array(n),
  2: (n) => new Uint16Array(n),
  4: (n) => new Uint32Array(n),
  8: (n) => new Float64Array(n),
};

/**
 * Entries of `width` bytes, all 0 until set. `spill: false` holds every page (a log in memory);
 * else past `heldPages` pages the least recently used one goes to the file. `name` names the file.
 */
export class PagedColumn {
  readonly width: ColumnWidth;
  readonly #name: string;
  readonly #entries: number;
  readonly #shift: number;
  readonly #heldPages: number;
  /** Held pages, most recently used last. */
  #held: Held[] = [];
  #last: Held | undefined;
  #dir: string | undefined;
  #fd: number | undefined;

  constructor(p: { name: string; width?: ColumnWidth; spill: boolean; pageEntries?: number; heldPages?: number }) {
    this.width = p.width ?? 1;
    this.#name = p.name;
    const entries = p.pageEntries ?? PAGE_ENTRIES;
    if (!(Number.isInteger(Math.log2(entries)) && entries >= 1)) throw new RangeError(`page entries must be a power of two, got ${entries}`);
    this.#entries = entries;
    this.#shift = Math.log2(entries);
    this.#heldPages = p.spill ? Math.max(1, p.heldPages ?? HELD_PAGES) : Infinity;
  }

  get(i: number): number {
    return this.#page(i).page[i & (this.#entries - 1)]!;
  }

  set(i: number, v: number): void {
    const h = this.#page(i);
    h.page[i & (this.#entries - 1)] = v;
    h.dirty = true;
  }

  /** Removes the temp file (if any); the column is not used after. */
  remove(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    if (this.#dir !== undefined) removeTempDir(this.#dir);
    this.#dir = undefined;
    this.#held = [];
    this.#last = undefined;
  }

  #page(i: number): Held {
    if (!(Number.isInteger(i) && i >= 0)) throw new RangeError(`column position ${i}`);
    const no = i >>> this.#shift;
    const last = this.#last;
    if (last !== undefined && last.no === no) return last;
    const held = this.#held;
    let at = held.findIndex((h) => h.no === no);
    let h: Held;
    if (at >= 0) {
      h = held[at]!;
      held.splice(at, 1);
    } else if (held.length < this.#heldPages) {
      h = { no, page: pageOf[this.width](this.#entries), dirty: false };
      this.#read(h);
    } else {
      // The least recently used page makes room: written out if changed, its memory reused.
      h = held.shift()!;
      if (h.dirty) this.#write(h);
      h.no = no;
      h.dirty = false;
      this.#read(h);
    }
    held.push(h);
    this.#last = h;
    return h;
  }

  #bytes(h: Held): Uint8Array {
    return new Uint8Array(h.page.buffer, h.page.byteOffset, h.page.byteLength);
  }

  /** The page from the file, zeros where the file has not reached. */
  #read(h: Held): void {
    const bytes = this.#bytes(h);
    bytes.fill(0);
    if (this.#fd === undefined) return;
    const at = h.no * bytes.byteLength;
    let done = 0;
    while (done < bytes.byteLength) {
      const n = readSync(this.#fd, bytes, done, bytes.byteLength - done, at + done);
      if (n === 0) break;
      done += n;
    }
  }

  #write(h: Held): void {
    if (this.#fd === undefined) {
      this.#dir = makeTempDir("acp-replay-column-");
      this.#fd = openSync(join(this.#dir, `${this.#name}.bin`), "w+", 0o600);
    }
    const bytes = this.#bytes(h);
    const at = h.no * bytes.byteLength;
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(this.#fd, bytes, done, bytes.byteLength - done, at + done);
  }
}
