// The lifetime `start` and `run` share: the configured identities started on one abort signal,
// stopped once (Ctrl-C, SIGTERM, the caller's signal, --duration-ms or a failed start) with state
// saved, and lines typed or piped on stdin posted one after another. What differs between the two
// commands (where identities connect, who posts, what else closes) comes in as parameters.
import { createInterface } from "node:readline";
import { startIdentity, type RunningIdentity, type StartIdentityParams } from "../runtime/identity.ts";
import type { Io } from "./args.ts";
import { startInSlots } from "./start-slots.ts";

import type { TurnBudget } from "../util/turn-budget.ts";

export { START_AT_ONCE, START_WAIT_MS } from "./start-slots.ts";

export interface LiveSession {
  /** Every identity started so far. */
  readonly running: RunningIdentity[];
  /** Aborted when stopping begins; each identity closes with it. */
  readonly signal: AbortSignal;
  /** True once stopping began. */
  readonly stopping: boolean;
  /** Resolves once stopped: every identity closed and saved, `afterStop` done. Never rejects. */
  readonly stopped: Promise<void>;
  /** Starts stopping (once; later calls return the same promise). */
  stop(why: string): Promise<void>;
  /**
   * Starts each identity on the session's signal; none after stopping began. Resolves once all
   * started (connecting goes on in the background); rejects with the first that could not start.
   * A thousand identities start under the process's turn budget (each while the turn has time
   * left, shared with the sign-ins' requests, else in a later turn), and at most START_AT_ONCE
   * part-way through start-up (`ready` not settled, for at most START_WAIT_MS each), so the ones
   * already connected keep answering (see start-slots.ts); the first start waits for the next
   * turn, so the work before it (reading the config, and the garbage collection that leaves due)
   * is never in the same turn as identities starting.
   */
  startIdentities(ids: readonly string[], params: (id: string) => Omit<StartIdentityParams, "identityId" | "abortSignal">): Promise<void>;
  /** Stops after `ms` (none when undefined). */
  stopAfter(ms: number | undefined): void;
  /** Each non-empty line of `input` (default stdin) goes to `post`; the end of a pipe stops nothing. */
  /** No group: the lines can only be `/dm NAME TEXT`. */
  readLines(p: { input?: NodeJS.ReadableStream | undefined; groupId: string | undefined; as: string; post: (text: string) => void }): void;
  /** The timer, stdin and the signal handlers off. */
  release(): void;
}

export function openLiveSession(p: {
  io: Io;
  /** Starts one identity (default startIdentity; tests give their own). */
  startOne?: (params: StartIdentityParams) => RunningIdentity;
  /** The clock slots are held by, in ms (default performance.now). */
  now?: () => number;
  /** The turn budget identities start under (default the process's; tests give their own). */
  turns?: TurnBudget;
  /** Identities part-way through start-up at once (default START_AT_ONCE; tests give their own). */
  startAtOnce?: number;
  /** The longest one holds its slot, in ms (default START_WAIT_MS; tests give their own). */
  startWaitMs?: number;
  /** Stopping also when this aborts. */
  signal?: AbortSignal | undefined;
  /** After every identity closed: save conversations, close the back-end and what else runs. */
  afterStop: () => Promise<void>;
  /** A failure while stopping (logged by the command under its own event name). */
  onStopFailed: (err: unknown) => void;
}): LiveSession {
  const { io } = p;
  const startOne = p.startOne ?? startIdentity;
  const now = p.now ?? (() => performance.now());
  const abort = new AbortController();
  const running: RunningIdentity[] = [];
  let stopping: Promise<void> | undefined;
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  let timer: ReturnType<typeof setTimeout> | undefined;
  let rl: ReturnType<typeof createInterface> | undefined;

  const stop = (why: string): Promise<void> => {
    stopping ??= (async () => {
      try {
        io.out(`stopping (${why}) — saving state`);
        abort.abort();
        await Promise.all(running.map((r) => r.done));
        await p.afterStop();
      } catch (err) {
        p.onStopFailed(err);
      } finally {
        // Resolved here, not from an abort listener: `stopping` is not assigned yet while
        // abort() runs its listeners synchronously.
        markStopped();
      }
    })();
    return stopping;
  };

  // Installed before anything connects, so Ctrl-C while connecting still saves state.
  const onSigint = () => void stop("Ctrl-C");
  const onSigterm = () => void stop("SIGTERM");
  // A closed terminal: stop as cleanly as on Ctrl-C (state saved, a --fresh dir removed).
  const onSighup = () => void stop("SIGHUP");
  const onAbortSignal = () => void stop("aborted");
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigterm);
  process.once("SIGHUP", onSighup);
  p.signal?.addEventListener("abort", onAbortSignal, { once: true });
  if (p.signal?.aborted) void stop("aborted");

  return {
    running,
    signal: abort.signal,
    get stopping() {
      return stopping !== undefined;
    },
    stopped,
    stop,
    startIdentities(ids, params) {
      return startInSlots({
        ids,
        start: (id) => {
          const r = startOne({ ...params(id), identityId: id, abortSignal: abort.signal });
          running.push(r);
          return r;
        },
        signal: abort.signal,
        now,
        turns: p.turns,
        atOnce: p.startAtOnce,
        waitMs: p.startWaitMs,
      });
    },
    stopAfter(ms) {
      if (ms !== undefined && !stopping) timer = setTimeout(() => void stop(`--duration-ms ${ms}`), ms);
    },
    readLines({ input, groupId, as, post }) {
      if (input || process.stdin.isTTY) io.out(groupId === undefined ? `type \`/dm NAME TEXT\` to message an agent as ${as}; Ctrl-C to stop` : `type a line to post it into [${groupId}] as ${as}; Ctrl-C to stop`);
      rl = createInterface({ input: input ?? process.stdin });
      rl.on("line", (line) => {
        const text = line.trim();
        if (text) post(text);
      });
    },
    release() {
      if (timer) clearTimeout(timer);
      rl?.close();
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
      process.off("SIGHUP", onSighup);
      p.signal?.removeEventListener("abort", onAbortSignal);
    },
  };
}

/**
 * Posts lines one after another, in order; a failed post is reported on stderr and logged (by
 * the command, under its own event name), never retried.
 */
export function createSerialPoster(p: {
  io: Io;
  as: string;
  /** False once nothing more may be posted (stopping, or not connected). */
  open: () => boolean;
  send: (text: string) => Promise<unknown>;
  onFailed: (err: unknown) => void;
}): (text: string) => void {
  let posting: Promise<unknown> = Promise.resolve();
  return (text) => {
    if (!p.open()) return;
    posting = posting.then(() =>
      p.send(text).catch((err: unknown) => {
        p.io.err(`could not post as ${p.as}: ${err instanceof Error ? err.message : String(err)}`);
        p.onFailed(err);
      }),
    );
  };
}
