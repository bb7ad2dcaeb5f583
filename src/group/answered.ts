// Never the same thing twice, even after a crash. Every reply we send names the newest message of
// the batch it answers (`metadata.answered_through`, beside `reply_to`). When one of our own
// messages comes back — as an echo, or from history after a restart that lost the state save —
// everything held up to that id was answered already: it is settled (a counted drop `answered`),
// not dispatched again. Pure; imports only types.
import type { GroupMessage } from "../types.ts";
import { numericMsgId } from "../wire/msg-id.ts";
import { replyTargetOf } from "./mention.ts";

/** The metadata key of our replies that names the newest msg id of the answered batch. */
export const ANSWERED_THROUGH_KEY = "answered_through";

/**
 * The highest numeric msg id a message of ours says it answered: `answered_through`, else its
 * `reply_to` (replies from before this key, or from a host that only sets reply_to). Undefined
 * when it answers nothing we can place.
 */
export function answeredThroughOf(metadata: GroupMessage["metadata"]): number | undefined {
  if (metadata === null) return undefined;
  const raw = metadata[ANSWERED_THROUGH_KEY];
  const through = typeof raw === "number" ? (Number.isSafeInteger(raw) && raw >= 0 ? raw : undefined) : typeof raw === "string" ? numericMsgId(raw) : undefined;
  if (through !== undefined) return through;
  const to = replyTargetOf(metadata);
  return to === undefined ? undefined : numericMsgId(to);
}

/** The value to send as `answered_through`: the newest numeric msg id among `messages`, if any. */
export function answeredThroughFor(messages: readonly Pick<GroupMessage, "msgId">[]): string | undefined {
  let top: number | undefined;
  for (const m of messages) {
    const n = numericMsgId(m.msgId);
    if (n !== undefined && (top === undefined || n > top)) top = n;
  }
  return top === undefined ? undefined : String(top);
}

/** True when every message of `messages` has a numeric id at or below `through`. */
export function allAnswered(messages: readonly Pick<GroupMessage, "msgId">[], through: number | undefined): boolean {
  if (through === undefined || messages.length === 0) return false;
  for (const m of messages) {
    const n = numericMsgId(m.msgId);
    if (n === undefined || n > through) return false;
  }
  return true;
}
