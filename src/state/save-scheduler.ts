// Asynchronous, coalesced state saves. Per key (one state file) at most one write is in flight;
// requests meanwhile only mark the key dirty, and the next write reads the state when it starts,
// so the latest state always wins and an older snapshot can never land after a newer one. The
// event loop never waits on a disk: writes go through fs/promises. `flush()` is how close() makes
// sure everything asked for is on disk.
import { errorFields, silentLogger } from "../log.ts";
import type { Logger } from "../types.ts";

export interface SaveScheduler {
  /**
   * Ask for `key` to be saved: within `delayMs` (a busy group coalesces a second's changes into
   * one write), or with 0 as soon as the write in flight for it (if any) ends.
   */
  request(key: string, delayMs?: number): void;
  /** Resolves once every save requested for `key` (or every key) before the call is written or failed. Never rejects. */
  flush(key?: string): Promise<void>;
  /** Keys with a write in flight now. */
  readonly writing: number;
}

interface Entry {
  /** Changed since the last write started. */
  dirty: boolean;
  /** A waiter or a 0-delay request wants the next write without delay. */
  urgent: boolean;
  /** The delay of the latest delayed request, for a re-write after the one in flight. */
  delayMs: number;
  /** Armed by a delayed request while idle; cleared when a write starts. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The write in flight, if any. */
  inFlight: Promise<void> | undefined;
  /** Resolved when the key is clean and idle. */
  waiters: Array<() => void>;
}

export function createSaveScheduler(p: {
  /** Writes the current state of `key`; called with at most one call in flight per key. */
  save: (key: string) => Promise<void>;
  logger?: Logger;
  /**
   * Writes in flight across all keys (default 4, libuv's thread pool size): more would only queue
   * in the pool, and each queued write holds its serialised state in memory meanwhile.
   */
  maxConcurrentWrites?: number;
}): SaveScheduler {
  const logger = p.logger ?? silentLogger;
  const maxWrites = p.maxConcurrentWrites ?? 4;
  const entries = new Map<string, Entry>();
  // Keys due for a write while every write slot was busy, oldest first (a Set keeps each once).
  const ready = new Set<string>();
  let writing = 0;

  const entryOf = (key: string): Entry => {
    let e = entries.get(key);
    if (!e) entries.set(key, (e = { dirty: false, urgent: false, delayMs: DEFAULT_DELAY_MS, timer: undefined, inFlight: undefined, waiters: [] }));
    return e;
  };

  function start(key: string, e: Entry): void {
    clearTimeout(e.timer);
    e.timer = undefined;
    if (writing >= maxWrites) {
      ready.add(key);
      return;
    }
    ready.delete(key);
    e.dirty = false;
    e.urgent = false;
    writing++;
    e.inFlight = Promise.resolve()
      .then(() => p.save(key))
      .catch((err: unknown) => logger.log("warn", "state.save-failed", { key, ...errorFields(err) }))
      .finally(() => {
        writing--;
        e.inFlight = undefined;
        settle(key, e);
        // A slot is free: the longest-waiting due key goes next.
        for (const next of ready) {
          if (writing >= maxWrites) break;
          const n = entries.get(next);
          ready.delete(next);
          if (n && n.dirty && !n.inFlight) start(next, n);
        }
      });
  }

  // After a write, or when a request finds the key idle: write again, arm the delay, or go quiet.
  function settle(key: string, e: Entry): void {
    if (e.inFlight || ready.has(key)) return;
    if (e.dirty && (e.urgent || e.waiters.length > 0)) return start(key, e);
    if (e.dirty) {
      e.timer ??= unref(setTimeout(() => start(key, e), e.delayMs));
      return;
    }
    for (const w of e.waiters.splice(0)) w();
    if (e.timer === undefined) entries.delete(key);
  }

  return {
    request(key, delayMs = DEFAULT_DELAY_MS) {
      const e = entryOf(key);
      e.dirty = true;
      if (delayMs <= 0) e.urgent = true;
      else e.delayMs = delayMs;
      if (e.inFlight || ready.has(key)) return;
      if (e.urgent) return start(key, e);
      e.timer ??= unref(setTimeout(() => start(key, e), delayMs));
    },
    flush(key) {
      const keys = key === undefined ? [...entries.keys()] : [key];
      return Promise.all(
        keys.map((k) => {
          const e = entries.get(k);
          if (!e || (!e.dirty && !e.inFlight)) return undefined;
          const done = new Promise<void>((resolve) => e.waiters.push(resolve));
          settle(k, e);
          return done;
        }),
      ).then(() => undefined);
    },
    get writing() {
      return writing;
    },
  };
}

const DEFAULT_DELAY_MS = 1000;

function unref(t: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  t.unref?.();
  return t;
}
