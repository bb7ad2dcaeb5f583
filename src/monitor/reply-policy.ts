// Reply types (seed 003 §5.2) decided before the model call, and the hard trimming of §5.3
// applied after it. Grapheme- and sentence-aware: an emoji is never split.
import type { ReplyPolicySettings, ReplyType, TriggerType, VitalityState } from "../types.ts";
import { graphemes } from "./sanitize.ts";

export const REPLY_TYPE_RANK: Record<ReplyType, number> = { reaction: 0, short: 1, normal: 2, long: 3 };

/** Budget ratio from which replies are held to reaction/short, like a HEATED group. */
export const HIGH_BUDGET_RATIO = 0.8;
/** `long` also needs the budget this loose. */
export const LOOSE_BUDGET_RATIO = 0.5;

export type ReplyTypeReason = "heated" | "budget-high" | "long-allowed" | "active" | "calm" | "direct";

export function decideReplyType(p: {
  vitality: VitalityState;
  budgetRatio: number;
  mentioned: boolean;
  trigger: TriggerType;
  allowLong: boolean;
}): { replyType: ReplyType; reason: ReplyTypeReason } {
  // An orphaned question is answered as one put to us: a reaction is no answer.
  const addressed = p.mentioned || p.trigger === "engaged" || p.trigger === "orphan";
  if (p.vitality === "HEATED" || p.budgetRatio >= HIGH_BUDGET_RATIO) {
    return { replyType: addressed ? "short" : "reaction", reason: p.vitality === "HEATED" ? "heated" : "budget-high" };
  }
  // `long` needs all of §5.2: relevance (a direct mention), a loose budget, and a group not HEATED.
  if (p.allowLong && p.mentioned && p.budgetRatio < LOOSE_BUDGET_RATIO) return { replyType: "long", reason: "long-allowed" };
  if (p.vitality === "ACTIVE") return { replyType: "normal", reason: "active" };
  return { replyType: "short", reason: "calm" };
}

/**
 * A direct conversation's reply type: a question put to us one to one gets a normal answer (long
 * when configured and the budget is loose); a budget running out keeps it short. No vitality.
 */
export function decideDirectReplyType(p: { budgetRatio: number; allowLong: boolean }): { replyType: ReplyType; reason: ReplyTypeReason } {
  if (p.budgetRatio >= HIGH_BUDGET_RATIO) return { replyType: "short", reason: "budget-high" };
  if (p.allowLong && p.budgetRatio < LOOSE_BUDGET_RATIO) return { replyType: "long", reason: "long-allowed" };
  return { replyType: "normal", reason: "direct" };
}

/** The smaller of two reply types (a model may choose less than the policy allows, never more). */
export function minReplyType(a: ReplyType, b: ReplyType): ReplyType {
  return REPLY_TYPE_RANK[a] <= REPLY_TYPE_RANK[b] ? a : b;
}

type TrimPolicy = Pick<
  ReplyPolicySettings,
  "maxCharsPerMessage" | "noMarkdown" | "maxReactionChars" | "shortSentences" | "normalSentences" | "tailMark"
>;

/** Enforces a reply type on generated text. May return "" (nothing worth sending). */
export function trimReply(text: string, replyType: ReplyType, policy: TrimPolicy): string {
  let t = text.trim();
  if (policy.noMarkdown) t = stripMarkdown(t);
  if (replyType === "reaction") t = toReaction(t, policy.maxReactionChars);
  else if (replyType === "short") t = firstSentences(t, policy.shortSentences);
  else if (replyType === "normal") t = firstSentences(t, policy.normalSentences);
  return capChars(t, policy.maxCharsPerMessage, policy.tailMark).trim();
}

let sentenceSegmenter: Intl.Segmenter | undefined;
let wordSegmenter: Intl.Segmenter | undefined;
const sentences = () => (sentenceSegmenter ??= new Intl.Segmenter(undefined, { granularity: "sentence" }));
const words = () => (wordSegmenter ??= new Intl.Segmenter(undefined, { granularity: "word" }));

