// send_message on the group connection: the message checked before it goes out (its group, its
// content, its size), then sent once per attempt while the service answers 1010 (rate limited),
// waiting out the back-off or the service's `retry_after_ms`. Never retried on a timeout or a
// dropped session: the message may have been stored, and a double post is worse than a missed one.
import type { Logger } from "../types.ts";
import { computeBackoffDelay, type BackoffSettings } from "../util/backoff.ts";
import { messageBytes } from "../wire/limits.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import { isPlain, type Plain } from "../wire/plain.ts";
import { parseSendData } from "../wire/responses.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import type { ConnectionCounters } from "./connection.ts";
import { TransportError } from "./errors.ts";
import type { GroupFeed } from "./group-feed.ts";
import type { ResponseFrame } from "./pending-requests.ts";
import { requestFailed } from "./session-requests.ts";
import { wait } from "../util/wait.ts";

export interface SendMessageDeps {
  feeds: ReadonlyMap<string, GroupFeed>;
  maxMessageBytes: number;
  retry: BackoffSettings & { maxAttempts: number };
  random: () => number;
  counters: ConnectionCounters;
  log: Logger;
  /** Aborts a back-off wait when the connection closes. */
  closing: AbortSignal;
  /** Resolves once a session is up (or rejects with NOT_CONNECTED / CLOSED). */
  whenConnected(action: string, groupId: string): Promise<void>;
  /** One request on the current session, answered with any result code. */
  requestFrame(action: string, groupId: string, params: Plain): Promise<ResponseFrame>;
}

export async function sendGroupMessage(
  deps: SendMessageDeps,
  params: { groupId: string; content: string; metadata?: Record<string, unknown> },
): Promise<{ msgId: string; timestamp: number }> {
  const { groupId, content, metadata } = params;
  const feed = deps.feeds.get(groupId);
  if (!feed) {
    throw new TransportError("UNKNOWN_GROUP", `Expected \`groupId\` to be one of this connection's groups, got \`${groupId}\``, { groupId });
  }
  if (typeof content !== "string" || content === "") {
    throw new TransportError("INVALID_ARGUMENT", "Expected `content` to be a non-empty string", { groupId });
  }
  const bytes = messageBytes(content, metadata ?? null);
  if (bytes > deps.maxMessageBytes) {
    // Refused here with a code, not by the message service closing the socket on a huge frame.
    throw new TransportError("MESSAGE_TOO_LARGE", `message too large: ${bytes} bytes of content and metadata as JSON, at most ${deps.maxMessageBytes}`, {
      action: "send_message", groupId, bytes, limit: deps.maxMessageBytes,
    });
  }
  const body: Plain = { content, ...(metadata ? { metadata } : {}) };
  for (let attempt = 0; ; attempt++) {
    await deps.whenConnected("send_message", groupId);
    // No retry on timeout or a dropped session (see the header). NOT_CONNECTED means nothing
    // left: the caller may retry.
    const frame = await deps.requestFrame("send_message", groupId, body);
    if (frame.code === RESULT_CODES.OK) {
      const parsed = parseSendData(frame.data);
      if (!parsed.ok) {
        deps.counters.malformedFrames++;
        throw new TransportError("BAD_RESPONSE", `send_message response: ${parsed.reason}`, { action: "send_message", groupId });
      }
      feed.noteOwnSend(msgIdValue(parsed.msgId));
      return { msgId: parsed.msgId, timestamp: parsed.timestamp };
    }
    if (frame.code !== RESULT_CODES.RATE_LIMITED) throw requestFailed(frame, groupId);
    if (attempt + 1 >= deps.retry.maxAttempts) {
      throw new TransportError("RATE_LIMITED", `send_message still rate limited after ${attempt + 1} attempts`, {
        action: "send_message", groupId, resultCode: frame.code, attempts: attempt + 1,
      });
    }
    deps.counters.rateLimitedRetries++;
    const hint = isPlain(frame.data) && typeof frame.data.retry_after_ms === "number" ? frame.data.retry_after_ms : 0;
    const delayMs = Math.min(deps.retry.maxMs, Math.max(computeBackoffDelay(attempt, deps.retry, deps.random), hint));
    deps.log.log("info", "transport.send-rate-limited", { groupId, attempt: attempt + 1, delayMs });
    try {
      await wait(delayMs, deps.closing);
    } catch {
      throw new TransportError("CLOSED", "connection closed during a retry wait", { action: "send_message", groupId });
    }
  }
}
