// Which messages are the group service's own events (join, leave, rules changed…). Only the
// service can say so: a member's post with `content_type: "system"` or `metadata.event_type` is
// that member's words, shown with their name, never an event line. Pure; imports only types.
import type { GroupMessage } from "../types.ts";

const EVENT_CONTENT_TYPES = new Set(["event", "system", "group_event"]);

/**
 * The group service of our access point, `group.<ap-domain>` (`alice.agentcp.io` →
 * `group.agentcp.io`), lower-cased; undefined for a name without a domain (replayed nicks).
 */
export function groupServiceAid(selfAid: string): string | undefined {
  const dot = selfAid.indexOf(".");
  if (dot <= 0 || dot === selfAid.length - 1) return undefined;
  return `group.${selfAid.slice(dot + 1).toLowerCase()}`;
}

/** An event shaped message sent by the group service itself (`serviceAid` from {@link groupServiceAid}). */
export function isServiceEvent(m: Pick<GroupMessage, "sender" | "contentType" | "metadata">, serviceAid: string | undefined): boolean {
  if (serviceAid === undefined || m.sender.length !== serviceAid.length || m.sender.toLowerCase() !== serviceAid) return false;
  return EVENT_CONTENT_TYPES.has(m.contentType) || typeof m.metadata?.event_type === "string";
}
