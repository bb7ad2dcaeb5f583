// The summary that stands in for folded turns: a mechanical one, no model call — counts, who
// spoke, and our own last words. It costs nothing, cannot fail, and is what the model most needs
// to avoid repeating itself.
import { sanitizeSender } from "../monitor/sanitize.ts";
import type { ConversationEntry, SummaryInfo } from "./conversation-entry.ts";

const SENDERS_SHOWN = 8;
const REPLIES_KEPT = 3;
const REPLY_SNIPPET = 80;

/** What `removed` stands for; an earlier summary among them is absorbed. */
export function summarize(removed: readonly ConversationEntry[]): SummaryInfo {
  const info: SummaryInfo = {
    fromTurn: Number.POSITIVE_INFINITY,
    toTurn: 0,
    turns: 0,
    messages: 0,
    senders: [],
    triggers: {},
    replies: 0,
    recentReplies: [],
  };
  const senders = new Set<string>();
  const turns = new Set<number>();
  for (const e of removed) {
    if (e.summary) {
      info.fromTurn = Math.min(info.fromTurn, e.summary.fromTurn);
      info.turns += e.summary.turns;
      info.messages += e.summary.messages;
      info.replies += e.summary.replies;
      for (const s of e.summary.senders) senders.add(s);
      for (const [k, v] of Object.entries(e.summary.triggers)) info.triggers[k] = (info.triggers[k] ?? 0) + v;
      info.recentReplies.push(...e.summary.recentReplies);
      info.toTurn = Math.max(info.toTurn, e.summary.toTurn);
      continue;
    }
    info.fromTurn = Math.min(info.fromTurn, e.turn);
    info.toTurn = Math.max(info.toTurn, e.turn);
    if (e.role === "user") {
      turns.add(e.turn);
      info.messages += e.messageCount ?? 0;
      for (const s of e.senders ?? []) senders.add(s);
      const trigger = String(e.tags.trigger ?? "normal");
      info.triggers[trigger] = (info.triggers[trigger] ?? 0) + 1;
    } else if (e.role === "assistant" && e.tags.silent !== 1) {
      info.replies += 1;
      info.recentReplies.push(shorten(e.content));
    }
  }
  info.turns += turns.size;
  info.senders = [...senders];
  info.recentReplies = info.recentReplies.slice(-REPLIES_KEPT);
  if (!Number.isFinite(info.fromTurn)) info.fromTurn = info.toTurn;
  return info;
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= REPLY_SNIPPET ? flat : `${chars.slice(0, REPLY_SNIPPET).join("")}…`;
}

/** The summary entry's text, as the model reads it. */
export function renderSummary(s: SummaryInfo): string {
  // Names as the prompt shows them: a raw name could open a line, forge a marker or pass for another aid.
  const shown = s.senders.slice(0, SENDERS_SHOWN).map((s) => sanitizeSender(s)).join(", ");
  const more = s.senders.length > SENDERS_SHOWN ? ` and ${s.senders.length - SENDERS_SHOWN} more` : "";
  const triggers = Object.entries(s.triggers)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");
  const lines = [
    `[Earlier in this group, compressed: ${s.turns} dispatches, ${s.messages} messages${shown ? ` from ${shown}${more}` : ""}${triggers ? ` (${triggers})` : ""}. You replied ${s.replies} times.]`,
  ];
  if (s.recentReplies.length > 0) {
    lines.push(`Your last replies then: ${s.recentReplies.map((r) => `“${r}”`).join(" / ")}`);
  }
  return lines.join("\n");
}