/** Sentences with their trailing space, for Chinese (。！？) and Latin punctuation alike. */
export function splitSentences(text: string): string[] {
  return [...sentences().segment(text)].map((s) => s.segment).filter((s) => s.trim() !== "");
}

export function firstSentences(text: string, n: number): string {
  const parts = splitSentences(text);
  return parts.length <= n ? text : parts.slice(0, n).join("").trimEnd();
}

export function graphemeCount(text: string): number {
  let n = 0;
  for (const _ of graphemes().segment(text)) n++;
  return n;
}

// Built at runtime: the `v` flag (needed for RGI_Emoji sequences) is newer than our TS target.
const RGI_EMOJI = new RegExp("^\\p{RGI_Emoji}$", "v");
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;

/** True for one grapheme that is an emoji (ZWJ sequences, flags, keycaps, skin tones included). */
export function isEmojiGrapheme(g: string): boolean {
  return RGI_EMOJI.test(g) || PICTOGRAPHIC.test(g);
}

export function firstEmoji(text: string): string | undefined {
  for (const { segment } of graphemes().segment(text)) if (isEmojiGrapheme(segment)) return segment;
  return undefined;
}

const CLAUSE_END = /[,，;；:：、]/u;

/**
 * A reaction: the text itself when it is already that short, else the first emoji, else the
 * first sentence or clause that fits, else the first word if it fits, else "".
 */
export function toReaction(text: string, maxChars: number): string {
  const t = text.trim();
  if (graphemeCount(t) <= maxChars) return t;
  const emoji = firstEmoji(t);
  if (emoji) return emoji;
  const sentence = splitSentences(t)[0]?.trim() ?? "";
  if (sentence && graphemeCount(sentence) <= maxChars) return sentence;
  const clause = sentence.split(CLAUSE_END)[0]?.trim() ?? "";
  if (clause && graphemeCount(clause) <= maxChars) return clause;
  for (const w of words().segment(t)) {
    // Only the first word: a later one out of context reads as a non sequitur.
    if (w.isWordLike) return graphemeCount(w.segment) <= maxChars ? w.segment : "";
  }
  return "";
}

/**
 * Caps text at `maxChars` graphemes: whole sentences while they fit, else whole words, else
 * graphemes; then `tailMark`. Text that fits is returned unchanged.
 */
export function capChars(text: string, maxChars: number, tailMark: string): string {
  if (text.length <= maxChars || graphemeCount(text) <= maxChars) return text;
  const room = Math.max(1, maxChars - graphemeCount(tailMark));
  let kept = "";
  let used = 0;
  for (const s of splitSentences(text)) {
    if (used + graphemeCount(s.trimEnd()) > room) break;
    kept += s;
    used += graphemeCount(s);
  }
  // A sentence end that keeps under a third of the room ("Hi." of a 600-character answer)
  // throws the answer away: cut the long sentence at a word instead.
  if (graphemeCount(kept.trimEnd()) < room / 3) kept = cutAtWord(text, room);
  return kept.trimEnd() + tailMark;
}

function cutAtWord(text: string, room: number): string {
  let lastWordEnd = 0;
  let used = 0;
  let graphemeEnd = 0;
  const wordEnds = new Set<number>();
  for (const w of words().segment(text)) if (w.isWordLike) wordEnds.add(w.index + w.segment.length);
  for (const { segment, index } of graphemes().segment(text)) {
    if (used + 1 > room) break;
    used++;
    graphemeEnd = index + segment.length;
    if (wordEnds.has(graphemeEnd)) lastWordEnd = graphemeEnd;
  }
  // A word boundary is worth a shorter cut only when it keeps most of the room.
  const end = lastWordEnd >= graphemeEnd * 0.6 ? lastWordEnd : graphemeEnd;
  return text.slice(0, end);
}

