import type { LogLevel, Logger } from "./types.ts";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Flattens an Error into loggable fields (message, code, stack) — for the log only, never a group. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { error: err.message, ...(code !== undefined ? { code } : {}), stack: err.stack };
  }
  return { error: String(err) };
}

/** JSON-lines logger: `{"t":…,"level":…,"event":…,…fields}` per line. */
export function createJsonLogger(params: {
  level?: LogLevel;
  write?: (line: string) => void;
  base?: Record<string, unknown>;
  now?: () => number;
}): Logger {
  const min = RANK[params.level ?? "info"];
  const write = params.write ?? ((line: string) => process.stderr.write(line + "\n"));
  const now = params.now ?? Date.now;
  return {
    log(level, event, fields) {
      if (RANK[level] < min) return;
      write(JSON.stringify({ t: new Date(now()).toISOString(), level, event, ...params.base, ...fields }));
    },
  };
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
