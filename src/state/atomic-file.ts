import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm, writeFile, type FileHandle } from "node:fs/promises";

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

/**
 * {@link writeFileAtomicSync} off the main thread: the same temp file, fsync, rename and
 * directory fsync, each through `fs/promises` (libuv's thread pool), so a save never blocks the
 * event loop. Two writes to one file must not overlap: the save scheduler serialises them.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const dir = dirname(file);
  // One mkdir per directory and process: a busy group saves every second into the same folder.
  if (!knownDirs.has(dir)) {
    await mkdir(dir, { recursive: true });
    knownDirs.add(dir);
  }
  const tmp = join(dir, `${basename(file)}${TMP_MARKER}${process.pid}-${randomBytes(4).toString("hex")}`);
  // `flush: true` fsyncs the file before the promise settles: one thread-pool job instead of
  // open, write, fsync and close as four.
  const writeTmp = () => writeFile(tmp, data, { encoding: "utf8", mode: 0o600, flush: true });
  try {
    await writeTmp().catch(async (err: NodeJS.ErrnoException) => {
      // The folder went away since we made it (someone cleared the state dir): make it again once.
      if (err.code !== "ENOENT") throw err;
      knownDirs.delete(dir);
      await mkdir(dir, { recursive: true });
      knownDirs.add(dir);
      await writeTmp();
    });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
  await syncDirCoalesced(dir);
}

interface DirSync {
  /** The directory fsync running now. */
  current: Promise<void> | undefined;
  /** The one queued after it, shared by every rename that landed while `current` ran. */
  next: Promise<void> | undefined;
}
const dirSyncs = new Map<string, DirSync>();

/**
 * A directory fsync that covers this caller's rename. Renames into one folder share syncs: a sync
 * started after a rename covers it, so while one runs, every caller waits for the single next one.
 * 1,000 groups of an identity saving at once cost a handful of directory fsyncs, not 1,000.
 */
function syncDirCoalesced(dir: string): Promise<void> {
  let s = dirSyncs.get(dir);
  if (!s) dirSyncs.set(dir, (s = { current: undefined, next: undefined }));
  const state = s;
  const run = (): Promise<void> => {
    const p = syncDirAsync(dir).finally(() => {
      if (state.current === p) state.current = undefined;
      if (!state.current && !state.next) dirSyncs.delete(dir);
    });
    state.current = p;
    return p;
  };
  if (!state.current) return run();
  state.next ??= state.current.then(() => {
    state.next = undefined;
    return run();
  });
  return state.next;
}

const knownDirs = new Set<string>();

async function syncDirAsync(dir: string): Promise<void> {
  // Best effort, as in syncDir: the rename itself already succeeded.
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // best effort
  } finally {
    await handle?.close().catch(() => {});
  }
}
