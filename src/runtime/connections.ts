// One group connection per group service an identity's groups live on (`group.<ap>` of each
// group's access point, the identity's own by default), all over the identity's one link. Each
// feeds its groups' clients and settles its cursor from them.
import { childLogger, errorFields } from "../log.ts";
import { aidDomain, groupServiceAid } from "../network/access-point.ts";
import type { AgentLink } from "../network/peer-channel.ts";
import { createGroupConnection, type GroupConnection, type GroupConnectionParams, type GroupEvent } from "../transport/connection.ts";
import type { GroupMessage, IdentityConfig, Logger } from "../types.ts";
import { settledCursor } from "./cursor.ts";
import type { GroupRuntimes } from "./groups.ts";
import type { IdentityProfile } from "./profile.ts";
import { GROUP_PROFILE_EVENTS } from "./group-profiles.ts";

/** Event-log entries that change a group's members. */
const MEMBER_EVENTS: ReadonlySet<string> = new Set(["member_joined", "member_left", "member_removed", "member_banned", "member_unbanned"]);

export interface GroupConnections {
  /** Every group connection, by group service aid. */
  readonly byService: ReadonlyMap<string, GroupConnection>;
  /** The groups each group service serves. */
  readonly groupsOf: ReadonlyMap<string, string[]>;
  /** The connection to the identity's own access point's group service (else the first); none without groups. */
  readonly home: GroupConnection | undefined;
  /** The connection that carries `groupId` (a configured group). */
  connectionOf(groupId: string): GroupConnection;
}

export function openGroupConnections(p: {
  link: AgentLink;
  identity: IdentityConfig;
  groups: GroupRuntimes;
  profile: IdentityProfile;
  logger: Logger;
  tuning?: Pick<GroupConnectionParams, "heartbeatMs" | "requestTimeoutMs" | "reconnect" | "sendRetry" | "pageSize"> | undefined;
  onMessages?: ((groupId: string, messages: readonly GroupMessage[]) => void) | undefined;
  onTransportEvent?: ((groupId: string, event: GroupEvent) => void) | undefined;
  isClosing: () => boolean;
}): GroupConnections {
  const { identity, groups, logger } = p;
  const homeService = groupServiceAid(aidDomain(identity.aid));
  const groupsOf = new Map<string, string[]>();
  for (const [groupId, service] of groups.serviceOf) groupsOf.set(service, [...(groupsOf.get(service) ?? []), groupId]);
  const byService = new Map<string, GroupConnection>();
  const connectionOf = (groupId: string): GroupConnection => byService.get(groups.serviceOf.get(groupId)!)!;
  // One read at a time per group and kind: events during a read make one more read after it.
  const reading = new Map<string, { again: boolean }>();
  const refresh = (groupId: string, kind: "members" | "profile"): void => {
    const key = `${kind}\u0000${groupId}`;
    const running = reading.get(key);
    if (running) return void (running.again = true);
    const state = { again: false };
    reading.set(key, state);
    const read = kind === "members" ? () => p.profile.refreshMembers(connectionOf(groupId), groupId) : () => p.profile.groups.refresh(connectionOf(groupId), groupId);
    void (async () => {
      do {
        state.again = false;
        await read();
      } while (state.again && !p.isClosing());
    })().finally(() => reading.delete(key));
  };
  for (const [service, serviceGroups] of groupsOf) {
    byService.set(service, createGroupConnection({
      channel: p.link.channel(service),
      aid: identity.aid,
      groups: serviceGroups,
      logger: childLogger(logger, { service }),
      ...p.tuning,
      getCursor: (groupId) => {
        const g = groups.byId.get(groupId);
        return g ? settledCursor(g) : 0;
      },
      // The server's cursor must not pass a message we still hold (see settledCursor).
      ackCursor: (groupId) => {
        const g = groups.byId.get(groupId);
        return g ? settledCursor(g) : 0;
      },
      onMessages: (groupId, messages) => {
        const g = groups.byId.get(groupId);
        if (!g) return;
        try {
          p.onMessages?.(groupId, messages);
        } catch (err) {
          // A display observer's failure must not refuse the batch: the transport would re-pull it,
          // the observer would throw again, and the group would go deaf.
          logger.log("error", "runtime.on-messages-failed", { group: groupId, ...errorFields(err) });
        }
        g.client.feedBufferGate(messages);
        groups.saveSoon(g);
      },
      onEvent: (groupId, event) => {
        // Someone joined, left or was removed: the members list (and each newcomer's type) is read
        // again; the announcement, rules or meta changed: the group's profile is.
        if (!p.isClosing() && groups.byId.has(groupId)) {
          if (MEMBER_EVENTS.has(event.event)) refresh(groupId, "members");
          else if (GROUP_PROFILE_EVENTS.has(event.event)) refresh(groupId, "profile");
        }
        p.onTransportEvent?.(groupId, event);
      },
    }));
  }
  return { byService, groupsOf, home: byService.get(homeService) ?? [...byService.values()][0], connectionOf };
}
