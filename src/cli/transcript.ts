// The transcript `chat`, `start` and `run` print: one message as rows a person can trust. A row
// that starts at the left edge is always a real message's start (`12:34:56 [lobby] #7 bob: …`);
// everything else a message holds — its own line breaks (U+2028/U+2029 included), what wraps at
// the terminal's edge — goes on continuation rows that begin with CONTINUATION. We wrap before
// the terminal does, measuring every character at least as wide as any terminal draws it, so a
// message padded to wrap into a fake header cannot. Markers `(agent)`/`(human)`/`(you)` appear
// only in the header; look-alikes in what a member wrote are shown as ‹agent›. Pure.
import unhomoglyph from "unhomoglyph";
import { displaySafe } from "../monitor/outbound.ts";
import type { GroupMessage } from "../types.ts";

export type SenderMarker = "agent" | "human" | "you";

/** What starts every row that is not a message's first. */
export const CONTINUATION = "  ┊ ";
/** Narrower terminals are wrapped as if this wide (a header alone needs about this much). */
const MIN_WIDTH = 24;

const LINE_BREAK = /\r\n|[\n\r\u000B\u000C\u0085\u2028\u2029]/;
// Whatever draws as blank space: runs of it are one space, so padding cannot push text about.
const BLANKS = /[\s\u2800\u3164\u115F\u1160\uFFA0\u180E\u200B\u2060\uFEFF]+/gu;
// A short word in parentheses (any of the look-alike brackets), as our markers are written.
const PARENTHESISED = /[(（﹙⁽₍❨❪]\s*([^\s()（）﹙﹚⁽⁾₍₎❨❩❪❫]{2,8})\s*[)）﹚⁾₎❩❫]/gu;
const MARKER_SKELETONS = new Set(["agent", "human", "you", "owner"].map((w) => unhomoglyph(w)));

/** A member-written text for one logical line: controls shown not obeyed, blanks collapsed, markers neutralised. */
export function displayText(text: string): string {
  return displaySafe(text.replace(BLANKS, " ")).replace(PARENTHESISED, (whole, word: string) =>
    MARKER_SKELETONS.has(unhomoglyph(word.toLowerCase())) || MARKER_SKELETONS.has(unhomoglyph(word.normalize("NFKC").toLowerCase())) ? `‹${word}›` : whole,
  );
}

/**
 * Columns a grapheme may take, never fewer than any terminal draws: printable ASCII is 1, every
 * other code point counts 2 (wide characters are 2; combining marks, joiners and emoji parts are
 * 0–2 depending on the terminal, so 2 each is the safe side).
 */
function graphemeWidth(g: string): number {
  let w = 0;
  for (const ch of g) {
    const c = ch.codePointAt(0)!;
    w += c >= 0x20 && c < 0x7f ? 1 : 2;
  }
  return w;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * Breaks logical lines into rows of at most `width` columns: the first line's first row starts at
 * the edge, every other row with CONTINUATION. Breaks at the row's last space when that keeps at
 * least half of it, else between graphemes (never inside one).
 */
function wrap(lines: string[], width: number): string[] {
  const rows: string[] = [];
  const indent = graphemeWidth(CONTINUATION);
  for (const [i, line] of lines.entries()) {
    let row = i === 0 ? "" : CONTINUATION;
    let used = i === 0 ? 0 : indent;
    let base = used;
    let space: { at: number; col: number } | undefined;
    for (const { segment } of segmenter.segment(line)) {
      const w = graphemeWidth(segment);
      if (used + w > width && used > base) {
        if (segment === " ") {
          rows.push(row);
          row = CONTINUATION;
          used = base = indent;
          space = undefined;
          continue;
        }
        if (space !== undefined && space.col - base >= (width - base) / 2) {
          const rest = row.slice(space.at + 1);
          rows.push(row.slice(0, space.at));
          row = CONTINUATION + rest;
          used = indent + (used - space.col - 1);
        } else {
          rows.push(row);
          row = CONTINUATION;
          used = indent;
        }
        base = indent;
        space = undefined;
      }
      if (segment === " ") space = { at: row.length, col: used };
      row += segment;
      used += w;
    }
    rows.push(row === CONTINUATION ? CONTINUATION.trimEnd() : row);
  }
  return rows;
}

/** One message as rows of at most `width` columns: the header and the start of the text, then continuation rows. */
export function formatTranscriptRows(p: { time: string; groupId: string; msgId: string; sender: string; marker?: SenderMarker | undefined; content: string; width: number }): string[] {
  const header = `${p.time} [${displayText(p.groupId)}] #${displayText(p.msgId)} ${displayText(p.sender)}${p.marker ? ` (${p.marker})` : ""}:`;
  const lines = p.content.split(LINE_BREAK).map(displayText);
  lines[0] = `${header} ${lines[0]!.replace(/^ /, "")}`.trimEnd();
  return wrap(lines, Math.max(MIN_WIDTH, p.width - 1));
}

/** One direct message as rows: `time [dm] from (agent) → to: text`, then continuation rows. */
export function formatDirectRows(p: { time: string; from: string; to: string; marker?: SenderMarker | undefined; content: string; width: number }): string[] {
  const header = `${p.time} [dm] ${displayText(p.from)}${p.marker ? ` (${p.marker})` : ""} → ${displayText(p.to)}:`;
  const lines = p.content.split(LINE_BREAK).map(displayText);
  lines[0] = `${header} ${lines[0]!.replace(/^ /, "")}`.trimEnd();
  return wrap(lines, Math.max(MIN_WIDTH, p.width - 1));
}

/**
 * Prints each group message once (several identities may see the same one) as transcript rows.
 * `width` is read per message (a terminal can be resized); default 80 columns.
 */
export function createTranscript(out: (s: string) => void, markerOf: (sender: string) => SenderMarker | undefined, width: () => number = () => 80): (m: GroupMessage) => void {
  const printed = new Set<string>();
  return (m) => {
    const key = `${m.groupId}\u0000${m.msgId}`;
    if (printed.has(key)) return;
    printed.add(key);
    const time = new Date(m.timestamp).toISOString().slice(11, 19);
    out(formatTranscriptRows({ time, groupId: m.groupId, msgId: m.msgId, sender: m.sender, marker: markerOf(m.sender), content: m.content, width: width() }).join("\n"));
  };
}

/**
 * The width to wrap at: the terminal's when stdout is one, else an exported $COLUMNS, else none
 * (a pipe: one row per logical line, as a script reading the transcript expects).
 */
export function outputWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  if (stream.isTTY && stream.columns) return stream.columns;
  const fromEnv = Number(env.COLUMNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Number.POSITIVE_INFINITY;
}
