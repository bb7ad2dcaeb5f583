// Reading a recorded chat log (JSON Lines) for `replay` and `inspect`: from a file a line at a
// time (memory is the messages kept, never the file), or from text already in memory.
import { closeSync, openSync, readSync } from "node:fs";
import { parseJsonText } from "./json-text.ts";
import { heapGrowthTick } from "./heap-growth.ts";

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
  /**
   * Optional: the metadata the network carried with the message (`reply_to`, `group_meta`…), as
   * an agent would receive it. Unlike `replyTo` (an annotator's reading), the agents see it.
   */
  metadata?: Record<string, unknown>;
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
  /** The first MAX_SKIPPED_KEPT bad lines skipped with `skipBad`, with why. */
  skipped: Array<{ line: number; reason: string }>;
  /** How many bad lines were skipped in all. */
  skippedCount: number;
}

/** A longer line is not a chat message: refused (or skipped) without being held whole. */
export const MAX_LOG_LINE_BYTES = 1024 * 1024;
/** Bad lines remembered by reason (all are counted). */
const MAX_SKIPPED_KEPT = 1000;

/** A value as a reason shows it: JSON, cut short (a reason never carries a whole field). */
const shown = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/** One line's message, or a {@link LogParseError} saying what is wrong with it. */
export function parseLine(text: string, line: number): LogLine {
  let obj: unknown;
  try {
    // Not JSON.parse: it interns short string values, as a log's ids often are (json-text.ts).
    obj = parseJsonText(text);
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
    throw new LogParseError(line, `expected \`ts\` to be epoch milliseconds, got ${shown(o.ts)}`);
  }
  if (typeof o.sender !== "string" || o.sender === "") {
    throw new LogParseError(line, `expected \`sender\` to be a non-empty string, got ${shown(o.sender)}`);
  }
  if (typeof o.content !== "string") {
    throw new LogParseError(line, `expected \`content\` to be a string, got ${shown(o.content)}`);
  }
  if (typeof o.id !== "string" && typeof o.id !== "number") {
    throw new LogParseError(line, `expected \`id\` to be a string or number, got ${shown(o.id)}`);
  }
  const out: LogLine = { id: String(o.id), ts, sender: o.sender, content: o.content, line };
  if (Array.isArray(o.replyTo)) out.replyTo = o.replyTo.filter((x): x is string => typeof x === "string");
  if (Array.isArray(o.directedTo) && o.annotated !== false) out.directedTo = o.directedTo.filter((x): x is string => typeof x === "string");
  if (typeof o.metadata === "object" && o.metadata !== null && !Array.isArray(o.metadata)) out.metadata = o.metadata as Record<string, unknown>;
  return out;
}

/**
 * Takes a log one line at a time: good lines kept, blank lines ignored, a bad line thrown as a
 * {@link LogParseError} naming its number (or, with `skipBad`, counted and skipped). `finish`
 * sorts by `ts` (stable, so equal timestamps keep file order).
 */
class LogLines {
  readonly #skipBad: boolean;
  readonly #lines: LogLine[] = [];
  readonly #skipped: Array<{ line: number; reason: string }> = [];
  #skippedCount = 0;
  readonly #seen = new Set<string>();
  readonly #senders = new Map<string, string>();

  constructor(skipBad: boolean) {
    this.#skipBad = skipBad;
  }

