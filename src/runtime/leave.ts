// Leaving a group: the identity signs in as the runtime does, opens the session with the group's
// service and sends `leave_group` (the official SDK's action: no params). The service drops the
// membership and tells the group (`member_left`). `acp-group leave` uses it.
import { createGroupConnection } from "../transport/connection.ts";
import { TransportError } from "../transport/errors.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import type { ChannelConfig, Logger } from "../types.ts";
import { connectConfiguredIdentity } from "./link.ts";

/** `left`, or `not-a-member` when the service says the identity was not in the group. */
export type LeaveStatus = "left" | "not-a-member";

export async function leaveGroup(p: { config: ChannelConfig; identityId: string; service: string; groupId: string; timeoutMs: number; logger: Logger }): Promise<LeaveStatus> {
  const { config, logger } = p;
  const identity = config.identities[p.identityId]!;
  const agent = connectConfiguredIdentity({ config, identityId: p.identityId, logger });
  // No groups to feed: this connection only asks.
  const connection = createGroupConnection({ channel: agent.channel(p.service), aid: identity.aid, groups: [], getCursor: () => 0, onMessages: () => {}, logger });
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no session with ${p.service} within ${p.timeoutMs} ms`)), p.timeoutMs);
    });
    try {
      await Promise.race([agent.ready.then(() => connection.start()), timeout]);
    } finally {
      clearTimeout(timer);
    }
    try {
      await connection.request("leave_group", { groupId: p.groupId });
      return "left";
    } catch (err) {
      if (err instanceof TransportError && err.context.resultCode === RESULT_CODES.NOT_MEMBER) return "not-a-member";
      throw err;
    }
  } finally {
    await connection.close();
    await agent.close();
  }
}
