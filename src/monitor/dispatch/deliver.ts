// The last step: the reply is addressed (reply_to, or a reaction's target) and sent, once. A send
// that went out comes back as a `sent` outcome — the group client records it in the group's
// memory. One that never left, or may have, comes back as a `retry` outcome carrying the reply:
// the batch's retry delivers this same reply, after looking for its echo when it may be stored.
import { errorFields } from "../../log.ts";
import type { GroupMemoryView, GroupSender, SentOutcome, UnsentReply } from "../../types.ts";
import { nextAgentChain } from "../loop-guard.ts";
import { addressReply } from "../reply-address.ts";
import type { Unique } from "./reply.ts";
import type { DispatchRun, Ended } from "./run.ts";

/** The reply as it will be sent (and carried with a retry): its address, its dedup key, the batch it answers. */
export function prepareReply(run: DispatchRun, reply: Unique, p: { hasHuman: boolean; ratio: number; claim: string | undefined }): UnsentReply {
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
    key: { hash: dup.hash, normalized: dup.normalized },
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
 * Sends a prepared reply. Sent: the outcome the group client records (and the agent chain moves
 * on). Not surely sent: a retry outcome carrying the reply, or a skip when the group closed or the
 * server refused it.
 */
export async function deliver(run: DispatchRun, r: UnsentReply, notHandled?: readonly string[]): Promise<Ended> {
  const { m, batch, record } = run;
  const sent = await sendOnce({ reply: r, groupId: m.groupId, sender: m.sender, memory: run.group.memory });
  if (!sent.ok) {
    // Logged with its context, never posted: the group sees nothing of our failures.
    m.log.log("warn", "monitor.send-failed", { dispatchId: batch.dispatchId, replyType: r.replyType, chars: r.text.length, kind: sent.kind, ...errorFields(sent.error) });
    // Closed while the reply waited (for a session, or an answer): nothing surely reached the
    // group, so the batch stays unsettled and the next run answers it. A copy the server did
    // store comes back in the history with `answered_through` and settles the batch there.
    if (m.lifetime.aborted) return run.skip({ skip: "group-closed", detail: `send-${sent.kind}` });
    if (sent.kind === "failed") return run.skip({ skip: "send-failed" });
    const reply = { ...r, maybeSent: r.maybeSent || sent.kind === "maybe-sent" };
    return run.finish({ kind: "retry", reason: "send-failed", error: sent.error, carry: { reply }, budgetRatio: r.ratio, replyType: r.replyType }, `retry-with-batch:${sent.kind}`);
  }
  if (sent.via !== "send") record.detail = `delivered-before:${sent.via}`;
  const sentAt = Number.isFinite(sent.timestamp) && sent.timestamp > 0 ? sent.timestamp : run.nowAt();
  m.state.setAgentChain(nextAgentChain(m.state.agentChain, r.hasHuman));
  // Answered by us: never taken again as an orphaned question (the claim, or the whole batch).
  m.state.noteAnswered(r.claim !== undefined ? [r.claim] : r.ids);
  m.state.noteRoomLines([{ ts: sentAt, agent: true }]);
  m.emitState();
  const outcome: SentOutcome = { kind: "sent", replyType: r.replyType, text: r.text, budgetRatio: r.ratio, msgId: sent.msgId, sentAt, key: r.key, ...(r.replyTo ? { replyTo: r.replyTo } : {}), ...(notHandled?.length ? { notHandled } : {}) };
  return run.finish(outcome, record.detail);
}

export type SendResult =
  /** `via`: sent now, or found already delivered (our echo came back, or the server's history holds it). */
  | { ok: true; msgId: string; timestamp: number; via: "send" | "echo" | "history" }
  | { ok: false; kind: "not-sent" | "maybe-sent" | "failed"; error: unknown };

/**
 * What a failed send means. `not-sent`: it never left (no connection) — retry it with the batch.
 * `maybe-sent`: the connection dropped or the server did not answer in time, so the server may
 * have stored it — before sending again, look for its echo. `failed`: refused; give it up.
 */
export function classifySendError(err: unknown): "not-sent" | "maybe-sent" | "failed" {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "NOT_CONNECTED") return "not-sent";
  if (code === "CONNECTION_LOST" || code === "REQUEST_TIMEOUT") return "maybe-sent";
  return "failed";
}

/**
 * Sends a prepared reply once: after a send that may have reached the server, our own echo is
 * looked for first (in the group's memory), then the server's history (when the sender can read
 * it); found means sent, and history that cannot be read means not now (the batch is retried).
 * Never throws; a failure comes back classified.
 */
export async function sendOnce(p: { reply: UnsentReply; groupId: string; sender: GroupSender; memory: Pick<GroupMemoryView, "findEcho"> }): Promise<SendResult> {
  const r = p.reply;
  if (r.maybeSent) {
    const echo = p.memory.findEcho(r.text, r.since);
    if (echo) return { ok: true, msgId: echo.msgId, timestamp: echo.timestamp, via: "echo" };
    if (p.sender.findSent && r.afterMsgId !== undefined) {
      try {
        const stored = await p.sender.findSent({ groupId: p.groupId, content: r.text, afterMsgId: r.afterMsgId });
        if (stored) return { ok: true, msgId: stored.msgId, timestamp: stored.timestamp, via: "history" };
      } catch (error) {
        // Cannot tell whether it was stored: sending now could post it twice. Still maybe-sent.
        return { ok: false, kind: "maybe-sent", error };
      }
    }
  }
  try {
    const sent = await p.sender.sendMessage({ groupId: p.groupId, content: r.text, ...(r.metadata ? { metadata: r.metadata } : {}) });
    return { ok: true, msgId: sent.msgId, timestamp: sent.timestamp, via: "send" };
  } catch (error) {
    return { ok: false, kind: classifySendError(error), error };
  }
}
