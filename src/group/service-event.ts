// Which messages are the group service's own events (join, leave, rules changed…). Only the
// service can say so: a member's post with `content_type: "system"` or `metadata.event_type` is
// that member's words, shown with their name, never an event line. Pure.
import type { GroupMessage } from "../types.ts";
import { EVENT_CONTENT_TYPES } from "../wire/event-types.ts";
import { equalsLower } from "../util/equals-lower.ts";

/**
 * The group service that serves a group, `group.<ap-domain>`, lower-cased: the group's own
 * `accessPoint` when it has one, else our aid's (`alice.agentcp.io` → `group.agentcp.io`);
 * undefined for a name without a domain (replayed nicks).
 */
export function groupServiceAid(selfAid: string, accessPoint?: string): string | undefined {
  if (accessPoint) return `group.${accessPoint.toLowerCase()}`;
  const dot = selfAid.indexOf(".");
  if (dot <= 0 || dot === selfAid.length - 1) return undefined;
  return `group.${selfAid.slice(dot + 1).toLowerCase()}`;
}

/** An event shaped message sent by the group service itself (`serviceAid` from {@link groupServiceAid}). */
export function isServiceEvent(m: Pick<GroupMessage, "sender" | "contentType" | "metadata">, serviceAid: string | undefined): boolean {
  // Sender first: a length compare rules out almost every message on the ingest hot path.
  return isFromService(m.sender, serviceAid) && isEventShaped(m);
}

/** Looks like an event (content type or `metadata.event_type`), whoever sent it. */
export function isEventShaped(m: Pick<GroupMessage, "contentType" | "metadata">): boolean {
  return EVENT_CONTENT_TYPES.has(m.contentType) || typeof m.metadata?.event_type === "string";
}

function isFromService(sender: string, serviceAid: string | undefined): boolean {
  return serviceAid !== undefined && equalsLower(sender, serviceAid);
}
