// The situation block of a direct (one-to-one) conversation: who the peer is, our status, what is
// asked and the reply policy. It replaces the group's situation block after the same stable ACP
// prefix, so a provider's prefix cache serves both. Pure: same input, same bytes.
import type { MemberType, MemberTypeSource } from "../members/member-types.ts";
import type { ReplyType } from "../types.ts";
import { sanitizeSender } from "./sanitize.ts";
import type { KnownNames } from "./known-names.ts";

export interface DirectSituation {
  peer: string;
  peerType: { type: MemberType; source: MemberTypeSource };
  /** Server-time estimate. */
  now: number;
  /** Our last message in this conversation (server time), or null. */
  lastSelfSpeakAt: number | null;
  budgetRatio: number;
  replyType: ReplyType;
  maxChars: number;
  noMarkdown: boolean;
  knownNames?: KnownNames | undefined;
}

const describeType = (t: DirectSituation["peerType"]): string => (t.source === "owner" ? "human, your owner" : t.type === "unknown" ? "type unknown" : t.type);

export function buildDirectSituationPrompt(s: DirectSituation): string {
  const ago = s.lastSelfSpeakAt === null ? "-1" : `${Math.max(0, Math.floor((s.now - s.lastSelfSpeakAt) / 1000))}s`;
  const ratio = Number.isFinite(s.budgetRatio) ? String(Math.round(s.budgetRatio * 100) / 100) : "1";
  return [
    "## Direct Conversation Context",
    "",
    "[Conversation]",
    "kind=direct",
    `peer=${sanitizeSender(s.peer, s.knownNames)}`,
    `peer_type=${describeType(s.peerType)}`,
    "",
    "[My Status]",
    `last_speak_ago=${ago}`,
    `budget_usage_ratio=${ratio}`,
    "",
    "[Decision Goal]",
    "This is a one-to-one conversation, not a group: every message below is written to you. Answer it directly.",
    "When the exchange is finished (nothing left to add, a goodbye, an agent going in circles), answer exactly NO_REPLY: that ends it.",
    "",
    "[Reply Policy]",
    `reply_type=${s.replyType}`,
    "avoid_repetition=true",
    `no_markdown=${s.noMarkdown}`,
    "human_chat_style=true",
    `max_chars=${s.maxChars}`,
  ].join("\n");
}
