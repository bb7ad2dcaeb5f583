// Inbound text is written by other agents and people: before it reaches the model it must not be
// able to forge a line, a sender or one of our markers. Pure; imports nothing.

// C0/C1 controls except the whitespace we collapse below, bidi overrides/isolates that make text
// render in another order than the model reads it, and invisible characters that could hide
// inside a marker ("[men\u200Btioned]"). ZWJ/ZWNJ stay: emoji and several scripts need them.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u0084\u0086-\u009F\u200E\u200F\u061C\u202A-\u202E\u2066-\u2069\uFFFE\uFFFF\u200B\u2060\uFEFF\u00AD]/g;
const LINE_BREAKS = /[ \t]*[\r\n\u0085\u2028\u2029\t\v\f]+[ \t]*/g;

// A bracket group that looks like one of our markers: [msg_id:…], [mentioned], [engaged],
// [event], [group…] or a [hh:mm(:ss)] time, in ASCII or fullwidth brackets, any case or spacing.
const FORGED_MARKER =
  /[[［【〔]\s*(?=msg[\s_-]*id|mention|engaged|event|group|\d{1,2}\s*[:：]\s*\d{2})([^[\]［］【】〔〕]{0,40})([\]］】〕]?)/giu;

// One scan that says whether any of the above occurs: clean text (the common case) skips both
// replacements. The prompt hot path formats every message of every dispatch.
const NEEDS_CLEANING = /[\u0000-\u001F\u007F-\u009F\u00AD\u061C\u200B\u200E\u200F\u2028\u2029\u202A-\u202E\u2060\u2066-\u2069\uFEFF\uFFFE\uFFFF]/;

/** Strips controls and bidi overrides, collapses line breaks into one space. */
export function stripControls(text: string): string {
  if (!NEEDS_CLEANING.test(text)) return text;
  return text.replace(CONTROL, "").replace(LINE_BREAKS, " ");
}

/** Turns marker look-alikes into parenthesised text, so `[mentioned]` reads as `(mentioned)`. */
export function neutraliseMarkers(text: string): string {
  if (!/[[［【〔]/.test(text)) return text;
  return text.replace(FORGED_MARKER, (_m, inner: string, close: string) => `(${inner}${close ? ")" : ""}`);
}

/**
 * Cuts `text` to at most `maxChars` code points at a grapheme boundary and appends `mark`.
 * Returns the text unchanged when it fits.
 */
export function truncateChars(text: string, maxChars: number, mark: string): string {
  // UTF-16 length ≥ code points: a string this short cannot be over the limit.
  if (text.length <= maxChars) return text;
  const markLen = [...mark].length;
  const room = Math.max(0, maxChars - markLen);
  let used = 0;
  let end = 0;
  for (const { segment, index } of graphemes().segment(text)) {
    const n = codePoints(segment);
    if (used + n > room) break;
    used += n;
    end = index + segment.length;
  }
  if (end === text.length) return text;
  return text.slice(0, end).trimEnd() + mark;
}

export const INBOUND_TRUNCATION_MARK = "…(truncated)";

/** One message's text, safe to place on one line of the model's context. */
export function sanitizeContent(text: string, maxChars: number): string {
  const clean = neutraliseMarkers(stripControls(text)).trim();
  return truncateChars(clean, maxChars, INBOUND_TRUNCATION_MARK);
}

// Sender names come from the wire: a name with a colon, a bracket or a line break could start a
// forged "sender: text" line, so those become "_".
const SENDER_UNSAFE = /[\s:：[\]［］【】<>"'`]+/gu;

/** A sender name that can only ever be one token. */
export function sanitizeSender(sender: string): string {
  // Plain aids and nicks need no work: the common case is one regex test.
  if (sender.length <= 64 && SAFE_SENDER.test(sender)) return sender;
  const clean = sender.replace(CONTROL, "").replace(SENDER_UNSAFE, "_").replace(/^_+|_+$/g, "");
  const cut = clean.length <= 64 ? clean : [...clean].slice(0, 64).join("");
  return cut === "" ? "unknown" : cut;
}
const SAFE_SENDER = /^[A-Za-z0-9][A-Za-z0-9._@|^{}-]*$/;
const SAFE_ID = /^[A-Za-z0-9:._-]{1,64}$/;

/** A message id on one line: no whitespace or brackets (ids from replay logs may hold colons). */
export function sanitizeId(id: string): string {
  if (SAFE_ID.test(id)) return id;
  const clean = id.replace(CONTROL, "").replace(/[\s[\]［］【】<>"'`]+/gu, "_");
  return clean === "" ? "?" : clean.slice(0, 64);
}

// XML 1.0 Char production: everything else (controls, lone surrogates, U+FFFE/FFFF) is dropped.
const XML_INVALID = /[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function stripInvalidXml(text: string): string {
  return text.replace(XML_INVALID, "");
}

const XML_TEXT_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

// Anything escapeXml could change: markup characters, controls, surrogates, U+FFFE/FFFF.
const XML_SPECIAL = /[&<>"'\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** Escapes for both element text and attribute values, after dropping invalid characters. */
export function escapeXml(text: string): string {
  if (!XML_SPECIAL.test(text)) return text;
  return stripInvalidXml(text).replace(/[&<>"']/g, (c) => XML_TEXT_ESCAPES[c]!);
}

let graphemeSegmenter: Intl.Segmenter | undefined;
export function graphemes(): Intl.Segmenter {
  graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return graphemeSegmenter;
}

function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}
