// Mention detection (seed 003 §4.1–4.2): plain keywords, no `@` syntax — agents address each other
// by name or aid in natural language. Pure; the group client compiles one matcher per identity.
import { BoundedMap } from "../util/bounded-map.ts";

export type MentionMatchMode = "smart" | "substring";

/** A compiled keyword test: true when `content` mentions one of the keywords. */
export type MentionMatcher = (content: string) => boolean;

const MIN_KEYWORD_CODE_POINTS = 2;

/**
 * Seed §4.2, in order: display name, the aid's user part (before the first "."), the full aid,
 * then the aliases. Trimmed; shorter than 2 characters dropped (single characters fire on
 * ordinary text); duplicates dropped case-insensitively, keeping the first spelling.
 */
export function buildMentionKeywords(p: { name?: string; aid: string; aliases?: readonly string[] }): string[] {
  const aid = p.aid.trim();
  const dot = aid.indexOf(".");
  const candidates = [p.name ?? "", dot > 0 ? aid.slice(0, dot) : aid, aid, ...(p.aliases ?? [])];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of candidates) {
    const k = raw.trim();
    if (codePointLength(k) < MIN_KEYWORD_CODE_POINTS) continue;
    const folded = k.toLowerCase();
    if (seen.has(folded)) continue;
    seen.add(folded);
    out.push(k);
  }
  return out;
}

const sharedKeywords = new WeakMap<object, readonly string[]>();

/**
 * {@link buildMentionKeywords} once per identity object: every group of an identity holds the same
 * frozen list instead of its own copy.
 */
export function sharedMentionKeywords(identity: { name?: string; aid: string; aliases?: readonly string[] }): readonly string[] {
  let keywords = sharedKeywords.get(identity);
  if (!keywords) sharedKeywords.set(identity, (keywords = Object.freeze(buildMentionKeywords(identity))));
  return keywords;
}

function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// Letters, digits, marks and "_" of scripts that separate words with spaces. Han, kana, Hangul and
// the unspaced South-East Asian scripts are left out: there a name runs straight into the next
// word ("问Alice吧", "小爱同学"), so such characters count as boundaries, and keywords written in
// them match anywhere. "_" is a word character so that `jacob` does not fire on another agent
// called `jacob_`.
const UNSPACED = "\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Hangul}\\p{scx=Thai}\\p{scx=Lao}\\p{scx=Khmer}\\p{scx=Myanmar}";
const WORD_CLASS = `[[\\p{L}\\p{N}\\p{M}_]--[${UNSPACED}]]`;
const WORD_CHAR = new RegExp(`^${WORD_CLASS}$`, "v");

/** True when the character takes part in word boundaries (Latin, Cyrillic, digits, `_`, …). */
export function isBoundedWordChar(ch: string): boolean {
  return WORD_CHAR.test(ch);
}

// Syntax characters that must be escaped outside a class in a `u`-mode pattern.
const SYNTAX = /[\\^$.*+?()[\]{}|/]/g;
function escapeLiteral(s: string): string {
  return s.replace(SYNTAX, "\\$&");
}

function isAsciiWord(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** Is the code point ending just before `index` a bounded word character? */
function wordCharBefore(text: string, index: number): boolean {
  if (index <= 0) return false;
  const c = text.charCodeAt(index - 1);
  if (c < 128) return isAsciiWord(c);
  const pair = c >= 0xdc00 && c <= 0xdfff && index >= 2;
  return WORD_CHAR.test(text.slice(pair ? index - 2 : index - 1, index));
}

/** Is the code point starting at `index` a bounded word character? */
function wordCharAt(text: string, index: number): boolean {
  if (index >= text.length) return false;
  const c = text.charCodeAt(index);
  if (c < 128) return isAsciiWord(c);
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(index) as number));
}

interface SmartKeyword {
  re: RegExp;
  boundedStart: boolean;
  boundedEnd: boolean;
}

function compileUncached(keywords: readonly string[], mode: MentionMatchMode): MentionMatcher {
  const usable = keywords.filter((k) => k.length > 0);
  if (usable.length === 0) return () => false;
  if (mode === "substring") {
    // Exactly the seed's rule: lower-case both sides, plain substring.
    const lowered = usable.map((k) => k.toLowerCase());
    return (content) => {
      const c = content.toLowerCase();
      for (const k of lowered) if (c.includes(k)) return true;
      return false;
    };
  }
  // Unicode property classes cost milliseconds to compile per regex, so these regexes hold only
  // literals and the boundaries are checked by hand. One combined scan answers the common case
  // ("not mentioned") in ~30 ns; only text that contains a keyword gets the exact check.
  const candidate = new RegExp(usable.map(escapeLiteral).join("|"), "iu");
  const exact: SmartKeyword[] = usable.map((k) => ({
    re: new RegExp(escapeLiteral(k), "giu"),
    boundedStart: wordCharAt(k, 0),
    boundedEnd: wordCharBefore(k, k.length),
  }));
  return (content) => {
    if (!candidate.test(content)) return false;
    for (const k of exact) {
      k.re.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = k.re.exec(content)) !== null) {
        const end = m.index + m[0].length;
        if ((!k.boundedStart || !wordCharBefore(content, m.index)) && (!k.boundedEnd || !wordCharAt(content, end))) return true;
        k.re.lastIndex = m.index + 1;
      }
    }
    return false;
  };
}

const MATCHER_CACHE_LIMIT = 1024;
// Many groups share one identity's keywords: compile once, not once per group.
const matcherCache = new BoundedMap<string, MentionMatcher>(MATCHER_CACHE_LIMIT);

/** Precompiles a matcher for `keywords` (memoised: groups of one identity share it). */
export function compileMentionMatcher(keywords: readonly string[], mode: MentionMatchMode): MentionMatcher {
  const key = `${mode}\u0000${keywords.join("\u0000")}`;
  let matcher = matcherCache.get(key);
  if (!matcher) {
    matcher = compileUncached(keywords, mode);
    matcherCache.set(key, matcher);
  }
  return matcher;
}

/**
 * Case-insensitive keyword test. `smart`: a keyword edge made of a letter/digit/`_` of a spaced
 * script needs a non-word neighbour (`al` does not fire on `also`); CJK edges match anywhere.
 * `substring`: the seed's plain substring rule.
 */
export function checkMention(content: string, keywords: readonly string[], mode: MentionMatchMode): boolean {
  return compileMentionMatcher(keywords, mode)(content);
}

/**
 * The msg id a message replies to, from its metadata (`reply_to`, `replyTo` or `reply_to_msg_id`,
 * string or number), or undefined. Senders set `metadata.reply_to` when they answer a message.
 */
export function replyTargetOf(metadata: Readonly<Record<string, unknown>> | null): string | undefined {
  if (metadata === null) return undefined;
  const v = metadata["reply_to"] ?? metadata["replyTo"] ?? metadata["reply_to_msg_id"];
  if (typeof v === "string") return v.length > 0 ? v : undefined;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
}