// Placeholders for text that Markdown stripping must not touch (code, URLs, escapes, dunder
// names); private-use characters, removed from the input first so a reply cannot fake one.
const HOLD_OPEN = "\uE000";
const HOLD_CLOSE = "\uE001";
// Marks the start of a list item until the items are joined into one line.
const ITEM = "\uE002";
const HOLD_CHARS = /[\uE000\uE001\uE002]/g;
const HELD = /\uE000(\d+)\uE001/g;
// A bare URL, or an autolink's target. A trailing `.`, `,`, `*`, `_`… ends the sentence or the
// emphasis around the URL rather than the URL itself.
const URL = /\b(?:https?:\/\/|www\.)[^\s<>"'`\uE000\uE001]*[^\s<>"'`\uE000\uE001.,;:!?*_~)\]]/g;

/** Group chat is plain text: drop Markdown syntax, keep its words (and link targets). */
export function stripMarkdown(text: string): string {
  const held: string[] = [];
  const hold = (s: string): string => `${HOLD_OPEN}${held.push(s) - 1}${HOLD_CLOSE}`;
  const restore = (s: string): string => s.replace(HELD, (_m, i: string) => restore(held[Number(i)] ?? ""));
  const out = text
    .replace(HOLD_CHARS, "")
    .replace(/```[^\n`]*\n([\s\S]*?)\n?```/g, (_m, code: string) => hold(code.trimEnd()))
    .replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) => hold(/^ .* $/s.test(code) && code.trim() !== "" ? code.slice(1, -1) : code))
    // `\*` and `\_` are escapes: the character is literal text, not emphasis.
    .replace(/\\[*_~`#\\]/g, (m) => hold(m))
    .replace(/!\[([^\]\n]*)\]\([^)\s]*\)/g, "$1")
    .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => (label === url ? hold(url) : `${label} (${hold(url)})`))
    .replace(/<((?:https?:\/\/|mailto:)[^\s<>]+)>/g, (_m, url: string) => hold(url))
    .replace(URL, (url) => hold(url))
    // Python's __init__ and friends are names, not bold text.
    .replace(/(?<![\w*])__[A-Za-z0-9]\w*?__(?!\w)/g, (m) => hold(m))
    .replace(/^[ \t]{0,3}#{1,6}[ \t]+/gm, "")
    .replace(/^[ \t]{0,3}>[ \t]?/gm, "")
    .replace(/^[ \t]{0,3}([-*_])([ \t]*\1){2,}[ \t]*$/gm, "")
    .replace(/^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?=\S)/gm, ITEM)
    // Emphasis only where it cannot be arithmetic or an identifier: `2**10`, `a__b__c` stay.
    .replace(/(?<![\w*])\*\*(?=\S)([\s\S]*?\S)\*\*(?![\w*])/g, "$1")
    .replace(/(?<![\w_])__(?=\S)([\s\S]*?\S)__(?![\w_])/g, "$1")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "$1")
    .replace(/(^|[^\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/g, "$1$2")
    .replace(/(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g, "$1$2")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  const joined = out.includes(ITEM) ? joinListItems(out) : out;
  return held.length > 0 ? restore(joined) : joined;
}

/**
 * A list is one line in a group chat: its items (and the line introducing it, when that ends
 * with `:`) are joined, with `; ` between items unless an item already ends a sentence.
 */
function joinListItems(text: string): string {
  const out: string[] = [];
  let inList = false;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith(ITEM)) {
      const item = line.slice(ITEM.length).trim();
      // "Here is the plan:" then a blank line then the list: still one line.
      if (!inList && out.at(-1)?.trim() === "" && /:\s*$/.test(out.at(-2) ?? "")) out.pop();
      const prev = out.at(-1);
      if (prev !== undefined && (inList || /:\s*$/.test(prev))) {
        out[out.length - 1] = `${prev.trimEnd()}${inList && !/[.!?;。！？；]$/.test(prev.trimEnd()) ? ";" : ""} ${item}`;
      } else {
        out.push(item);
      }
      inList = true;
    } else if (line.trim() === "" && inList && lines.slice(i + 1).find((l) => l.trim() !== "")?.startsWith(ITEM)) {
      // A blank line between items (a loose list) does not end the list.
      continue;
    } else {
      out.push(line);
      inList = false;
    }
  }
  return out.join("\n");
}
