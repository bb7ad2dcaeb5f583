// Records a replay writes out as it goes and reads back once it is done (dispatches, drops): in
// memory when the log is, else in a temp file (0600, removed by `remove`), so that what a long
// replay keeps does not grow with its log.
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseJsonText } from "./json-text.ts";
import { rawLines } from "./log.ts";
import { makeTempDir, removeTempDir } from "./temp-dirs.ts";

export interface RecordStore<T> {
  push(record: T): void;
  /** A fresh walk over the records, in the order pushed. */
  records(): Iterable<T>;
  /** Removes the temp file (no-op in memory); the store is not used after. */
  remove(): void;
}

/** The records in an array. */
export function memoryStore<T>(): RecordStore<T> & { readonly all: T[] } {
  const all: T[] = [];
  return { all, push: (r) => void all.push(r), records: () => all, remove: () => {} };
}

const FLUSH_BYTES = 64 * 1024;

/** The records as JSON Lines in a temp file of their own; `name` names the file (for a reader of /tmp). */
export function fileStore<T>(name: string): RecordStore<T> {
  let dir: string | undefined;
  let fd: number | undefined;
  let file = "";
  let pending: string[] = [];
  let size = 0;
  const flush = () => {
    if (pending.length === 0) return;
    if (fd === undefined) {
      dir = makeTempDir("acp-replay-");
      file = join(dir, `${name}.jsonl`);
      fd = openSync(file, "w", 0o600);
    }
    writeSync(fd, pending.join(""));
    pending = [];
    size = 0;
  };
  return {
    push(record) {
      const line = `${JSON.stringify(record)}\n`;
      pending.push(line);
      size += line.length;
      if (size >= FLUSH_BYTES) flush();
    },
    *records() {
      flush();
      if (fd === undefined) return;
      for (const raw of rawLines(file, Number.MAX_SAFE_INTEGER)) if (raw.text) yield parseJsonText(raw.text) as T;
    },
    remove() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      pending = [];
      if (dir !== undefined) removeTempDir(dir);
      dir = undefined;
    },
  };
}
