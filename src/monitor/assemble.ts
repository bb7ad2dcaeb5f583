// Everything the model would receive for one dispatch, built without calling it — the monitor
// uses this for every call, and `inspect`/`replay` use it to show the exact bytes.
import { MemberDirectory, senderTypes, type MemberTypes } from "../members/member-types.ts";
import type { ConversationRef, DispatchBatch, GroupSettings, OwnReply, ReplyType } from "../types.ts";
import { buildAcpSystemPrompt, buildGroupSituationPrompt, formatMessages, type PromptIdentity } from "./prompt.ts";
import { buildDirectSituationPrompt } from "./direct-prompt.ts";
import { isGroupEvent } from "./format-common.ts";
import { knownNames, type KnownNames } from "./known-names.ts";
import { decideDirectReplyType, decideReplyType, type ReplyTypeReason } from "./reply-policy.ts";

export interface PromptParts {
  /** stablePrefix + "\n\n" + situation. */
  systemPrompt: string;
  /** The ACP prompt (and the group layer): byte-identical for every dispatch of the identity in the group while the group's profile is unchanged. */
  stablePrefix: string;
  situation: string;
  body: string;
  replyType: ReplyType;
  /** Why this reply type; "given" when the caller fixed it (two-phase reply call). */
  replyTypeReason: ReplyTypeReason | "given";
  budgetRatio: number;
}

/** Own replies older than this before the batch's first message are left out of the XML timeline. */
export const OWN_REPLY_LOOKBACK_MS = 5 * 60_000;

export interface AssembleParams {
  identity: PromptIdentity;
  settings: GroupSettings;
  batch: Pick<DispatchBatch, "messages" | "vitality" | "mentionInfo" | "now">;
  /** Seed §6.5 default 0. */
  budgetRatio?: number;
  /** Our last message here (server time; the group's memory), or null if we never spoke. */
  lastSelfSpeakAt?: number | null;
  /** Our recent replies, for the XML timeline. */
  ownReplies?: readonly OwnReply[];
  /** Fix the reply type instead of deciding it (two-phase reply call). */
  replyType?: ReplyType;
  /**
   * Pass a cached prefix to skip rebuilding it: buildAcpSystemPrompt(identity), followed by the
   * group layer when the group service gave one (group-layer.ts withGroupLayer).
   */
  stablePrefix?: string;
  timeZone?: string;
  /** Member types for `[Senders]`. Default: the identity's owner is known, everyone else is "type unknown". */
  memberTypes?: MemberTypes;
  /** A direct conversation gets its own situation block (no vitality, no mentions); absent: a group. */
  conversation?: ConversationRef | undefined;
}

export function assembleDispatchPrompt(p: AssembleParams): PromptParts {
  if (p.conversation?.kind === "direct") return assembleDirectPrompt(p, p.conversation.peer);
  const { settings, batch } = p;
  const budgetRatio = p.budgetRatio ?? 0;
  const decided = p.replyType
    ? { replyType: p.replyType, reason: "given" as const }
    : decideReplyType({
        vitality: batch.vitality.state,
        budgetRatio,
        mentioned: batch.mentionInfo.mentioned,
        trigger: batch.mentionInfo.triggerType,
        allowLong: settings.replyPolicy.allowLong,
      });
  const stablePrefix = p.stablePrefix ?? buildAcpSystemPrompt(p.identity);
  const memberTypes = p.memberTypes ?? new MemberDirectory({ owner: p.identity.owner });
  // Whom a sender must not pass for: ourselves, our owner and every member our config names; the
  // people the group service names; and, among the batch's other speakers, the plainest name.
  const known = knownNames({ self: [p.identity.aid, p.identity.owner], names: memberTypes.lookalikeNames?.() }).forSpeakers(
    speakersOf(batch.messages, p.identity.aid),
  );
  const situation = buildGroupSituationPrompt(
    {
      vitality: batch.vitality,
      now: batch.now,
      lastSelfSpeakAt: p.lastSelfSpeakAt ?? null,
      budgetRatio,
      replyType: decided.replyType,
      maxChars: settings.replyPolicy.maxCharsPerMessage,
      noMarkdown: settings.replyPolicy.noMarkdown,
      senders: senderTypes(batch.messages, p.identity.aid, memberTypes, (m) => !isGroupEvent(m, p.identity.aid, settings.accessPoint)),
      knownNames: known,
    },
    batch.mentionInfo,
  );
  const firstTs = batch.messages[0]?.timestamp ?? batch.now;
  const body = formatMessages(batch.messages, {
    format: settings.contextFormat,
    selfAid: p.identity.aid,
    accessPoint: settings.accessPoint,
    maxInboundChars: settings.maxInboundChars,
    gapThresholdMs: settings.gapThresholdMs,
    ownReplies: (p.ownReplies ?? []).filter((r) => r.timestamp >= firstTs - OWN_REPLY_LOOKBACK_MS),
    subject: settings.subject,
    timeZone: p.timeZone,
    knownNames: known,
  });
  return {
    systemPrompt: `${stablePrefix}\n\n${situation}`,
    stablePrefix,
    situation,
    body,
    replyType: decided.replyType,
    replyTypeReason: decided.reason,
    budgetRatio,
  };
}

/**
 * A direct conversation's prompt: the same stable prefix, the direct situation, and the messages
 * without their `[mentioned]` marks (every line of a direct conversation is to us).
 */
function assembleDirectPrompt(p: AssembleParams, peer: string): PromptParts {
  const { settings, batch } = p;
  const budgetRatio = p.budgetRatio ?? 0;
  const decided = p.replyType ? { replyType: p.replyType, reason: "given" as const } : decideDirectReplyType({ budgetRatio, allowLong: settings.replyPolicy.allowLong });
  const stablePrefix = p.stablePrefix ?? buildAcpSystemPrompt(p.identity);
  const memberTypes = p.memberTypes ?? new MemberDirectory({ owner: p.identity.owner });
  // One speaker: who they must not pass for (ourselves, our owner, the members our config and the service name).
  const known: KnownNames = knownNames({ self: [p.identity.aid, p.identity.owner], names: memberTypes.lookalikeNames?.() });
  const situation = buildDirectSituationPrompt({
    peer,
    peerType: memberTypes.typeOf(peer),
    now: batch.now,
    lastSelfSpeakAt: p.lastSelfSpeakAt ?? null,
    budgetRatio,
    replyType: decided.replyType,
    maxChars: settings.replyPolicy.maxCharsPerMessage,
    noMarkdown: settings.replyPolicy.noMarkdown,
    knownNames: known,
  });
  const body = formatMessages(
    batch.messages.map((m) => ({ ...m, isMention: false, engaged: false })),
    { format: "lines", selfAid: p.identity.aid, accessPoint: undefined, maxInboundChars: settings.maxInboundChars, gapThresholdMs: settings.gapThresholdMs, ownReplies: [], subject: undefined, timeZone: p.timeZone, knownNames: known },
  );
  return { systemPrompt: `${stablePrefix}\n\n${situation}`, stablePrefix, situation, body, replyType: decided.replyType, replyTypeReason: decided.reason, budgetRatio };
}

/** The batch's senders other than ourselves, oldest first. */
function* speakersOf(messages: readonly { sender: string }[], selfAid: string): Generator<string> {
  for (const m of messages) if (m.sender !== selfAid) yield m.sender;
}