  add(raw: string, line: number): void {
    const t = raw.trim();
    if (t === "") return;
    try {
      const parsed = parseLine(t, line);
      if (this.#seen.has(parsed.id)) throw new LogParseError(line, duplicateIdReason(parsed.id));
      this.#seen.add(parsed.id);
      // A log has few senders and many lines: one string per sender, not one per line.
      const sender = this.#senders.get(parsed.sender);
      if (sender !== undefined) parsed.sender = sender;
      else this.#senders.set(parsed.sender, parsed.sender);
      this.#lines.push(parsed);
    } catch (err) {
      if (!(err instanceof LogParseError)) throw err;
      this.bad(line, err.reason);
    }
  }

  bad(line: number, reason: string): void {
    if (!this.#skipBad) throw new LogParseError(line, reason);
    this.#skippedCount++;
    if (this.#skipped.length < MAX_SKIPPED_KEPT) this.#skipped.push({ line, reason });
  }

  finish(): ParsedLog {
    this.#lines.sort((a, b) => a.ts - b.ts);
    return { lines: this.#lines, skipped: this.#skipped, skippedCount: this.#skippedCount };
  }
}

/** Parses JSON Lines held in memory (tests, bundled logs); see {@link readLog} for a file. */
export function parseLog(text: string, opts: { skipBad?: boolean } = {}): ParsedLog {
  const log = new LogLines(opts.skipBad === true);
  const raw = text.split(/\r?\n/);
  for (let i = 0; i < raw.length; i++) log.add(raw[i]!, i + 1);
  return log.finish();
}

/** Why a line whose id an earlier good line has is refused. */
export const duplicateIdReason = (id: string): string => `duplicate id ${shown(id)}`;

/** Why a line past the length limit is refused. */
export const tooLongReason = (max: number): string => `longer than ${max.toLocaleString("en")} bytes: not a chat message (is this a JSON Lines log, one message a line?)`;

/** A raw line of a log file: its text (not trimmed), or null when it is longer than the limit. */
export interface RawLine {
  text: string | null;
  line: number;
}

/**
 * The good lines of `file`, parsed, with the length of each one's text: blank, too long and bad
 * lines are passed over (the caller has checked the file and counted them).
 */
export function* goodLines(file: string, max: number): Generator<{ line: LogLine; chars: number }> {
  for (const raw of rawLines(file, max)) {
    if (raw.text === null) continue;
    const t = raw.text.trim();
    if (t === "") continue;
    let line: LogLine;
    try {
      line = parseLine(t, raw.line);
    } catch (err) {
      if (err instanceof LogParseError) continue;
      throw err;
    }
    yield { line, chars: t.length };
  }
}

/** Read buffers of walks that ended, for the next walk: each would otherwise wait outside the heap for a full collection. */
const spareChunks: Buffer[] = [];
const MAX_SPARE_CHUNKS = 4;

/**
 * The lines of a file a chunk at a time: only the current line is held as text, and no line
 * longer than `max` bytes is held at all (it comes as `text: null`). `chunk`: the read size (its
 * buffer reused from an ended walk), or a buffer to read into (the caller's, not reused). Throws
 * what readSync throws.
 */
export function* rawLines(file: string, max: number, chunkOrBytes: number | Buffer = 256 * 1024): Generator<RawLine> {
  const given = typeof chunkOrBytes !== "number";
  const spare = given ? -1 : spareChunks.findIndex((b) => b.length === chunkOrBytes);
  const chunk = given ? chunkOrBytes : spare >= 0 ? spareChunks.splice(spare, 1)[0]! : Buffer.allocUnsafeSlow(chunkOrBytes);
  const fd = openSync(file, "r");
  try {
    let parts: Buffer[] = [];
    let held = 0;
    let tooLong = false;
    let line = 1;
    const take = (piece: Buffer) => {
      if (tooLong || piece.length === 0) return;
      if (held + piece.length > max) {
        tooLong = true;
        parts = [];
        held = 0;
        return;
      }
      // A copy: the chunk is read into again.
      parts.push(Buffer.from(piece));
      held += piece.length;
    };
    const pending = (): RawLine => {
      const out = { text: tooLong ? null : Buffer.concat(parts, held).toString("utf8"), line: line++ };
      parts = [];
      held = 0;
      tooLong = false;
      return out;
    };
    // A line cut by the end of a read is moved to the chunk's start and the next read goes after it:
    // only a line longer than the chunk is copied out, in parts (a copy per cut line would be an
    // allocation outside the heap every read, which a merge's small reads make many of).
    let carry = 0;
    for (;;) {
      const n = readSync(fd, chunk, carry, chunk.length - carry, null);
      if (n === 0) break;
      const data = chunk.subarray(0, carry + n);
      let start = 0;
      for (let nl = data.indexOf(0x0a, carry); nl !== -1; nl = data.indexOf(0x0a, start)) {
        // While a log is walked, the young generation grows to its set size and no further.
        heapGrowthTick();
        // The whole line is in this chunk (most are): decoded from it, nothing copied.
        if (held === 0 && !tooLong && nl - start <= max) yield { text: data.toString("utf8", start, nl), line: line++ };
        else {
          take(data.subarray(start, nl));
          yield pending();
        }
        start = nl + 1;
      }
      const rest = data.length - start;
      carry = 0;
      if (held === 0 && !tooLong && rest < chunk.length) {
        data.copyWithin(0, start);
        carry = rest;
      } else take(data.subarray(start));
    }
    if (carry > 0) yield { text: carry <= max ? chunk.toString("utf8", 0, carry) : null, line: line++ };
    else if (held > 0 || tooLong) yield pending();
  } finally {
    closeSync(fd);
    if (!given && spareChunks.length < MAX_SPARE_CHUNKS) spareChunks.push(chunk);
  }
}

/**
 * Reads a JSON Lines log file a chunk at a time: only the current line is held as text, and no
 * line longer than `maxLineBytes` is held at all (it is refused naming its number, or skipped
 * with `skipBad`). What stays in memory is the parsed messages, not the file, its text or its
 * lines (see log-source.ts for a replay that keeps not even those). Throws what readSync throws
 * for a file that cannot be read.
 */
export function readLog(file: string, opts: { skipBad?: boolean; maxLineBytes?: number; chunkBytes?: number } = {}): ParsedLog {
  const max = opts.maxLineBytes ?? MAX_LOG_LINE_BYTES;
  const log = new LogLines(opts.skipBad === true);
  for (const raw of rawLines(file, max, opts.chunkBytes)) {
    if (raw.text === null) log.bad(raw.line, tooLongReason(max));
    else log.add(raw.text, raw.line);
  }
  return log.finish();
}

/** Consecutive lines with the same `ts` arrive as one batch. */
export function batchByTimestamp(lines: readonly LogLine[]): LogLine[][] {
  return [...batchesOf(lines)];
}

/** {@link batchByTimestamp} a batch at a time, for lines read as they come. */
export function* batchesOf(lines: Iterable<LogLine>): Generator<LogLine[]> {
  let batch: LogLine[] = [];
  for (const l of lines) {
    if (batch.length && batch[0]!.ts !== l.ts) {
      yield batch;
      batch = [];
    }
    batch.push(l);
  }
  if (batch.length) yield batch;
}
