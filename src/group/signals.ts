// Optional signals a message may carry in its metadata, as the ACP group design proposes:
// `group_meta { msg_type, reply_to, mentions, reaction, flags { no_reply_expected } }` (or a
// bare `mentions` list). None is required; when present they are more precise than anything we
// infer from the text. Pure and cheap: most messages carry no metadata and return at once.

export interface MessageSignals {
  /** The metadata lists our aid among its mentions. */
  mentionsUs: boolean;
  /** The sender flagged the message as expecting no reply. */
  noReplyExpected: boolean;
  /** `msg_type: "reaction"`: the reaction (emoji or word) and the message it reacts to. */
  reaction?: { reaction: string; replyTo?: string };
  /** `group_meta.reply_to`, when set. */
  replyTo?: string;
}

/** Why a message rides along in a batch but is never the reason for one. */
export type PassiveKind = "reaction" | "no-reply-expected";

const NONE: MessageSignals = Object.freeze({ mentionsUs: false, noReplyExpected: false });

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function idString(v: unknown): string | undefined {
  if (typeof v === "string") return v.length > 0 ? v : undefined;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
}

/** Mentions as aids: strings, or objects with `aid` / `agent_id` / `id`. */
function listsAid(mentions: unknown, aidLower: string): boolean {
  if (!Array.isArray(mentions)) return false;
  for (const m of mentions) {
    const aid = typeof m === "string" ? m : isRecord(m) ? (m["aid"] ?? m["agent_id"] ?? m["id"]) : undefined;
    if (typeof aid === "string" && aid.trim().toLowerCase() === aidLower) return true;
  }
  return false;
}

/** The signals of one message for the identity `selfAid`. */
export function readMessageSignals(metadata: Readonly<Record<string, unknown>> | null, selfAid: string, content = ""): MessageSignals {
  if (metadata === null) return NONE;
  const meta = isRecord(metadata["group_meta"]) ? metadata["group_meta"] : undefined;
  const bare = metadata["mentions"];
  if (meta === undefined && bare === undefined) return NONE;
  const aidLower = selfAid.toLowerCase();
  const out: MessageSignals = {
    mentionsUs: listsAid(meta?.["mentions"], aidLower) || listsAid(bare, aidLower),
    noReplyExpected: isRecord(meta?.["flags"]) && meta["flags"]["no_reply_expected"] === true,
  };
  const replyTo = idString(meta?.["reply_to"]);
  if (replyTo !== undefined) out.replyTo = replyTo;
  if (meta?.["msg_type"] === "reaction") {
    const r = meta["reaction"];
    const reaction = typeof r === "string" && r.trim() ? r.trim() : content.trim();
    out.reaction = replyTo !== undefined ? { reaction, replyTo } : { reaction };
  }
  return out;
}

/**
 * A reaction is group activity, not text to answer; a message flagged no-reply-expected may be
 * read with the rest but must not start a dispatch. Both are never mentions.
 */
export function passiveKindOf(s: MessageSignals): PassiveKind | undefined {
  if (s.reaction) return "reaction";
  if (s.noReplyExpected) return "no-reply-expected";
  return undefined;
}

/**
 * The metadata of a reply we send. With `reactions` on (the group service supports them) a
 * reply of type `reaction` that answers a message goes out as a reaction to it; otherwise a
 * plain message, with `reply_to` when it answers one.
 */
export function buildReplyMetadata(p: {
  replyType: string;
  text: string;
  replyTo: string | undefined;
  reactions: boolean;
}): Record<string, unknown> | undefined {
  if (p.reactions && p.replyType === "reaction" && p.replyTo !== undefined) {
    return { reply_to: p.replyTo, group_meta: { msg_type: "reaction", reply_to: p.replyTo, reaction: p.text } };
  }
  return p.replyTo !== undefined ? { reply_to: p.replyTo } : undefined;
}
