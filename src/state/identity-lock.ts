// One identity runs in one process: a lock file per identity in the state dir
// (`<stateDir>/locks/<aid>.lock`, holding who took it: pid, host, command, since). Taking it is one
// exclusive link of a complete file; a lock whose process is gone (same host, pid not alive) is
// stale and taken over. The same process may take it again (an identity restarted in place:
// counted, released when the last holder lets go). No timers: nothing to refresh, nothing to go stale while the
// holder runs — the holder's pid is the proof, checked on this machine, where the state dir lives.
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { encodeSafeName } from "./safe-name.ts";

export interface LockHolder {
  pid: number;
  host: string;
  /** What runs it (`acp-group run --config dave.json`, `openclaw gateway`…). */
  command: string;
  /** ISO time the lock was taken. */
  since: string;
}

/** Another live process runs this identity. */
export class IdentityInUseError extends Error {
  readonly code = "IDENTITY_IN_USE";
  readonly aid: string;
  readonly file: string;
  readonly holder: LockHolder;
  constructor(aid: string, file: string, holder: LockHolder) {
    const where = holder.host === hostname() ? `pid ${holder.pid}` : `pid ${holder.pid} on ${holder.host}`;
    super(
      `${aid} is already running in another process (${where}: ${holder.command}, since ${holder.since}); one identity runs in one process — stop that one first` +
        ` (if it is gone, delete ${file})`,
    );
    this.name = "IdentityInUseError";
    this.aid = aid;
    this.file = file;
    this.holder = holder;
  }
}

export interface IdentityLock {
  readonly file: string;
  /** Lets go (once per acquire); the file goes with the last holder in this process. */
  release(): void;
}

/** Locks this process holds: file → how many times. */
const held = new Map<string, number>();
let exitHook = false;

export const lockFile = (stateDir: string, aid: string): string => join(stateDir, "locks", `${encodeSafeName(aid.toLowerCase())}.lock`);

/** Whether `pid` is a live process on this machine (a process we may not signal is alive too). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Creates the lock file holding `me`; false when it exists already. Written aside, then linked into
 * place: a lock file is never seen half written (a reader would take an empty one for stale).
 */
function tryCreate(file: string, me: LockHolder): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(me) + "\n", { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const h = JSON.parse(readFileSync(file, "utf8")) as Partial<LockHolder>;
    if (typeof h.pid !== "number" || typeof h.host !== "string") return undefined;
    return { pid: h.pid, host: h.host, command: typeof h.command === "string" ? h.command : "?", since: typeof h.since === "string" ? h.since : "?" };
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock of `aid` in `stateDir`, or throws IdentityInUseError naming who holds it. A lock
 * left by a process that is gone (or an unreadable one) is taken over.
 */
export function acquireIdentityLock(p: { stateDir: string; aid: string; command?: string; now?: () => number; isAlive?: (pid: number) => boolean }): IdentityLock {
  const file = lockFile(p.stateDir, p.aid);
  const isAlive = p.isAlive ?? alive;
  const mine = held.get(file);
  if (mine !== undefined) {
    held.set(file, mine + 1);
    return handle(file);
  }
  mkdirSync(join(p.stateDir, "locks"), { recursive: true, mode: 0o700 });
  const me: LockHolder = { pid: process.pid, host: hostname(), command: p.command ?? commandLine(), since: new Date((p.now ?? Date.now)()).toISOString() };
  for (let attempt = 0; !tryCreate(file, me); attempt++) {
    const holder = readHolder(file);
    // Held by a process that runs: on this machine its pid says so; on another we cannot tell.
    const live = holder !== undefined && holder.pid !== process.pid && (holder.host !== me.host || isAlive(holder.pid));
    // A second refusal: another process took the stale lock over between our two tries.
    if (live || attempt > 0) throw new IdentityInUseError(p.aid, file, holder ?? { pid: 0, host: "?", command: "?", since: "?" });
    // Stale (its process is gone, or an unreadable file): take it over.
    try {
      unlinkSync(file);
    } catch {
      // another process took it over first: the next create says so
    }
  }
  held.set(file, 1);
  if (!exitHook) {
    exitHook = true;
    // An exit that skips close() (a closed pipe, an uncaught error) still leaves no lock behind.
    process.once("exit", () => {
      for (const f of held.keys()) removeIfMine(f);
      held.clear();
    });
  }
  return handle(file);
}

function handle(file: string): IdentityLock {
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      const n = held.get(file) ?? 0;
      if (n > 1) {
        held.set(file, n - 1);
        return;
      }
      held.delete(file);
      removeIfMine(file);
    },
  };
}

function removeIfMine(file: string): void {
  const holder = readHolder(file);
  if (holder?.pid !== process.pid || holder.host !== hostname()) return;
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

function commandLine(): string {
  const args = process.argv.slice(1).map((a) => a.replace(/^.*[/\\](acp-group(\.mjs)?|bin\.js)$/, "acp-group"));
  return args.join(" ").slice(0, 200) || "node";
}
