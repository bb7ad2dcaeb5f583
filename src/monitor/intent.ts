// The intent gate: the model may choose silence. Silence is a success, never an error.
import type { DelayHint, ReplyType } from "../types.ts";

export const NO_REPLY = "NO_REPLY";

// The token as models actually write it: any case, fullwidth letters, a Markdown-escaped
// underscore (`NO\_REPLY`), wrapped in quotes, brackets, backticks or emphasis, with the
// punctuation that ends it ("NO_REPLY.", "「NO_REPLY」。"). Not inside a longer word.
const letter = (c: string): string => {
  const up = c.toUpperCase();
  const low = c.toLowerCase();
  const wide = (x: string) => String.fromCodePoint(x.codePointAt(0)! + 0xfee0);
  return `[${up}${low}${wide(up)}${wide(low)}]`;
};
const WORD = (w: string): string => [...w].map(letter).join("");
const WRAP_OPEN = "[`'\"“‘「『【\\[(<*_~]*";
const WRAP_CLOSE = "[`'\"”’」』】\\])>*_~]*[.。!！?？,，;；:：…]*";
const TOKEN_CORE = `${WORD("NO")}(?:\\\\?[_＿])+${WORD("REPLY")}`;
const NO_REPLY_TOKEN = new RegExp(`(?<![\\p{L}\\p{N}_])${WRAP_OPEN}${TOKEN_CORE}${WRAP_CLOSE}(?![\\p{L}\\p{N}_])`, "gu");
const LEADING_TOKEN = new RegExp(`^${WRAP_OPEN}${TOKEN_CORE}${WRAP_CLOSE}(?![\\p{L}\\p{N}_])`, "u");
// The token glued into a longer word ("NO_REPLYs", "xNO_REPLY"): the whole word goes.
const GLUED_TOKEN = new RegExp(`[\\p{L}\\p{N}_]*${TOKEN_CORE}[\\p{L}\\p{N}_]*`, "gu");
const HAS_TOKEN = new RegExp(TOKEN_CORE, "u");
// The whole reply spelled without the underscore ("NO REPLY", "NOREPLY", "NO-REPLY"): uppercase
// only, since "no reply" is also ordinary English.
const WHOLE_VARIANT = /^[\s`'"*_[(<]*NO[ -]?REPLY[\s`'"*_\])>.!]*$/u;
// What is left when the token was the whole answer: whitespace, punctuation, Markdown symbols and
// invisible characters (a reply of one zero-width space is no reply).
const NOTHING_LEFT = /^[\s\p{P}\p{Sk}\p{Sm}\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}]*$/u;
const BLANK = /^[\s\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}]*$/u;

export type Intent = { reply: true; text: string } | { reply: false; reason: "empty" | "no-reply-token" };

/**
 * Empty or `NO_REPLY` → silence. A reply that opens with the token chose silence and explains
 * it ("NO_REPLY (nothing to add)"): silence too. Text with the token tacked on → the text without
 * it. The text returned never contains the token.
 */
export function parseIntent(text: string): Intent {
  const trimmed = text.trim();
  if (BLANK.test(trimmed)) return { reply: false, reason: "empty" };
  if (WHOLE_VARIANT.test(trimmed)) return { reply: false, reason: "no-reply-token" };
  if (!HAS_TOKEN.test(trimmed)) return { reply: true, text: trimmed };
  if (LEADING_TOKEN.test(trimmed)) return { reply: false, reason: "no-reply-token" };
  let rest = trimmed.replace(NO_REPLY_TOKEN, " ");
  // Taking one token out can join the halves of another ("NO_NO_REPLY_REPLY"): repeat until none
  // is left (each pass makes the text shorter).
  while (HAS_TOKEN.test(rest)) rest = rest.replace(GLUED_TOKEN, " ");
  rest = rest.replace(/[ \t]{2,}/g, " ").replace(/[ \t]+$/gm, "").trim();
  return NOTHING_LEFT.test(rest) ? { reply: false, reason: "no-reply-token" } : { reply: true, text: rest };
}

/** True when `text` still holds the silence token in any spelling {@link parseIntent} knows. */
export function hasNoReplyToken(text: string): boolean {
  return HAS_TOKEN.test(text);
}

export interface Decision {
  wantToReply: boolean;
  replyType?: ReplyType;
  delayHint?: DelayHint;
}

const REPLY_TYPES = new Set<string>(["reaction", "short", "normal", "long"]);
const DELAY_HINTS = new Set<string>(["fast", "normal", "slow"]);

/**
 * The first call of `decision: "two-phase"`: `{want_to_reply, reply_type, delay_hint}` JSON,
 * possibly inside a code fence or prose. Anything unparseable reads as "do not reply".
 */
export function parseDecision(text: string): { ok: true; decision: Decision } | { ok: false; reason: "unparseable" } {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return { ok: false, reason: "unparseable" };
  let obj: unknown;
  try {
    obj = JSON.parse(text.slice(start, end + 1));
  } catch {
    return { ok: false, reason: "unparseable" };
  }
  if (typeof obj !== "object" || obj === null) return { ok: false, reason: "unparseable" };
  const o = obj as Record<string, unknown>;
  if (typeof o.want_to_reply !== "boolean") return { ok: false, reason: "unparseable" };
  const decision: Decision = { wantToReply: o.want_to_reply };
  if (typeof o.reply_type === "string" && REPLY_TYPES.has(o.reply_type)) decision.replyType = o.reply_type as ReplyType;
  if (typeof o.delay_hint === "string" && DELAY_HINTS.has(o.delay_hint)) decision.delayHint = o.delay_hint as DelayHint;
  return { ok: true, decision };
}

/** Appended to the body of the decide call; the stable prefix stays untouched. */
export const DECIDE_INSTRUCTION =
  '[decide] Do not write the reply yet. Answer only with JSON: {"want_to_reply": true or false, "reply_type": "reaction" | "short" | "normal" | "long", "delay_hint": "fast" | "normal" | "slow"}';
