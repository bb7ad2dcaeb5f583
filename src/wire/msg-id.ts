// Message ids and their order. ACP ids are increasing decimal integers: the wire carries them as
// JSON numbers (some services as digit strings), the domain keeps them as strings (`"42"`), and
// replay logs may use any string. Every reading of a msg id as a number happens in this file.
import type { GroupMessage } from "../types.ts";

/** Digits a msg_id string on the wire may have: 15 keep every value a safe integer. */
const MAX_WIRE_DIGITS = 15;

/** The value of `s` when it is 1..maxDigits ASCII digits (leading zeros allowed), else undefined. No regex, no allocation. */
function digitsValue(s: string, maxDigits: number): number | undefined {
  const len = s.length;
  if (len === 0 || len > maxDigits) return undefined;
  // Built digit by digit (exact below 2^53), so no string-to-number conversion runs.
  let n = 0;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
    n = n * 10 + (c - 48);
  }
  return n;
}

/** A msg id (or count) the wire carries as a number: a non-negative safe integer. */
export const isMsgIdNumber = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** A wire `msg_id` field: a non-negative safe integer, or a string of 1–15 digits; else undefined. */
export function parseMsgId(v: unknown): number | undefined {
  if (isMsgIdNumber(v)) return v;
  return typeof v === "string" ? digitsValue(v, MAX_WIRE_DIGITS) : undefined;
}

/** Numeric value of a normalised msg id (what {@link parseMsgId} produced, as a string). */
export function msgIdValue(msgId: string): number {
  return Number(msgId);
}

/**
 * The id as a number when it is a canonical decimal safe integer (`"42"`, not `"042"` or `"4e2"`),
 * else `undefined` — every id the wire accepts, so every wire id moves the cursor. Runs per
 * message on the ingest path.
 */
export function numericMsgId(id: string): number | undefined {
  if (id.length > 1 && id.charCodeAt(0) === 48) return undefined;
  const n = digitsValue(id, 16);
  return n !== undefined && (id.length < 16 || Number.isSafeInteger(n)) ? n : undefined;
}

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function stripZeros(s: string): string {
  let i = 0;
  while (i < s.length - 1 && s.charCodeAt(i) === 48) i++;
  return i === 0 ? s : s.slice(i);
}

/**
 * Numeric comparison when both ids are decimal integers (any length, leading zeros ignored),
 * else string comparison. Equal numbers spelled differently (`"7"`, `"07"`) fall back to string
 * order so the result is still a total order.
 */
export function compareMsgIds(a: string, b: string): number {
  if (a === b) return 0;
  if (isDigits(a) && isDigits(b)) {
    const sa = stripZeros(a);
    const sb = stripZeros(b);
    if (sa.length !== sb.length) return sa.length - sb.length;
    if (sa !== sb) return sa < sb ? -1 : 1;
  }
  return a < b ? -1 : 1;
}

/** Dispatch order of messages: server timestamp, then msg id. */
export function compareMessages(a: Pick<GroupMessage, "timestamp" | "msgId">, b: Pick<GroupMessage, "timestamp" | "msgId">): number {
  return a.timestamp - b.timestamp || compareMsgIds(a.msgId, b.msgId);
}

const MSG_ID_KEY = new RegExp(String.raw`[{,]\s*"msg_id"\s*:\s*"?(\d{1,${MAX_WIRE_DIGITS}})`, "g");

/**
 * Every `"msg_id": N` key in a frame (at most 100), without parsing it. Inside a JSON string a
 * quote is always escaped, so `{"msg_id":` or `,"msg_id":` only matches a real key; a key inside
 * a message's metadata may match too, which is why callers take the smallest id above their cursor.
 */
export function msgIdsIn(text: string): number[] {
  const ids: number[] = [];
  for (const m of text.matchAll(MSG_ID_KEY)) {
    ids.push(Number(m[1]));
    if (ids.length >= 100) break;
  }
  return ids;
}
