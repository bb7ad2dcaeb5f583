// The group sender an identity's monitors use, over the group transport: sends that wait out a
// short outage, the history check before a maybe-stored reply goes again, and the membership report.
import { errorFields } from "../log.ts";
import { TransportError } from "../transport/errors.ts";
import type { GroupConnection } from "../transport/connection.ts";
import { findSentMessage } from "../transport/sent-check.ts";
import type { GroupSender, Logger } from "../types.ts";

/** One group's sender; `connection` is asked each time (a group's connection can be replaced). */
export function createGroupSender(p: { connection: () => GroupConnection; groupId: string; selfAid: string; logger: Logger }): GroupSender {
  const { groupId, logger } = p;
  return {
    // Reactions only where the group service says it takes them (none advertises it today).
    get reactions() {
      return p.connection().reactions === true;
    },
    // One try per dispatch: a reply that finds no session goes back to the group client, whose
    // retry book owns the retries (with backoff, the group's lock released in between).
    sendMessage: (m) => p.connection().sendMessage(m),
    async findSent({ content, afterMsgId }) {
      const found = await findSentMessage(p.connection(), { groupId, selfAid: p.selfAid, content, afterMsgId });
      if (found.found) return { msgId: found.msgId, timestamp: found.timestamp };
      // Hundreds of messages since: not among them as far as we read; sending is the lesser risk.
      if (!found.complete) logger.log("warn", "runtime.sent-check-incomplete", { group: groupId, afterMsgId, pagesRead: found.pagesRead });
      return undefined;
    },
  };
}

/**
 * The host's own posts (sendText), which have no retry book behind them. NOT_CONNECTED means nothing left (no session came within the request timeout): waiting for the
 * next session and sending again cannot post twice, so a reply survives a short outage. Any other
 * failure (a lost session, a timeout) may have been stored and is not retried.
 */
const SEND_ATTEMPTS_WITHOUT_SESSION = 3;
export async function sendWhenConnected(
  connection: GroupConnection,
  message: { groupId: string; content: string; metadata?: Record<string, unknown> },
  logger: Logger,
): Promise<{ msgId: string; timestamp: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connection.sendMessage(message);
    } catch (err) {
      if (!(err instanceof TransportError && err.code === "NOT_CONNECTED") || attempt >= SEND_ATTEMPTS_WITHOUT_SESSION || connection.status === "closed") throw err;
      logger.log("info", "runtime.send-waiting-for-session", { group: message.groupId, attempt });
    }
  }
}

/** Logs what the identity is a member of (`list_my_groups`) and warns about configured groups it is not in. */
export async function reportMemberships(connection: GroupConnection, configured: readonly string[], logger: Logger): Promise<void> {
  try {
    const data = await connection.request("list_my_groups");
    const list = data && typeof data === "object" && Array.isArray((data as { groups?: unknown }).groups) ? (data as { groups: unknown[] }).groups : [];
    const ids = list.flatMap((g) => (g && typeof g === "object" && typeof (g as { group_id?: unknown }).group_id === "string" ? [(g as { group_id: string }).group_id] : []));
    logger.log("info", "runtime.my-groups", { service: connection.peer, groups: ids });
    const missing = configured.filter((g) => !ids.includes(g));
    if (missing.length > 0) logger.log("warn", "runtime.not-a-member", { service: connection.peer, groups: missing, hint: "join with `acp-group join <link>`" });
  } catch (err) {
    logger.log("warn", "runtime.list-my-groups-failed", { service: connection.peer, ...errorFields(err) });
  }
}
