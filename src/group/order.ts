// Dispatch order of messages. Msg ids and their order are the wire's (../wire/msg-id.ts); the
// group modules keep importing them from here.
import type { GroupMessage } from "../types.ts";
import { compareMsgIds } from "../wire/msg-id.ts";

export { compareMsgIds, numericMsgId } from "../wire/msg-id.ts";

/** Dispatch order: server timestamp, then msg id. */
export function compareMessages(a: GroupMessage, b: GroupMessage): number {
  return a.timestamp - b.timestamp || compareMsgIds(a.msgId, b.msgId);
}
