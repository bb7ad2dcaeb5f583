// Reading a recorded chat log (JSON Lines) for `replay` and `inspect`.

export interface LogLine {
  id: string;
  ts: number;
  sender: string;
  content: string;
  /** 1-based line number in the file. */
  line: number;
  /** Optional: ids this message replies to (used as reply metadata). */
  replyTo?: string[];
  /**
   * Optional human annotation: who the line is meant for. Present only where the log is
   * annotated (a line with `annotated: false` carries none), so its absence means "unknown",
   * not "addressed to nobody".
   */
  directedTo?: string[];
}

export class LogParseError extends Error {
  readonly code = "LOG_INVALID";
  readonly line: number;
  /** What is wrong with the line, without the location. */
  readonly reason: string;
  /** The log file, when the caller knows it. */
  readonly file: string | undefined;
  constructor(line: number, reason: string, file?: string) {
    super(`${file ? `${file} ` : ""}line ${line}: ${reason}`);
    this.name = "LogParseError";
    this.line = line;
    this.reason = reason;
    this.file = file;
  }
}

export interface ParsedLog {
  lines: LogLine[];
  skipped: Array<{ line: number; reason: string }>;
}

function parseLine(text: string, line: number): LogLine {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    throw new LogParseError(line, "not valid JSON");
  }
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
    throw new LogParseError(line, "expected a JSON object");
  }
  const o = obj as Record<string, unknown>;
  for (const key of ["id", "ts", "sender", "content"] as const) {
    if (!(key in o) || o[key] === null || o[key] === undefined) throw new LogParseError(line, `missing field \`${key}\``);
  }
  const ts = typeof o.ts === "string" && o.ts.trim() !== "" ? Number(o.ts) : o.ts;
  if (typeof ts !== "number" || !Number.isFinite(ts)) {
    throw new LogParseError(line, `expected \`ts\` to be epoch milliseconds, got ${JSON.stringify(o.ts)}`);
  }
  if (typeof o.sender !== "string" || o.sender === "") {
    throw new LogParseError(line, `expected \`sender\` to be a non-empty string, got ${JSON.stringify(o.sender)}`);
  }
  if (typeof o.content !== "string") {
    throw new LogParseError(line, `expected \`content\` to be a string, got ${JSON.stringify(o.content)}`);
  }
  if (typeof o.id !== "string" && typeof o.id !== "number") {
    throw new LogParseError(line, `expected \`id\` to be a string or number, got ${JSON.stringify(o.id)}`);
  }
  const out: LogLine = { id: String(o.id), ts, sender: o.sender, content: o.content, line };
  if (Array.isArray(o.replyTo)) out.replyTo = o.replyTo.filter((x): x is string => typeof x === "string");
  if (Array.isArray(o.directedTo) && o.annotated !== false) out.directedTo = o.directedTo.filter((x): x is string => typeof x === "string");
  return out;
}

/**
 * Parses JSON Lines. Blank lines are ignored. Without `skipBad` the first bad line throws a
 * {@link LogParseError} naming its line number; with it, bad lines are counted and skipped.
 * Lines are returned sorted by `ts` (stable), so equal timestamps keep file order.
 */
export function parseLog(text: string, opts: { skipBad?: boolean } = {}): ParsedLog {
  const lines: LogLine[] = [];
  const skipped: Array<{ line: number; reason: string }> = [];
  const seen = new Set<string>();
  const raw = text.split(/\r?\n/);
  for (let i = 0; i < raw.length; i++) {
    const t = raw[i]!.trim();
    if (t === "") continue;
    try {
      const parsed = parseLine(t, i + 1);
      if (seen.has(parsed.id)) throw new LogParseError(i + 1, `duplicate id ${JSON.stringify(parsed.id)}`);
      seen.add(parsed.id);
      lines.push(parsed);
    } catch (err) {
      if (!(err instanceof LogParseError) || !opts.skipBad) throw err;
      skipped.push({ line: err.line, reason: err.reason });
    }
  }
  lines.sort((a, b) => a.ts - b.ts);
  return { lines, skipped };
}

/** Consecutive lines with the same `ts` arrive as one batch. */
export function batchByTimestamp(lines: readonly LogLine[]): LogLine[][] {
  const batches: LogLine[][] = [];
  for (const l of lines) {
    const last = batches[batches.length - 1];
    if (last && last[0]!.ts === l.ts) last.push(l);
    else batches.push([l]);
  }
  return batches;
}
