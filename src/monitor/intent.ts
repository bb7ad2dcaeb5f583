// The intent gate: the model may choose silence. Silence is a success, never an error.
import type { ReplyType } from "../types.ts";
import type { DelayHint } from "./delay.ts";

export const NO_REPLY = "NO_REPLY";

// The token, possibly quoted or bracketed the way models like to decorate it.
const NO_REPLY_TOKEN = /[`'"[(<]*\bNO_REPLY\b[`'")\]>]*/gi;
const ONLY_PUNCTUATION = /^[\s\p{P}]*$/u;

export type Intent = { reply: true; text: string } | { reply: false; reason: "empty" | "no-reply-token" };

/** Empty or `NO_REPLY` → silence; text with the token tacked on → the text without it. */
export function parseIntent(text: string): Intent {
  const trimmed = text.trim();
  if (trimmed === "") return { reply: false, reason: "empty" };
  if (!/NO_REPLY/i.test(trimmed)) return { reply: true, text: trimmed };
  const rest = trimmed.replace(NO_REPLY_TOKEN, " ").replace(/[ \t]{2,}/g, " ").trim();
  return ONLY_PUNCTUATION.test(rest) ? { reply: false, reason: "no-reply-token" } : { reply: true, text: rest };
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
