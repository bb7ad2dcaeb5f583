import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

/** Marker inside temporary file names; readers ignore anything carrying it. */
export const TMP_MARKER = ".tmp-";

/**
 * Replaces `file` with `data` so that a reader (or a restart after a crash) sees either the old
 * content or the new one, never a torn file: write a sibling temp file, fsync it, rename it over
 * the target (atomic within one directory), then fsync the directory so the rename survives
 * power loss. A crash before the rename leaves only a temp file, which loaders never read.
 */
export function writeFileAtomicSync(file: string, data: string): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `${basename(file)}${TMP_MARKER}${process.pid}-${randomBytes(4).toString("hex")}`);
  let fd: number | undefined = openSync(tmp, "w", 0o600);
  try {
    const buf = Buffer.from(data, "utf8");
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  syncDir(dir);
}

function syncDir(dir: string): void {
  // Directory fsync is what makes the rename durable on Linux; some platforms (Windows) refuse
  // to open a directory, and the write itself already succeeded, so failure here is not fatal.
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // best effort
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
