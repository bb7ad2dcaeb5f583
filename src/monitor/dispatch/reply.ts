// The reply between the model and the send: shaped to its type (trimmed, cleaned, read again for
// a silence), and checked against what was said lately — our own recent replies before the send
// delay, other members' lines after it. A duplicate becomes a reaction or is skipped, in one place.
import type { InboundMessage, ReplyType, SkipReason } from "../../types.ts";
import { checkDuplicate, checkOthersDuplicate, type DuplicateCheck } from "../dedup.ts";
import { hasNoReplyToken, parseIntent } from "../intent.ts";
import { cleanOutboundText } from "../outbound.ts";
import { toReaction, trimReply } from "../reply-policy.ts";
import { fitMessageLimit } from "../group-layer.ts";
import type { Written } from "./model.ts";
import type { DispatchRun, Step } from "./run.ts";

/** A reply on its way out: its text and type. */
export interface Shaped {
  readonly text: string;
  readonly replyType: ReplyType;
}

/** A reply none of our recent replies repeats, with the hash it is remembered by once sent. */
export interface Unique extends Shaped {
  readonly dup: Extract<DuplicateCheck, { duplicate: false }>;
}

/**
 * Trimmed to its reply type (and to what the group accepts) and cleaned like inbound text; a token
 * the trimming joined may still make it a silence.
 */
export function shape(run: DispatchRun, written: Written): Step<Shaped> {
  // Outbound gets the inbound cleaning: no escape sequences, controls, bidi overrides or lone surrogates.
  const policy = run.m.settings.replyPolicy;
  let text = fitMessageLimit(trimReply(cleanOutboundText(written.text), written.replyType, policy), run.m.maxMessageUnits, policy.tailMark);
  // Markdown stripping can join a token the model split ("NO_**REPLY**"): read the intent again.
  if (hasNoReplyToken(text)) {
    const again = parseIntent(text);
    if (!again.reply) return { skip: "silent", detail: again.reason };
    text = again.text;
  }
  if (text === "") return { skip: "empty-after-trim" };
  return { text, replyType: written.replyType };
}

/** Weak dedup against our own recent replies (same hash, or near-duplicate). */
export function dedupOwn(run: DispatchRun, reply: Shaped): Step<Unique> {
  const dup = checkOwn(run, reply.text);
  if (!dup.duplicate) return { ...reply, dup };
  return downgradeToReaction(run, reply, "duplicate-of-recent-reply", describe(dup), describe);
}

/** After the send delay: someone else may have said it meanwhile (another agent answering the same question). */
export function dedupOthers(run: DispatchRun, reply: Unique, recentBefore: readonly InboundMessage[]): Step<Unique> {
  const { m } = run;
  const size = m.settings.dedup.othersHistorySize;
  const recent = size === 0 ? [] : run.seenAround(recentBefore).slice(-size);
  const said = checkOthersDuplicate({ text: reply.text, recent, threshold: m.settings.dedup.similarityThreshold, selfAid: m.identity.aid });
  if (!said.duplicate) return reply;
  return downgradeToReaction(run, reply, "duplicate-of-other-member", `said-by:${said.sender}:${said.reason}:${said.similarity.toFixed(2)}`);
}

/**
 * A duplicate reply becomes a reaction (`dedup.action: "reaction"`) unless it is one already, or
 * is skipped for `reason`. The reaction must itself be new to our recent replies: if it is not,
 * the skip's detail is `describeRecheck` of that match when given, else `detail`.
 */
function downgradeToReaction(
  run: DispatchRun,
  reply: Shaped,
  reason: SkipReason,
  detail: string,
  describeRecheck?: (dup: Extract<DuplicateCheck, { duplicate: true }>) => string,
): Step<Unique> {
  const { m, record } = run;
  if (m.settings.dedup.action === "skip" || reply.replyType === "reaction") return { skip: reason, detail };
  record.replyType = "reaction";
  record.detail = `downgraded:${detail}`;
  const text = toReaction(reply.text, m.settings.replyPolicy.maxReactionChars);
  if (text === "") return { skip: reason, detail };
  const dup = checkOwn(run, text);
  if (dup.duplicate) return { skip: reason, detail: describeRecheck ? describeRecheck(dup) : detail };
  return { text, replyType: "reaction", dup };
}

function checkOwn(run: DispatchRun, text: string): DuplicateCheck {
  return checkDuplicate({ text, memory: run.group.memory.replies, threshold: run.m.settings.dedup.similarityThreshold });
}

function describe(dup: Extract<DuplicateCheck, { duplicate: true }>): string {
  return `${dup.reason}:${dup.similarity.toFixed(2)}`;
}
