// The id arithmetic of a group feed, pure: which messages are new, whether a push continues the
// sequence, what a batch says it covers, which id an oversize page skips, and which pull failures
// mean the group will not serve us. ACP msg ids count up by one per group.
import type { GroupMessage } from "../types.ts";
import type { BatchRange } from "../wire/frames.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";

/** Messages above `after`, each id once, in id order. */
export function freshMessages(messages: readonly GroupMessage[], after: number): GroupMessage[] {
  // Almost always (a push, a page): ids already increasing from above `after` — taken as they are.
  let prev = after;
  for (const m of messages) {
    const id = msgIdValue(m.msgId);
    if (!(id > prev)) return sortedFresh(messages, after);
    prev = id;
  }
  return messages.slice();
}

function sortedFresh(messages: readonly GroupMessage[], after: number): GroupMessage[] {
  const byId = new Map<number, GroupMessage>();
  for (const m of messages) {
    const id = msgIdValue(m.msgId);
    if (id > after && !byId.has(id)) byId.set(id, m);
  }
  return [...byId.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
}

/** The highest id among `messages`, or `floor` when none is higher. */
export function highestId(messages: readonly GroupMessage[], floor: number): number {
  let max = floor;
  for (const m of messages) max = Math.max(max, msgIdValue(m.msgId));
  return max;
}

/** The highest id a batch push says it covers (its latest id, or start + count − 1); 0 when it says nothing. */
export function claimedUpTo(range: BatchRange | undefined): number {
  return Math.max(
    range?.latestMsgId ?? 0,
    range?.startMsgId !== undefined && range.count !== undefined && range.count > 0 ? range.startMsgId + range.count - 1 : 0,
  );
}

/**
 * Whether fresh messages (in id order) follow `expected` with nothing missing: each id the next
 * one, or, in a group whose ids are known to skip numbers, each id simply higher.
 */
export function continuesFrom(fresh: readonly GroupMessage[], expected: number, sparseIds: boolean): boolean {
  return sparseIds
    ? fresh.every((m, i) => i === 0 || msgIdValue(m.msgId) > msgIdValue(fresh[i - 1]!.msgId))
    : fresh.every((m, i) => msgIdValue(m.msgId) === expected + 1 + i);
}

/**
 * Where consecutive ids after `expected` first break: the last id before the break and the first
 * after it. A gap pull checks only that range; ids before it (a batch that starts in order) say
 * nothing about whether the group's ids skip numbers.
 */
export function firstGap(fresh: readonly GroupMessage[], expected: number): { after: number; before: number } {
  let after = expected;
  for (const m of fresh) {
    const id = msgIdValue(m.msgId);
    if (id !== after + 1) return { after, before: id };
    after = id;
  }
  return { after, before: after + 1 };
}

/**
 * The id a pull answered too large to read skips: the smallest id above `after` named in the
 * response (a metadata key may name another id, but never one below the message's own), else the
 * next id.
 */
export function oversizeSkipId(after: number, err: unknown): number {
  const ids = ((err as { context?: { msgIds?: unknown } }).context?.msgIds ?? []) as unknown[];
  const above = ids.filter((id): id is number => typeof id === "number" && Number.isSafeInteger(id) && id > after);
  return above.length > 0 ? Math.min(...above) : after + 1;
}

/** Result codes that say the group will not serve this member (not found, dissolved, suspended, not a member, banned). */
const REFUSAL_CODES: ReadonlySet<number> = new Set([
  RESULT_CODES.GROUP_NOT_FOUND,
  RESULT_CODES.GROUP_DISSOLVED,
  RESULT_CODES.GROUP_SUSPENDED,
  RESULT_CODES.NOT_MEMBER,
  RESULT_CODES.BANNED,
]);

/** A pull failure that waiting will not cure: the group refuses this member. */
export function isRefusal(err: unknown): boolean {
  const code = (err as { context?: { resultCode?: unknown } }).context?.resultCode;
  return typeof code === "number" && REFUSAL_CODES.has(code);
}
