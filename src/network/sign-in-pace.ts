// Sign-ins of a process, paced: at most `concurrency` identities sign in and open their socket at
// once, the most urgent waiting one goes next (priorities read when a slot frees, at most
// PRIORITY_READ_MS after the last read, so an identity that became active while it waited moves
// up), and when they queue each start is spread by a little random jitter. A thousand identities
// starting, or coming back after the network restarted, then neither stall the event loop with a
// thousand TLS handshakes at once nor flood the network from one operator. An uncontended sign-in
// starts at once, with no timer. With the event loop to go by (the process's pace has it), the
// width follows the CPU the process gets: one more at each freed slot while the loop keeps up,
// half as many when it is late and its own work is why (it used most of a core meanwhile; late
// because other processes had the CPU, fewer sign-ins would not make it sooner), between
// MIN_SIGN_IN_CONCURRENCY and `maxConcurrency`.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { NetworkError } from "./errors.ts";

/** How late the event loop has run since the last look, and how much CPU it used meanwhile. */
export interface LoopLag {
  /**
   * Since the last read: the loop's longest delay in ms (past its own tick), its CPU time as a
   * share of the time passed (0–1), and whether it waited for I/O at all (false: the same busy
   * stretch is still under way, its delay not known yet).
   */
  read(): { lagMs: number; cpuShare: number; idled: boolean };
  /** Nobody waits: stop watching until the next read. */
  rest(): void;
}

export interface SignInPaceOptions {
  /** Sign-ins (and their socket's opening) in flight at once; with `loopLag`, at first. Default 32. */
  concurrency?: number;
  /** With `loopLag`: the widest the pace goes. Default 4 × DEFAULT_SIGN_IN_CONCURRENCY. */
  maxConcurrency?: number;
  /** The event loop's delay to go by (see {@link eventLoopLag}); without it the width stays `concurrency`. */
  loopLag?: LoopLag;
  /** When sign-ins queue, each start waits a random 0..jitterMs. Default 20. */
  jitterMs?: number;
  random?: () => number;
  /** Default Date.now. */
  now?: () => number;
}

/** Lets the slot go (once; later calls do nothing). */
export type SignInRelease = () => void;

interface Waiter {
  priority: () => number;
  /** Its priority at the last read (while an order is kept). */
  read: number;
  /** Granted or closed: skipped when met in the order. */
  gone: boolean;
  grant: (release: SignInRelease) => void;
  fail: (err: Error) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

export const DEFAULT_SIGN_IN_CONCURRENCY = 32;
/** The narrowest the pace goes while the loop lags (a GC pause must not stop sign-ins to a trickle). */
export const MIN_SIGN_IN_CONCURRENCY = 4;
/**
 * The loop lags when its delay passed LAG_HIGH_MS since the last freed slot while it used over
 * BUSY_CPU_SHARE of a core (the width halves), and keeps up under LAG_LOW_MS (the width grows by
 * one): half and a fifth of the 100 ms an identity may wait on the loop, so a storm of sign-ins
 * uses what CPU there is without stalling the identities already online.
 */
export const LAG_HIGH_MS = 50;
export const LAG_LOW_MS = 20;
export const BUSY_CPU_SHARE = 0.8;
export const DEFAULT_SIGN_IN_JITTER_MS = 20;
/**
 * How long an order of the waiters by priority is kept: a freed slot reads every waiter's priority
 * only when the last read is older. Read at every freed slot, a thousand waiting identities cost
 * half a million reads (~0.5 s of the event loop) while they start.
 */
export const PRIORITY_READ_MS = 100;

export class SignInPace {
  /** Per access point: the identities waiting out a backoff, woken when one of them got through. */
  readonly #recovery = new Map<string, Map<() => void, () => number>>();
  #width: number;
  readonly #maxWidth: number;
  readonly #loopLag: LoopLag | undefined;
  readonly #jitterMs: number;
  readonly #random: () => number;
  readonly #waiting: Waiter[] = [];
  readonly #now: () => number;
  /** The waiters by priority, most urgent first (ties: first come), as read at #orderAt; undefined when none is kept. */
  #order: Waiter[] | undefined;
  #orderAt = 0;
  #active = 0;

