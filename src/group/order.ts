// Message ordering and numeric msg ids. ACP ids are increasing decimal integers carried as strings;
// replay logs may use any string, so every helper degrades to plain string order.
import type { GroupMessage } from "../types.ts";

/**
 * The id as a number when it is a canonical decimal safe integer (`"42"`, not `"042"` or `"4e2"`),
 * else `undefined` — the same range the transport accepts for `msg_id`, so every wire id moves
 * the cursor. Runs per message: no regex, no allocation.
 */
export function numericMsgId(id: string): number | undefined {
  const len = id.length;
  if (len === 0 || len > 16) return undefined;
  const first = id.charCodeAt(0);
  if (first < 48 || first > 57 || (first === 48 && len > 1)) return undefined;
  // The value is built digit by digit (exact below 2^53), so no string-to-number conversion runs.
  let n = first - 48;
  for (let i = 1; i < len; i++) {
    const c = id.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
    n = n * 10 + (c - 48);
  }
  return len < 16 || Number.isSafeInteger(n) ? n : undefined;
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

/** Dispatch order: server timestamp, then msg id. */
export function compareMessages(a: GroupMessage, b: GroupMessage): number {
  return a.timestamp - b.timestamp || compareMsgIds(a.msgId, b.msgId);
}
