import type { LogLevel, Logger } from "./types.ts";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Flattens an Error into loggable fields (message, code, cause, stack) — for the log only, never a
 * group. Loggers from this module drop `stack` unless they log at `debug` (see {@link guardLogger}).
 */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const cause = causeOf(err.cause);
    return { error: err.message, ...(code !== undefined ? { code } : {}), ...(cause !== undefined ? { cause } : {}), stack: err.stack };
  }
  return { error: String(err) };
}

/** One line of a cause: `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`, or its message. */
function causeOf(cause: unknown): string | undefined {
  if (cause === undefined || cause === null) return undefined;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}

export interface LogGuardOptions {
  /** The logger's level: stacks are kept only at `debug`. */
  level?: LogLevel;
  /** Lines of one warn/error event per window before it is suppressed. Default 10. */
  burst?: number;
  /** Default 60 s. */
  windowMs?: number;
  now?: () => number;
}

interface EventWindow {
  /** Start of the current window (local ms). */
  since: number;
  written: number;
  suppressed: number;
}

/**
 * A logger that holds under a flood: each warn/error event writes at most `burst` lines per
 * window; the rest are counted, and when the window ends one `log.suppressed` line says how many
 * (`{ of, suppressed, windowMs }`). Stacks are dropped unless the level is `debug`. Debug and info
 * lines pass unlimited (their volume is the operator's choice). Owns one unref'd timer, armed
 * only while something is suppressed.
 */
export function guardLogger(parent: Logger, opts: LogGuardOptions = {}): Logger {
  const keepStacks = (opts.level ?? "info") === "debug";
  const burst = opts.burst ?? 10;
  const windowMs = opts.windowMs ?? 60_000;
  const now = opts.now ?? Date.now;
  const windows = new Map<string, EventWindow>();
  // Armed when the first line of a window is suppressed; reports and resets at the window's end.
  let summaryTimer: ReturnType<typeof setTimeout> | undefined;

  const report = () => {
    summaryTimer = undefined;
    const t = now();
    for (const [key, w] of windows) {
      if (t - w.since < windowMs && w.suppressed === 0) continue;
      if (w.suppressed > 0) {
        const [level, event] = splitKey(key);
        parent.log(level, "log.suppressed", { of: event, suppressed: w.suppressed, windowMs });
      }
      windows.delete(key);
    }
  };

  return {
    log(level, event, fields) {
      const clean = !keepStacks && fields !== undefined && "stack" in fields ? withoutStack(fields) : fields;
      if (level !== "warn" && level !== "error") return parent.log(level, event, clean);
      const key = `${level}\u0000${event}`;
      const t = now();
      let w = windows.get(key);
      if (w && t - w.since >= windowMs && w.suppressed === 0) w = undefined;
      if (!w) windows.set(key, (w = { since: t, written: 0, suppressed: 0 }));
      if (w.written < burst) {
        w.written++;
        return parent.log(level, event, clean);
      }
      w.suppressed++;
      if (!summaryTimer) {
        summaryTimer = setTimeout(report, Math.max(1, w.since + windowMs - t));
        summaryTimer.unref?.();
      }
    },
  };
}

function splitKey(key: string): [LogLevel, string] {
  const i = key.indexOf("\u0000");
  return [key.slice(0, i) as LogLevel, key.slice(i + 1)];
}

function withoutStack(fields: Record<string, unknown>): Record<string, unknown> {
  const { stack: _stack, ...rest } = fields;
  return rest;
}

/**
 * JSON-lines logger: `{"t":…,"level":…,"event":…,…fields}` per line, guarded by
 * {@link guardLogger} (warn/error floods summarised, stacks only at `debug`).
 */
export function createJsonLogger(params: {
  level?: LogLevel;
  write?: (line: string) => void;
  base?: Record<string, unknown>;
  now?: () => number;
  /** Flood limits; `false` turns the guard off (stacks then always kept). */
  guard?: Omit<LogGuardOptions, "level" | "now"> | false;
}): Logger {
  const min = RANK[params.level ?? "info"];
  const write = params.write ?? ((line: string) => process.stderr.write(line + "\n"));
  const now = params.now ?? Date.now;
  const sink: Logger = {
    log(level, event, fields) {
      if (RANK[level] < min) return;
      write(JSON.stringify({ t: new Date(now()).toISOString(), level, event, ...params.base, ...fields }));
    },
  };
  if (params.guard === false) return sink;
  return guardLogger(sink, { ...params.guard, level: params.level ?? "info", now });
}

/** A logger that keeps entries in memory (tests, replay). */
export function createMemoryLogger(): Logger & {
  entries: Array<{ level: LogLevel; event: string; fields: Record<string, unknown> }>;
} {
  const entries: Array<{ level: LogLevel; event: string; fields: Record<string, unknown> }> = [];
  return {
    entries,
    log(level, event, fields) {
      entries.push({ level, event, fields: fields ?? {} });
    },
  };
}

export const silentLogger: Logger = { log() {} };

/** Adds fixed context (identity, group) to every entry. */
export function childLogger(parent: Logger, base: Record<string, unknown>): Logger {
  return { log: (level, event, fields) => parent.log(level, event, { ...base, ...fields }) };
}
