// Records a replay writes out as it goes and reads back once it is done (dispatches, drops): in
// memory when the log is, else in a temp file (0600, removed by `remove`), so that what a long
// replay keeps does not grow with its log.
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { FileWriter } from "./file-writer.ts";
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

/** The records as JSON Lines in a temp file of their own; `name` names the file (for a reader of /tmp). */
export function fileStore<T>(name: string): RecordStore<T> {
  let dir: string | undefined;
  let fd: number | undefined;
  let file = "";
  // Each record's text is copied into the writer's bytes at once (file-writer.ts).
  let out: FileWriter | undefined;
  return {
    push(record) {
      if (out === undefined) {
        dir = makeTempDir("acp-replay-");
        file = join(dir, `${name}.jsonl`);
        fd = openSync(file, "w", 0o600);
        out = new FileWriter(fd);
      }
      out.write(`${JSON.stringify(record)}\n`);
    },
    *records() {
      if (out === undefined) return;
      out.flush();
      for (const raw of rawLines(file, Number.MAX_SAFE_INTEGER)) if (raw.text) yield parseJsonText(raw.text) as T;
    },
    remove() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      out = undefined;
      if (dir !== undefined) removeTempDir(dir);
      dir = undefined;
    },
  };
}
