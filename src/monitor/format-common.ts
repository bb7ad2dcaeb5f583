// Small helpers shared by both message formats.
import { groupServiceAid, isEventShaped, isServiceEvent } from "../group/service-event.ts";
import { readMessageSignals } from "../group/signals.ts";
import type { GroupMessage } from "../types.ts";

/**
 * A group event (join, leave, rules changed…) carried as a message by the group service of our
 * access point. A member's event-shaped post is not one: it is shown as that member's words. A
 * reaction (`group_meta.msg_type: "reaction"`) is shown as an event too: activity, not text to answer.
 */
export function isGroupEvent(m: Pick<GroupMessage, "sender" | "contentType" | "metadata">, selfAid: string, accessPoint?: string): boolean {
  // The type test first: the service aid is only worked out for event-shaped messages.
  return (isEventShaped(m) && isServiceEvent(m, groupServiceAid(selfAid, accessPoint))) || isReaction(m);
}

function isReaction(m: Pick<GroupMessage, "metadata">): boolean {
  const meta = m.metadata?.group_meta;
  return typeof meta === "object" && meta !== null && (meta as Record<string, unknown>).msg_type === "reaction";
}

/** Human-readable text of a group event: its content, else `actor event_type target`; a reaction as `bob reacted 👍 to msg_id:42`. */
export function eventText(m: Pick<GroupMessage, "content" | "sender" | "metadata">): string {
  if (isReaction(m)) {
    const s = readMessageSignals(m.metadata, "", m.content).reaction;
    return `${m.sender} reacted ${s?.reaction || "?"}${s?.replyTo !== undefined ? ` to msg_id:${s.replyTo}` : ""}`;
  }
  if (m.content.trim() !== "") return m.content;
  const md = m.metadata ?? {};
  const parts = [md.actor ?? m.sender, md.event_type, md.target].filter((x): x is string => typeof x === "string" && x !== "");
  return parts.join(" ");
}

const zoneFormatters = new Map<string, Intl.DateTimeFormat>();

/** `hh:mm:ss` of a server timestamp, in UTC unless a zone is given. */
export function formatClock(ts: number, timeZone = "UTC"): string {
  if (timeZone === "UTC") {
    // Hand-rolled for UTC: Intl formatting costs microseconds per call on the prompt hot path.
    const daySec = Math.floor((((ts % 86_400_000) + 86_400_000) % 86_400_000) / 1000);
    return `${pad2(Math.floor(daySec / 3600))}:${pad2(Math.floor(daySec / 60) % 60)}:${pad2(daySec % 60)}`;
  }
  let f = zoneFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
    zoneFormatters.set(timeZone, f);
  }
  return f.format(ts);
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `12m`, `2h5m`, `3d4h`: a pause as the model should read it. */
export function formatGap(ms: number): string {
  const min = Math.floor(ms / 60_000);
  if (min < 60) return `${min}m`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h}h${min % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
}
