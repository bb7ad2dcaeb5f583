// The context-bus timeline (seed 000) for `contextFormat: "xml"`: one time-ordered stream of
// member messages, our own replies, group events and pauses, always well-formed XML.
import type { InboundMessage, OwnReply } from "../types.ts";
import { eventText, formatClock, formatGap, isGroupEvent } from "./format-common.ts";
import { escapeXml, sanitizeContent, sanitizeId, sanitizeSender, type NameDisplay } from "./sanitize.ts";

export const XML_LEGEND =
  '<!-- m=member message (n=sender, t=time, mention="1" names you, engaged="1" follows up your talk) b=your reply s=group event g=pause x=repeated N times -->';

interface Entry {
  kind: "m" | "b" | "s";
  ts: number;
  lastTs: number;
  id: string | undefined;
  sender: string;
  text: string;
  mention: boolean;
  engaged: boolean;
  count: number;
}

export interface XmlTimelineOptions {
  /** Our aid: our own messages are dropped (lines) or shown as `<b>` (xml). */
  selfAid: string;
  /** The group's access point when not our aid's: its `group.<ap>` writes the event lines. */
  accessPoint?: string | undefined;
  /** Longer messages are cut with a mark. */
  maxInboundChars: number;
  /** xml: pauses longer than this get `<g d="…"/>`. Default 10 min. */
  gapThresholdMs?: number;
  /** xml: identical consecutive messages of one sender within this window stack as x="N". Default 5 s. */
  stackWindowMs?: number;
  /** xml: our recent replies, interleaved by time as `<b>`. */
  ownReplies?: readonly OwnReply[];
  /** IANA zone for the hh:mm:ss stamps. Default UTC. */
  timeZone?: string;
  /** Group name/topic, shown first when set. */
  subject?: string;
  /** Aids a sender may not pass for: a look-alike name is shown with what it imitates. */
  knownNames?: NameDisplay;
}

export function formatXmlTimeline(messages: readonly InboundMessage[], opts: XmlTimelineOptions): string {
  const gapMs = opts.gapThresholdMs ?? 600_000;
  const stackMs = opts.stackWindowMs ?? 5000;
  const raw: Entry[] = [];
  for (const m of messages) {
    const kind = m.sender === opts.selfAid ? "b" : isGroupEvent(m, opts.selfAid, opts.accessPoint) ? "s" : "m";
    raw.push({
      kind,
      ts: m.timestamp,
      lastTs: m.timestamp,
      id: m.msgId,
      sender: m.sender,
      text: sanitizeContent(kind === "s" ? eventText(m) : m.content, opts.maxInboundChars),
      mention: m.isMention,
      engaged: m.engaged,
      count: 1,
    });
  }
  const seenOwnIds = new Set(raw.filter((e) => e.kind === "b").map((e) => e.id));
  for (const r of opts.ownReplies ?? []) {
    if (r.msgId !== undefined && seenOwnIds.has(r.msgId)) continue;
    const text = sanitizeContent(r.text, opts.maxInboundChars);
    raw.push({ kind: "b", ts: r.timestamp, lastTs: r.timestamp, id: r.msgId, sender: opts.selfAid, text, mention: false, engaged: false, count: 1 });
  }
  // Stable sort: equal timestamps keep batch order, and our replies follow what they answered.
  raw.sort((a, b) => a.ts - b.ts);

  const entries: Entry[] = [];
  for (const e of raw) {
    const prev = entries.at(-1);
    if (prev && prev.kind === e.kind && prev.sender === e.sender && prev.text === e.text && e.ts - prev.lastTs <= stackMs) {
      prev.count++;
      prev.lastTs = e.ts;
      prev.id = e.id ?? prev.id;
      prev.mention ||= e.mention;
      prev.engaged ||= e.engaged;
      continue;
    }
    entries.push(e);
  }

  const subject = opts.subject?.trim() ? ` subject="${escapeXml(sanitizeContent(opts.subject, 200))}"` : "";
  const out = [`<ctx${subject}>`, XML_LEGEND];
  let prevTs: number | undefined;
  for (const e of entries) {
    if (prevTs !== undefined && e.ts - prevTs > gapMs) out.push(`<g d="${formatGap(e.ts - prevTs)}"/>`);
    prevTs = e.lastTs;
    out.push(renderEntry(e, opts.timeZone, opts.knownNames));
  }
  out.push("</ctx>");
  return out.join("\n");
}

function renderEntry(e: Entry, timeZone: string | undefined, known: NameDisplay | undefined): string {
  let attrs = "";
  if (e.id !== undefined && e.kind !== "s") attrs += ` id="${escapeXml(sanitizeId(e.id))}"`;
  attrs += ` t="${formatClock(e.ts, timeZone)}"`;
  if (e.kind === "m") attrs += ` n="${escapeXml(sanitizeSender(e.sender, known))}"`;
  if (e.mention) attrs += ' mention="1"';
  else if (e.engaged) attrs += ' engaged="1"';
  if (e.count > 1) attrs += ` x="${e.count}"`;
  return `<${e.kind}${attrs}>${escapeXml(e.text)}</${e.kind}>`;
}
