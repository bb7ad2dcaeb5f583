// Inbound text is written by other agents and people: before it reaches the model it must not be
// able to forge a line, a sender or one of our markers, nor pass for a member it imitates with
// look-alike letters. Pure; imports only the confusables table.
import { asciiLookalikeOf, confusableSkeleton } from "./confusables.ts";
import { BoundedMap } from "../util/bounded-map.ts";

// C0/C1 controls except the whitespace we collapse below, bidi overrides/isolates that make text
// render in another order than the model reads it, and invisible characters that could hide
// inside a marker ("[men\u200Btioned]"). ZWJ/ZWNJ stay: emoji and several scripts need them.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u0084\u0086-\u009F\u200E\u200F\u061C\u202A-\u202E\u2066-\u2069\uFFFE\uFFFF\u200B\u2060\uFEFF\u00AD]/g;
const LINE_BREAKS = /[ \t]*[\r\n\u0085\u2028\u2029\t\v\f]+[ \t]*/g;

// C0/C1 controls and bidi marks for the cheap test below; lone UTF-16 surrogates separately (a
// well-formed emoji is a surrogate pair and must stay on the fast path).
const NEEDS_CLEANING = /[\u0000-\u001F\u007F-\u009F\u00AD\u061C\u200B\u200E\u200F\u2028\u2029\u202A-\u202E\u2060\u2066-\u2069\uFEFF\uFFFE\uFFFF]/;
// Half of a surrogate pair on its own: not text, and JSON encoders and model APIs reject it.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HAS_LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Strips controls, bidi overrides and lone surrogates, collapses line breaks into one space. */
export function stripControls(text: string): string {
  const controls = NEEDS_CLEANING.test(text);
  const surrogates = HAS_LONE_SURROGATE.test(text);
  if (!controls && !surrogates) return text;
  let out = surrogates ? text.replace(LONE_SURROGATE, "") : text;
  if (controls) out = out.replace(CONTROL, "").replace(LINE_BREAKS, " ");
  return out;
}

// Any opening bracket (ASCII, fullwidth, CJK, mathematical…) or angle (`<`, `＜`, `‹`, `«`) except
// the parentheses we turn markers into; then up to 200 visible characters of the group. Blanks
// (spaces, braille blanks, fillers), invisible characters and combining marks in between are not
// counted — a skeleton drops them all — so no run of them can push a marker word out of sight.
const OPEN = String.raw`(?![({（])[\p{Ps}<＜‹«﹤]`;
const CLOSE = String.raw`[\p{Pe}>＞›»﹥]`;
const UNSEEN = String.raw`\s\p{M}\p{Default_Ignorable_Code_Point}\u2800\u3164\u115F\u1160\uFFA0`;
const BLANKS = `[${UNSEEN}]*`;
const BRACKETS = String.raw`\p{Ps}\p{Pe}<>＜＞‹›«»﹤﹥`;
// Seen and unseen characters are disjoint classes: matching never backtracks into the runs.
const BRACKET_GROUP = new RegExp(`${OPEN}(${BLANKS}(?:[^${BRACKETS}${UNSEEN}]${BLANKS}){0,200})(${CLOSE}?)`, "gu");
const HAS_OPENER = new RegExp(OPEN, "u");
// What a bracket group reads as once invisible characters, width, diacritics and look-alike
// letters are folded away: one of our markers ([msg_id:…], [mentioned], [engaged], [event],
// [group…]), a header of the situation block ([Group Vitality], [My Status], [Mentions],
// [Senders], [Decision Goal], [Reply Policy]) or an [hh:mm] time (digits may fold to "i"/"o"
// look-alikes). Written folded: "l" reads as "i" (decision goal → decisiongoai).
const MARKER_SKELETON = /^(?:msgid|mention|engaged|event|group|sender|decisiongoai|mystatus|repiypoiicy|[\dio]{1,2}:[\dio]{2})/;

const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;

function markerSkeleton(inner: string): string {
  // Plain ASCII (most brackets in real text) needs no Unicode folding.
  const folded = PRINTABLE_ASCII.test(inner) ? inner.toLowerCase() : confusableSkeleton(inner, true);
  // Folding l/1/| to "i" catches Greek Ι and friends; the marker words above are written folded.
  return folded
    .replace(/rn/g, "m")
    .replace(/[l1|]/g, "i")
    .replace(/0/g, "o")
    .replace(/[^a-z0-9:]/g, "");
}

/** Turns marker look-alikes into parenthesised text, so `[mentioned]` reads as `(mentioned)`. */
export function neutraliseMarkers(text: string): string {
  if (!HAS_OPENER.test(text)) return text;
  return text.replace(BRACKET_GROUP, (group: string, inner: string, close: string) =>
    MARKER_SKELETON.test(markerSkeleton(inner)) ? `(${inner.replace(LEADING_BLANKS, "")}${close ? ")" : ""}` : group,
  );
}
const LEADING_BLANKS = new RegExp(`^${BLANKS}`, "u");

/**
 * Cuts `text` to at most `maxChars` code points at a grapheme boundary and appends `mark`.
 * Returns the text unchanged when it fits.
 */
