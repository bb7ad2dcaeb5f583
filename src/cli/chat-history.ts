// What `acp-group chat` asks the group service before it shows anything: does the group answer
// us (a group that does not exist, or does not have us, is one clear line and a non-zero exit,
// not a header followed by log lines), and what were its last N messages — read back from the
// group's latest message id, so every session shows them. It asks on a connection of its own that
// follows no group (no pulls, no warnings about a group that is not there), closed before the
// live one opens on the same session.
import { RESULT_CODES } from "../wire/result-codes.ts";
import { CommandError } from "./args.ts";
import { parsePullData } from "../wire/responses.ts";
import { isPlain } from "../wire/plain.ts";
import { isMsgIdNumber, msgIdValue } from "../wire/msg-id.ts";
import { TransportError } from "../transport/errors.ts";
import { createGroupConnection, type GroupConnection } from "../transport/connection.ts";
import type { PeerChannel } from "../network/peer-channel.ts";
import type { GroupMessage, Logger } from "../types.ts";

/** The group refused us for good (no such group, not a member, dissolved, banned): printed as it is. */
export class ChatGroupRefused extends CommandError {}

function refusal(err: unknown, p: { groupId: string; service: string; aid: string }): ChatGroupRefused | undefined {
  if (!(err instanceof TransportError) || err.code !== "REQUEST_FAILED") return undefined;
  const reason = err.message.replace(/^.*failed with code \d+: /, "");
  switch (err.context.resultCode) {
    case RESULT_CODES.GROUP_NOT_FOUND:
      return new ChatGroupRefused(`no group ${p.groupId} on ${p.service} (${reason})`);
    case RESULT_CODES.NOT_MEMBER:
      return new ChatGroupRefused(`${p.aid} is not a member of ${p.groupId} on ${p.service}: join it with its link (\`acp-group chat <link> --identity ${p.aid}\`)`);
    case RESULT_CODES.GROUP_DISSOLVED:
    case RESULT_CODES.GROUP_SUSPENDED:
    case RESULT_CODES.BANNED:
    case RESULT_CODES.NO_PERMISSION:
      return new ChatGroupRefused(`${p.groupId} on ${p.service} refuses ${p.aid} (${reason})`);
    default:
      return undefined;
  }
}

/**
 * Checks that the group answers us and returns its latest msg id with the last `count` messages up
 * to it, oldest first. Throws ChatGroupRefused, in one line, when the group service refuses us for good.
 */
export async function openChatGroup(p: { connection: GroupConnection; groupId: string; service: string; aid: string; count: number }): Promise<{ latest: number; messages: GroupMessage[] }> {
  let latest = 0;
  try {
    const data = await p.connection.request("get_cursor", { groupId: p.groupId });
    const cursor = isPlain(data) && isPlain(data.msg_cursor) ? data.msg_cursor.latest_msg_id : undefined;
    if (isMsgIdNumber(cursor)) latest = cursor;
  } catch (err) {
    throw refusal(err, p) ?? err;
  }
  if (p.count === 0 || latest === 0) return { latest, messages: [] };
  // Message ids count up per group: the last `count` are those after latest − count (fewer where
  // the service skipped ids). A page may come back shorter than asked: read on while it says so.
  const out: GroupMessage[] = [];
  let after = Math.max(0, latest - p.count);
  while (out.length < p.count) {
    const parsed = parsePullData(p.groupId, await p.connection.request("pull_messages", { groupId: p.groupId, params: { after_msg_id: after, limit: p.count - out.length } }));
    if (!parsed.ok || parsed.page.messages.length === 0) break;
    out.push(...parsed.page.messages);
    after = Math.max(...parsed.page.messages.map((m) => msgIdValue(m.msgId)));
    if (!parsed.page.hasMore || after >= latest) break;
  }
  return { latest, messages: out.filter((m) => msgIdValue(m.msgId) <= latest).slice(-p.count) };
}

/** Opens a look at the group on `channel` (kept open afterwards), then closes it: see openChatGroup. */
export async function lookAtChatGroup(p: { channel: PeerChannel; aid: string; groupId: string; service: string; count: number; logger: Logger }): Promise<{ latest: number; messages: GroupMessage[] }> {
  const probe = createGroupConnection({ channel: p.channel, aid: p.aid, groups: [], closeChannel: false, getCursor: () => 0, onMessages: () => {}, logger: p.logger });
  try {
    await probe.start();
    return await openChatGroup({ connection: probe, groupId: p.groupId, service: p.service, aid: p.aid, count: p.count });
  } finally {
    await probe.close();
  }
}
