// What a reply answers and how it says so: `reply_to` the newest mention (or engaged follow-up), a
// reaction to the message it reacts to, and `answered_through` — the newest msg id of the batch
// it answers, which a restart that lost our state must not answer again.
import { ANSWERED_THROUGH_KEY, answeredThroughFor } from "../group/answered.ts";
import { buildReplyMetadata } from "../group/signals.ts";
import type { InboundMessage, ReplyType } from "../types.ts";

export function addressReply(p: {
  /** The batch's messages from other members, oldest first. */
  others: readonly InboundMessage[];
  mentioned: boolean;
  replyType: ReplyType;
  text: string;
  /** The group service takes reaction messages. */
  reactions: boolean;
  /** The open question this reply took the floor for (src/monitor/floor.ts): its visible claim. */
  claim?: string;
}): { replyTo: string | undefined; metadata: Record<string, unknown> | undefined } {
  // With reactions on, a reaction answers the message it reacts to even in unaddressed talk.
  // A claimed open question comes before an engaged line: the claim is what the room's other
  // agents look for in `reply_to` to yield (they cannot see our engaged line is answered too).
  const replyTo =
    (p.mentioned ? undefined : p.claim) ?? replyTarget(p.others, p.mentioned) ?? (p.reactions && p.replyType === "reaction" ? lastAnswerable(p.others) : undefined);
  const metadata = buildReplyMetadata({ replyType: p.replyType, text: p.text, replyTo, reactions: p.reactions });
  const through = answeredThroughFor(p.others);
  return { replyTo, metadata: through === undefined ? metadata : { ...metadata, [ANSWERED_THROUGH_KEY]: through } };
}

/** Our reply answers the newest mention (or engaged follow-up), so others can see it is a reply. */
function replyTarget(messages: readonly InboundMessage[], mentioned: boolean): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (mentioned ? m.isMention : m.engaged) return m.msgId;
  }
  return undefined;
}

/** The newest message that is not itself passive (a reaction or no-reply-expected), if any. */
function lastAnswerable(messages: readonly InboundMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.passive === undefined) return messages[i]!.msgId;
  return undefined;
}
