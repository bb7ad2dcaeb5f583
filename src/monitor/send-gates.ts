// The last gates before a reply leaves: has another member just said it, and what a failed send
// means for the batch. Pure; the monitor wires them to the transport and the group client.
import type { GroupSender, InboundMessage, ReplyType } from "../types.ts";
import { hashNormalized, normalizeForDedup, shingleSimilarity } from "./dedup.ts";

export type OthersDuplicate =
  | { duplicate: false }
  | { duplicate: true; reason: "same-hash" | "near-duplicate"; similarity: number; sender: string; msgId: string };

/**
 * Compares a reply with what other members said lately — the same normalised hash and bigram
 * similarity as our own dedup. An answer another agent already gave is not repeated.
 */
export function checkOthersDuplicate(p: { text: string; recent: readonly InboundMessage[]; threshold: number; selfAid: string }): OthersDuplicate {
  if (p.recent.length === 0) return { duplicate: false };
  const normalized = normalizeForDedup(p.text);
  const hash = hashNormalized(normalized);
  const self = p.selfAid.toLowerCase();
  let best: OthersDuplicate = { duplicate: false };
  for (let i = p.recent.length - 1; i >= 0; i--) {
    const m = p.recent[i]!;
    if (m.sender.toLowerCase() === self) continue;
    const other = normalizeForDedup(m.content);
    if (hashNormalized(other) === hash) return { duplicate: true, reason: "same-hash", similarity: 1, sender: m.sender, msgId: m.msgId };
    const similarity = shingleSimilarity(normalized, other);
    if (similarity >= p.threshold && (!best.duplicate || similarity > best.similarity)) {
      best = { duplicate: true, reason: "near-duplicate", similarity, sender: m.sender, msgId: m.msgId };
    }
  }
  return best;
}

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

/** Thrown to the group client so it re-queues the batch; the prepared reply waits in the monitor. */
export class ReplyNotDeliveredError extends Error {
  readonly code = "REPLY_NOT_DELIVERED";
  readonly retryable = true;
  readonly context: { groupId: string; dispatchId: number; sendError: string };
  constructor(context: { groupId: string; dispatchId: number; sendError: string }) {
    super(`reply of dispatch ${context.dispatchId} not delivered (${context.sendError}); retried with the batch`);
    this.name = "ReplyNotDeliveredError";
    this.context = context;
  }
}

/** A reply ready to go out, kept across a retry when its send did not (surely) get through. */
export interface PreparedReply {
  /** The batch it answers. */
  ids: ReadonlySet<string>;
  text: string;
  replyType: ReplyType;
  replyTo: string | undefined;
  /** What the reply carries: `reply_to`, or a reaction's `group_meta` (see buildReplyMetadata). */
  metadata: Record<string, unknown> | undefined;
  hash: string;
  normalized: string;
  hasHuman: boolean;
  ratio: number;
  /** The last send may have reached the server: look for its echo first. */
  maybeSent: boolean;
  /** Server time before the first send attempt: an echo is no older. */
  since: number;
  /** Newest msg id known before the first send attempt: a stored copy has a higher id. */
  afterMsgId: number | undefined;
  /** The dispatch whose model call wrote it (a retry delivers it under another dispatch id). */
  writtenBy: number;
  /** The open question the reply took the floor for (src/monitor/floor.ts), if any. */
  claim?: string;
}

export type SendResult =
  /** `via`: sent now, or found already delivered (our echo came back, or the server's history holds it). */
  | { ok: true; msgId: string; timestamp: number; via: "send" | "echo" | "history" }
  | { ok: false; kind: "not-sent" | "maybe-sent" | "failed"; error: unknown };

/**
 * Sends a prepared reply once: after a send that may have reached the server, our own echo is
 * looked for first, then the server's history (when the sender can read it); found means sent,
 * and history that cannot be read means not now (the batch is retried). Never throws; a failure
 * comes back classified.
 */
export async function sendPrepared(p: {
  reply: PreparedReply;
  groupId: string;
  sender: GroupSender;
  findOwnEcho?: ((content: string, since: number) => { msgId: string; timestamp: number } | undefined) | undefined;
}): Promise<SendResult> {
  const r = p.reply;
  if (r.maybeSent) {
    const echo = p.findOwnEcho?.(r.text, r.since);
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
