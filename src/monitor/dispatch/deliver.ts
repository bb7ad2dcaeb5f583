// The last step: the reply is addressed (reply_to, or a reaction's target), sent, and recorded —
// last speak time, reply memory, agent chain, our recent replies. A send that never left, or may
// have, is kept and the batch thrown back for a retry, which delivers this same reply.
import { errorFields } from "../../log.ts";
import type { DispatchOutcome } from "../../types.ts";
import { rememberReply } from "../dedup.ts";
import { nextAgentChain } from "../loop-guard.ts";
import { addressReply } from "../reply-address.ts";
import { ReplyNotDeliveredError, sendPrepared, type PreparedReply } from "../send-gates.ts";
import type { Unique } from "./reply.ts";
import type { DispatchRun } from "./run.ts";

/** The reply as it will be sent (and kept for a retry): its address, its dedup hash, the batch it answers. */
export function prepareReply(run: DispatchRun, reply: Unique, p: { hasHuman: boolean; ratio: number; claim: string | undefined }): PreparedReply {
  const { m, batch } = run;
  const { text, replyType, dup } = reply;
  const claim = p.claim;
  const { replyTo, metadata } = addressReply({ others: run.others, mentioned: batch.mentionInfo.mentioned, replyType, text, reactions: m.sender.reactions === true, ...(claim ? { claim } : {}) });
  return {
    ids: run.batchIds,
    text,
    replyType,
    replyTo,
    metadata,
    hash: dup.hash,
    normalized: dup.normalized,
    hasHuman: p.hasHuman,
    ratio: p.ratio,
    maybeSent: false,
    // A minute of slack for clock estimates: our dedup never lets the same text out twice that close.
    since: run.nowAt() - 60_000,
    afterMsgId: batch.newestMsgId,
    writtenBy: batch.dispatchId,
    ...(claim ? { claim } : {}),
  };
}

/**
 * Sends a prepared reply and records it. A send that never left (no connection) or may have
 * (connection lost, no answer in time) is kept and the batch thrown back for a retry; before
 * sending again after the latter, our own echo is looked for, so it never goes out twice.
 */
export async function deliver(run: DispatchRun, r: PreparedReply, notHandled?: readonly string[]): Promise<DispatchOutcome> {
  const { m, batch, record } = run;
  const { state } = m;
  const sent = await sendPrepared({ reply: r, groupId: m.groupId, sender: m.sender, findOwnEcho: batch.findOwnEcho });
  if (!sent.ok) {
    // Logged with its context, never posted: the group sees nothing of our failures.
    m.log.log("warn", "monitor.send-failed", { dispatchId: batch.dispatchId, replyType: r.replyType, chars: r.text.length, kind: sent.kind, ...errorFields(sent.error) });
    // Closed while the reply waited (for a session, or an answer): nothing surely reached the
    // group, so the batch stays unsettled and the next run answers it. A copy the server did
    // store comes back in the history with `answered_through` and settles the batch there.
    if (m.lifetime.aborted) return run.skip({ skip: "group-closed", detail: `send-${sent.kind}` });
    if (sent.kind === "failed") return run.skip({ skip: "send-failed" });
    state.unsent = { ...r, maybeSent: r.maybeSent || sent.kind === "maybe-sent" };
    run.finish({ sent: false, skipReason: "send-failed", budgetRatio: r.ratio, replyType: r.replyType }, `retry-with-batch:${sent.kind}`);
    throw new ReplyNotDeliveredError({ groupId: m.groupId, dispatchId: batch.dispatchId, sendError: String((sent.error as { code?: unknown })?.code ?? "unknown") });
  }
  if (sent.via !== "send") record.detail = `delivered-before:${sent.via}`;
  const sentAt = Number.isFinite(sent.timestamp) && sent.timestamp > 0 ? sent.timestamp : run.nowAt();
  state.lastSelfSpeakAt = Math.max(state.lastSelfSpeakAt ?? 0, sentAt);
  state.memory = rememberReply(state.memory, r.hash, r.normalized, m.settings.dedup.historySize);
  state.agentChain = nextAgentChain(state.agentChain, r.hasHuman);
  // The echo may have been remembered already (it can arrive before the send's answer).
  state.ownReplies = [...state.ownReplies.filter((o) => o.msgId !== sent.msgId), { timestamp: sentAt, text: r.text, msgId: sent.msgId }].slice(-m.settings.dedup.historySize);
  m.emitState();
  return run.finish(
    { sent: true, replyType: r.replyType, text: r.text, budgetRatio: r.ratio, sentMsgId: sent.msgId, sentAt, ...(r.replyTo ? { replyTo: r.replyTo } : {}), ...(notHandled?.length ? { notHandled } : {}) },
    record.detail,
  );
}