  constructor(o: SignInPaceOptions = {}) {
    this.#width = Math.max(1, Math.floor(o.concurrency ?? DEFAULT_SIGN_IN_CONCURRENCY));
    this.#loopLag = o.loopLag;
    this.#maxWidth = o.loopLag ? Math.max(this.#width, Math.floor(o.maxConcurrency ?? 4 * DEFAULT_SIGN_IN_CONCURRENCY)) : this.#width;
    this.#jitterMs = Math.max(0, o.jitterMs ?? DEFAULT_SIGN_IN_JITTER_MS);
    this.#random = o.random ?? Math.random;
    this.#now = o.now ?? Date.now;
  }

  /** Sign-ins holding a slot now. */
  get active(): number {
    return this.#active;
  }

  /** Sign-ins allowed at once now. */
  get width(): number {
    return this.#width;
  }

  /** Sign-ins waiting for one. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves with the release once this sign-in may start: at once when a slot is free and
   * nobody waits, else when it is the most urgent waiter (highest `priority()`) and a slot frees.
   * Rejects with CLOSED when `signal` aborts first.
   */
  take(priority: () => number = () => 0, signal?: AbortSignal): Promise<SignInRelease> {
    if (signal?.aborted) return Promise.reject(closed());
    if (this.#active < this.#width && this.#waiting.length === 0) return Promise.resolve(this.#occupy());
    return new Promise<SignInRelease>((resolve, reject) => {
      const waiter: Waiter = {
        priority,
        read: 0,
        gone: false,
        grant: resolve,
        fail: reject,
        signal,
        onAbort: () => {
          const i = this.#waiting.indexOf(waiter);
          if (i >= 0) this.#waiting.splice(i, 1);
          waiter.gone = true;
          reject(closed());
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.#waiting.push(waiter);
      // An order is kept: this one takes its place in it, after every waiter at least as urgent.
      if (this.#order) insertByPriority(this.#order, waiter, readPriority(waiter));
    });
  }

  /**
   * Calls `wake` (once) when another identity of `origin` opens its socket: the network is back,
   * so a backoff that grew while it was down need not be waited out (the pace still bounds them).
   * Returns the way to stop waiting.
   */
  onRecovered(origin: string, wake: () => void, priority: () => number = () => 0): () => void {
    let waiting = this.#recovery.get(origin);
    if (!waiting) this.#recovery.set(origin, (waiting = new Map()));
    const all = waiting;
    const once = () => {
      off();
      wake();
    };
    const off = () => {
      all.delete(once);
      if (all.size === 0 && this.#recovery.get(origin) === all) this.#recovery.delete(origin);
    };
    all.set(once, priority);
    return off;
  }

  /**
   * An identity of `origin` opened its socket: every one waiting out a backoff there tries now,
   * the most urgent first (the first few take the free slots at once, the rest queue by priority).
   */
  recovered(origin: string): void {
    const waiting = this.#recovery.get(origin);
    if (!waiting) return;
    this.#recovery.delete(origin);
    const byUrgency = [...waiting].map(([wake, priority]) => ({ wake, p: readPriority({ priority }) })).sort((a, b) => b.p - a.p);
    for (const { wake } of byUrgency) wake();
  }

  #occupy(): SignInRelease {
    this.#active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      if (this.#waiting.length > 0) this.#follow();
      this.#next();
    };
  }

  /** Hands the free slot to the most urgent waiter, after its jitter (the slot is held meanwhile). */
  #next(): void {
    if (this.#active >= this.#width || this.#waiting.length === 0) return;
    const waiter = this.#mostUrgent();
    waiter.gone = true;
    this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
    if (this.#waiting.length === 0) {
      this.#order = undefined;
      this.#loopLag?.rest();
    }
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
    const release = this.#occupy();
    const delay = Math.floor(this.#random() * this.#jitterMs);
    if (delay <= 0) {
      waiter.grant(release);
      // A width that grew has room for more.
      return this.#next();
    }
    const timer = setTimeout(() => {
      waiter.signal?.removeEventListener("abort", onAbort);
      waiter.grant(release);
    }, delay);
    // Closed during its jitter: the slot goes to the next one.
    const onAbort = () => {
      clearTimeout(timer);
      release();
      waiter.fail(closed());
    };
    waiter.signal?.addEventListener("abort", onAbort, { once: true });
    this.#next();
  }

  /** A slot freed while others wait: the width follows how late the loop ran since the last one. */
  #follow(): void {
    if (!this.#loopLag) return;
    const { lagMs, cpuShare, idled } = this.#loopLag.read();
    if (lagMs > LAG_HIGH_MS && cpuShare > BUSY_CPU_SHARE) this.#width = Math.max(Math.min(MIN_SIGN_IN_CONCURRENCY, this.#maxWidth), Math.floor(this.#width / 2));
    else if (idled && lagMs < LAG_LOW_MS) this.#width = Math.min(this.#maxWidth, this.#width + 1);
  }

  /** The first of the most urgent (ties: first come), from the kept order or a new read of every waiter's priority. */
  #mostUrgent(): Waiter {
    const now = this.#now();
    if (this.#order === undefined || now - this.#orderAt >= PRIORITY_READ_MS || now < this.#orderAt) {
      for (const w of this.#waiting) w.read = readPriority(w);
      // Stable: equal priorities stay in the order they came.
      this.#order = [...this.#waiting].sort(byUrgency);
      this.#orderAt = now;
    }
    const order = this.#order;
    let i = 0;
    while (order[i]!.gone) i++;
    const waiter = order[i]!;
    order.splice(0, i + 1);
    return waiter;
  }
}

/** Most urgent first; -Infinity (a priority that threw) compares too. */
const byUrgency = (a: Waiter, b: Waiter): number => (a.read > b.read ? -1 : a.read < b.read ? 1 : 0);

/** Puts `w` (priority `p`) after every waiter of `order` at least as urgent. */
function insertByPriority(order: Waiter[], w: Waiter, p: number): void {
  w.read = p;
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (order[mid]!.read >= p) lo = mid + 1;
    else hi = mid;
  }
  order.splice(lo, 0, w);
}

/** A priority function that throws counts as the lowest: one identity's bug never stops the queue. */
function readPriority(w: Pick<Waiter, "priority">): number {
  try {
    const p = w.priority();
    return Number.isFinite(p) ? p : 0;
  } catch {
    return Number.NEGATIVE_INFINITY;
  }
}

const closed = () => new NetworkError("CLOSED", "closed while waiting to sign in");

/**
 * The event loop's delay from Node's own monitor (a native timer at `resolutionMs`) and the CPU
 * time of its thread, watched only while sign-ins wait: the first read starts it (and says no lag,
 * no CPU), `rest` stops it.
 */
export function eventLoopLag(resolutionMs = 10): LoopLag {
  let watch: { h: ReturnType<typeof monitorEventLoopDelay>; at: number; cpu: NodeJS.CpuUsage; elu: ReturnType<typeof performance.eventLoopUtilization> } | undefined;
  return {
    read() {
      const now = performance.now();
      if (!watch) {
        const h = monitorEventLoopDelay({ resolution: resolutionMs });
        h.enable();
        watch = { h, at: now, cpu: process.threadCpuUsage(), elu: performance.eventLoopUtilization() };
        return { lagMs: 0, cpuShare: 0, idled: false };
      }
      const used = process.threadCpuUsage(watch.cpu);
      const waited = performance.eventLoopUtilization(watch.elu).idle > 0;
      const elapsedMs = now - watch.at;
      watch.at = now;
      watch.cpu = process.threadCpuUsage();
      watch.elu = performance.eventLoopUtilization();
      // The histogram records whole intervals, its own tick included; none yet: the same busy stretch goes on.
      const ticked = watch.h.count > 0;
      const lagMs = ticked ? Math.max(0, watch.h.max / 1e6 - resolutionMs) : 0;
      if (ticked) watch.h.reset();
      return { lagMs, cpuShare: elapsedMs > 0 ? Math.min(1, (used.user + used.system) / 1000 / elapsedMs) : 0, idled: waited && ticked };
    },
    rest() {
      watch?.h.disable();
      watch = undefined;
    },
  };
}

/** The pace every identity of this process shares unless given its own: its width follows the event loop. */
export const processSignInPace = new SignInPace({ loopLag: eventLoopLag() });

/** No pace: every sign-in at once, no wake-ups (`signInPace: null`). */
export const UNPACED = {
  take: (): Promise<SignInRelease> => Promise.resolve(() => {}),
  onRecovered: (): (() => void) => () => {},
  recovered: (): void => {},
} satisfies Pick<SignInPace, "take" | "onRecovered" | "recovered">;
