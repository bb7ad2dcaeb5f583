// The line and the view for the addressing rules' table tests, built from literal descriptions:
// the line with its signals, and who we are and the conversation as it stands. Real parts (EngagedSpeakers, the mention matcher,
// the leading-address test), no tracker: each rule is tested on exactly the view it is given.
import { classifyLeadingAddress, memberKeys, nickKey } from "../../../src/group/addressee.ts";
import type { AddressedLine, ConversationView, PendingCommand, SenderTarget } from "../../../src/group/addressing/view.ts";
import { afterFirstWord } from "../../../src/group/addressing/opening.ts";
import { PRIVATE_EXCHANGE_LINES } from "../../../src/group/addressing/rules.ts";
import { compileMentionMatcher } from "../../../src/group/mention.ts";
import type { MessageSignals } from "../../../src/group/signals.ts";
import { EngagedSpeakers } from "../../../src/group/social.ts";

/** T+0 of every row; rows write times as T + literal offsets. */
export const T = 1_700_000_000_000;
export const S = 1000;

/** A line and its signals. */
export interface Line {
  line: AddressedLine;
  signals: MessageSignals;
}

/**
 * bob's line `content` at T (plain text, no metadata, no signals) unless `p` says otherwise;
 * `at` is the offset from T.
 */
export function line(content: string, p: { sender?: string; at?: number; contentType?: string; metadata?: Record<string, unknown>; signals?: Partial<MessageSignals> } = {}): Line {
  return {
    line: { sender: p.sender ?? "bob", content, contentType: p.contentType ?? "text", timestamp: T + (p.at ?? 0), metadata: p.metadata ?? null },
    signals: { mentionsUs: false, noReplyExpected: false, ...p.signals },
  };
}

export interface ViewSpec {
  /** Our mention keywords; default `Alice` and `alice.agentcp.io`. */
  keywords?: string[];
  serviceAid?: string;
  /** Ids of our own recent messages. */
  ownIds?: string[];
  /** Senders seen lately: members for any opening. */
  members?: string[];
  /** Names from the member list only: members for a marked opening. */
  listed?: string[];
  settings?: { engagedWindowMs?: number; continuationMs?: number };
  lastSelfSpeakAt?: number;
  command?: PendingCommand;
  openLine?: { ts: number; spoken: string[] };
  lastSpeaker?: string;
  /** The group's last line (another member's) was to us. */
  lastLineToUs?: boolean;
  /** Whom our newest line was to (senders). */
  latestTo?: string[];
  /** Senders a line of ours addressed who have said nothing since; `asked`: that line asked them a question. */
  awaiting?: Array<{ sender: string; asked: boolean }>;
  /**
   * Engaged speakers: engaged until `until`; `directAt` their last direct exchange with us; `shared`
   * someone else addressed them; `contested` we addressed them last, then someone else did.
   */
  engaged?: Array<{ speaker: string; until: number; directAt?: number; shared?: boolean; contested?: boolean }>;
  /** Who spoke the group's last lines, oldest first (lower-cased; ours is `alice.agentcp.io`). */
  recentSpeakers?: string[];
  /** Whom each sender's last addressed line was for. */
  targets?: Record<string, SenderTarget>;
}

const AID = "alice.agentcp.io";

/** The conversation as `p` describes it; anything left out is absent (nobody engaged, no open line, …). */
export function viewOf(p: ViewSpec = {}): ConversationView {
  const keywords = p.keywords ?? ["Alice", AID];
  const selfKeys = new Set(keywords.map(nickKey).filter((k) => k.length >= 2));
  const memberKeySet = new Set((p.members ?? []).flatMap(memberKeys));
  const listed = new Set((p.listed ?? []).map(nickKey));
  let engaged: EngagedSpeakers | null = null;
  for (const e of p.engaged ?? []) {
    engaged ??= new EngagedSpeakers();
    engaged.engage(e.speaker, e.until, e.directAt ?? T - 3600 * S, e.contested === true, e.directAt !== undefined);
    if (e.shared || e.contested) engaged.share((s) => s === e.speaker.toLowerCase());
  }
  const own = new Set(p.ownIds ?? []);
  const matcher = compileMentionMatcher(keywords, "smart");
  const isMember = (key: string, marked: boolean): boolean => !selfKeys.has(key) && (memberKeySet.has(key) || (marked && listed.has(key)));
  return {
    serviceAid: p.serviceAid,
    aidLower: AID,
    nameVariants: keywords.some((k) => nickKey(k) !== k.toLowerCase()),
    matcher,
    namesUs: (l: AddressedLine) => matcher(l.content),
    own: { hasId: (id: string) => own.has(id), idCount: own.size },
    leadingAddress: (l: AddressedLine) => classifyLeadingAddress(l.content, selfKeys, isMember),
    secondAddress: (l: AddressedLine) => {
      const rest = afterFirstWord(l.content);
      return rest === null ? { to: "none" } : classifyLeadingAddress(rest, selfKeys, isMember);
    },
    settings: { engagedWindowMs: 900 * S, continuationMs: 30 * S, ...p.settings },
    lastSelfSpeakAt: p.lastSelfSpeakAt ?? null,
    command: p.command ?? null,
    openLine: p.openLine ? { ts: p.openLine.ts, spoken: new Set(p.openLine.spoken) } : null,
    lastSpeaker: p.lastSpeaker ?? null,
    lastLineToUs: p.lastLineToUs ?? false,
    latestLineTo: (sender: string) => (p.latestTo ?? []).some((s) => s.toLowerCase() === sender.toLowerCase()),
    awaitsAnswer: (sender: string) => {
      const a = (p.awaiting ?? []).find((w) => w.sender.toLowerCase() === sender.toLowerCase());
      return a !== undefined && (a.asked || (p.latestTo ?? []).some((s) => s.toLowerCase() === sender.toLowerCase()));
    },
    privateExchange: (sender: string) => {
      const recent = (p.recentSpeakers ?? []).slice(-PRIVATE_EXCHANGE_LINES);
      const them = sender.toLowerCase();
      // Theirs and ours alone, with a turn each way: a line of theirs before one of ours.
      return recent.length === PRIVATE_EXCHANGE_LINES && recent.every((r) => r === AID || r === them) && recent.indexOf(them) !== -1 && recent.lastIndexOf(AID) > recent.indexOf(them);
    },
    engaged,
    targetOf: (sender: string) => p.targets?.[sender],
  };
}
