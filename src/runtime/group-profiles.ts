// What the group service says about each of an identity's groups — its announcement
// (`get_announcement`), its rules text and `max_message_size` (`get_rules`) — read after joining
// and again when the group's event log says they changed (announcement, rules or meta updated).
// The monitors read it through `source(groupId)`: a new object only when something changed, so
// the prompt's group layer stays byte-identical otherwise. A service that does not answer one of
// the requests keeps what was known; nothing here can stop the identity.
import { errorFields } from "../log.ts";
import type { GroupProfile, GroupProfileSource } from "../monitor/group-layer.ts";
import type { GroupConnection } from "../transport/connection.ts";
import type { Logger } from "../types.ts";

/** Event-log entries that change what a group's profile says. */
export const GROUP_PROFILE_EVENTS: ReadonlySet<string> = new Set(["announcement_updated", "rules_updated", "meta_updated"]);

export interface GroupProfiles {
  source(groupId: string): GroupProfileSource;
  /** Reads the group's rules and announcement; resolves (never rejects) once done. */
  refresh(connection: GroupConnection, groupId: string): Promise<void>;
  /** Later answers are ignored. */
  close(): void;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined);
const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : undefined);

export function createGroupProfiles(logger: Logger): GroupProfiles {
  const profiles = new Map<string, GroupProfile>();
  let closed = false;

  const read = async (connection: GroupConnection, groupId: string, action: string): Promise<Record<string, unknown> | undefined> => {
    try {
      const data = await connection.request(action, { groupId });
      return data !== null && typeof data === "object" ? (data as Record<string, unknown>) : {};
    } catch (err) {
      if (!closed) logger.log("debug", "runtime.group-profile-failed", { group: groupId, action, ...errorFields(err) });
      return undefined;
    }
  };

  return {
    source: (groupId) => ({ current: () => profiles.get(groupId) }),
    async refresh(connection, groupId) {
      const [rules, announcement] = await Promise.all([read(connection, groupId, "get_rules"), read(connection, groupId, "get_announcement")]);
      if (closed) return;
      const before = profiles.get(groupId);
      const next: GroupProfile = {
        announcement: announcement ? text(announcement.content) : before?.announcement,
        rules: rules ? text(rules.rules) : before?.rules,
        maxMessageChars: rules ? count(rules.max_message_size) : before?.maxMessageChars,
      };
      if (before && before.announcement === next.announcement && before.rules === next.rules && before.maxMessageChars === next.maxMessageChars) return;
      profiles.set(groupId, next);
      logger.log("debug", "runtime.group-profile", { group: groupId, announcement: next.announcement !== undefined, rules: next.rules !== undefined, maxMessageChars: next.maxMessageChars });
    },
    close() {
      closed = true;
    },
  };
}
