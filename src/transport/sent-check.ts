// Was a send of ours stored after all? A send that failed in a way the server may already have
// stored it (the session dropped, no answer in time) is looked up in the group's history before
// it is sent again: pages after the newest message id known before the first attempt, looking for
// our own message with exactly this text. Throws when the history cannot be read (no session, a bad
// page): the caller must then not send, since it cannot tell.
import type { GroupMessage } from "../types.ts";
import { equalsLower } from "../util/equals-lower.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import type { GroupConnection } from "./connection.ts";
import { TransportError } from "./errors.ts";
import { parsePullData } from "../wire/responses.ts";

export interface SentCheck {
  groupId: string;
  /** Our aid: the sender the stored message would carry. */
  selfAid: string;
  content: string;
  /** The newest message id known before the first send: ours, if stored, came after it. */
  afterMsgId: number;
  pageSize?: number;
  /** Pages read at most (default 10): a send is looked up within seconds of failing. */
  maxPages?: number;
}

export type SentLookup =
  | { found: true; msgId: string; timestamp: number }
  | { found: false; pagesRead: number; complete: boolean };

export async function findSentMessage(connection: Pick<GroupConnection, "request">, p: SentCheck): Promise<SentLookup> {
  const pageSize = p.pageSize ?? 50;
  const maxPages = p.maxPages ?? 10;
  const aidLower = p.selfAid.toLowerCase();
  let after = p.afterMsgId;
  for (let page = 1; page <= maxPages; page++) {
    const data = await connection.request("pull_messages", { groupId: p.groupId, params: { after_msg_id: after, limit: pageSize } });
    const parsed = parsePullData(p.groupId, data);
    if (!parsed.ok) throw new TransportError("BAD_RESPONSE", `pull_messages response: ${parsed.reason}`, { action: "pull_messages", groupId: p.groupId });
    const hit = parsed.page.messages.find((m: GroupMessage) => equalsLower(m.sender, aidLower) && m.content === p.content);
    if (hit) return { found: true, msgId: hit.msgId, timestamp: hit.timestamp };
    const last = parsed.page.messages.at(-1);
    const lastId = last === undefined ? undefined : msgIdValue(last.msgId);
    if (!parsed.page.hasMore || lastId === undefined || !Number.isSafeInteger(lastId) || lastId <= after) return { found: false, pagesRead: page, complete: true };
    after = lastId;
  }
  return { found: false, pagesRead: maxPages, complete: false };
}