export function truncateChars(text: string, maxChars: number, mark: string): string {
  // UTF-16 length ≥ code points: a string this short cannot be over the limit.
  if (text.length <= maxChars) return text;
  return cutWithMark(text, maxChars, mark, false);
}

/** As {@link truncateChars}; with `always`, the mark is added even when the text fits. */
function cutWithMark(text: string, maxChars: number, mark: string, always: boolean): string {
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
  if (end === text.length && !always) return text;
  return text.slice(0, end).trimEnd() + mark;
}

export const INBOUND_TRUNCATION_MARK = "…(truncated)";

// Joiners, variation selectors and tag characters stay (emoji need them), but no emoji or script
// needs more than a few in a row: a longer run only hides something, so it goes.
const INVISIBLE_RUN = /\p{Default_Ignorable_Code_Point}{9,}/gu;
const HAS_INVISIBLE_RUN = /\p{Default_Ignorable_Code_Point}{9,}/u;
// Raw input beyond this many UTF-16 units per allowed code point cannot reach the output (the
// slack covers what cleaning removes), so a 1 MB message costs what a short one does.
const RAW_UNITS_PER_CHAR = 2;
const RAW_SLACK = 256;

/** One message's text, safe to place on one line of the model's context. */
export function sanitizeContent(text: string, maxChars: number): string {
  const limit = maxChars * RAW_UNITS_PER_CHAR + RAW_SLACK;
  const cut = text.length > limit;
  let clean = stripControls(cut ? text.slice(0, limit) : text);
  if (HAS_INVISIBLE_RUN.test(clean)) clean = clean.replace(INVISIBLE_RUN, "");
  clean = neutraliseMarkers(clean).trim();
  // A cut message is marked even when cleaning shrank what was kept under the limit.
  return cut ? cutWithMark(clean, maxChars, INBOUND_TRUNCATION_MARK, true) : truncateChars(clean, maxChars, INBOUND_TRUNCATION_MARK);
}

// Sender names come from the wire: a name with a colon, a bracket or a line break could start a
// forged "sender: text" line, so those become "_".
const SENDER_UNSAFE = /[\s:：\p{Ps}\p{Pe}<>＜＞‹›«»"'`]+/gu;

// Invisible and control characters in a name are shown, not removed: dropping them would turn
// "owner.agentcp.io\u200B" into a perfect copy of the owner's aid.
const SENDER_HIDDEN = /(?!\s)[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/gu;

/** How a sender's name is shown to the model: cleaned, and tagged when it imitates another. */
export interface NameDisplay {
  show(sender: string): string;
}

/**
 * A sender name that can only ever be one token. With `known` (the names of ourselves, our owner,
 * the members we know and the batch's speakers), a name that looks like one of them is shown with
 * it ("sarn(≈sam)").
 */
export function sanitizeSender(sender: string, known?: NameDisplay): string {
  if (known !== undefined) return known.show(sender);
  // Plain aids and nicks need no work: the common case is one regex test.
  if (sender.length <= 64 && SAFE_SENDER.test(sender)) return sender;
  // Members post again and again under one name: the slow path runs once per name.
  const cached = senderCache.get(sender);
  if (cached !== undefined) return cached;
  const clean = cleanSenderName(sender);
  // "yоu" with a Cyrillic о, "оwner.agentcp.io": shown with what they imitate, so the model can
  // tell them from the real member ("yоu(≈you)").
  const imitates = asciiLookalikeOf(clean);
  const shown = imitates === undefined ? clean : withTag(clean, imitates);
  if (sender.length <= 256) senderCache.set(sender, shown);
  return shown;
}

export const SENDER_CACHE_LIMIT = 1024;
const senderCache = new BoundedMap<string, string>(SENDER_CACHE_LIMIT);

export function cleanSenderName(sender: string): string {
  if (sender.length <= 64 && SAFE_SENDER.test(sender)) return sender;
  const head = sender.length > 256 ? sender.slice(0, 256) : sender;
  const clean = head.replace(SENDER_HIDDEN, "\uFFFD").replace(SENDER_UNSAFE, "_").replace(/^_+|_+$/g, "");
  const cut = clean.length <= 64 ? clean : [...clean].slice(0, 64).join("");
  return cut === "" ? "unknown" : cut;
}

/** `clean` shown with the name it imitates: "sarn(≈sam)". */
export function withTag(clean: string, imitates: string): string {
  return `${clean}(≈${imitates.replace(SENDER_UNSAFE, "_")})`;
}

const SAFE_SENDER = /^[A-Za-z0-9][A-Za-z0-9._@|^{}-]*$/;
const SAFE_ID = /^[A-Za-z0-9:._-]{1,64}$/;

/** A message id on one line: no whitespace or brackets (ids from replay logs may hold colons). */
export function sanitizeId(id: string): string {
  if (SAFE_ID.test(id)) return id;
  const head = id.length > 256 ? id.slice(0, 256) : id;
  const clean = stripControls(head).replace(/[\s[\]［］【】<>"'`]+/gu, "_");
  return clean === "" ? "?" : [...clean].slice(0, 64).join("");
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
