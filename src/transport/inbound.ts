// Inbound frames from the group service, validated at the edge: a bad frame is counted, logged
// and dropped; nothing here can throw into the channel's event loop.
import type { Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import type { ConnectionCounters } from "./connection.ts";
import { TransportError } from "./errors.ts";
import type { GroupFeed } from "./group-feed.ts";
import type { GroupEvent, GroupEventFeed } from "./group-event-feed.ts";
import type { PendingRequests } from "./pending-requests.ts";
import { parseServerFrame, PUSH_ACTIONS, type ServerFrame } from "../wire/frames.ts";
import { parseWireMessage } from "../wire/message.ts";
import { msgIdsIn } from "../wire/msg-id.ts";
import { isPlain } from "../wire/plain.ts";

export interface InboundDeps {
  counters: ConnectionCounters;
  logger: Logger;
  maxFrameBytes: number;
  pending: PendingRequests;
  feeds: ReadonlyMap<string, GroupFeed>;
  /** The service's event log per group (`new_event`, `group_event`). */
  eventFeeds: ReadonlyMap<string, GroupEventFeed>;
  onEvent: ((groupId: string, event: GroupEvent) => void) | undefined;
}

/** One payload of the session with the group service (the `message` of a `session_message`). */
export function handleInboundFrame(deps: InboundDeps, text: string): void {
  deps.counters.framesIn++;
  // UTF-8 takes at most 3 bytes per UTF-16 unit: a frame that short is under the limit uncounted.
  const bytes = text.length * 3 <= deps.maxFrameBytes ? undefined : Buffer.byteLength(text, "utf8");
  if (bytes !== undefined && bytes > deps.maxFrameBytes) {
    deps.counters.oversizeFrames++;
    const requestId = requestIdOf(text);
    deps.logger.log("warn", "transport.frame-dropped", { reason: "oversize", bytes, limit: deps.maxFrameBytes, ...(requestId ? { requestId } : {}) });
    // The request it answers fails now (its feed retries with a smaller page), not at its timeout.
    const answered =
      requestId !== undefined &&
      deps.pending.reject(requestId, (action, groupId) =>
        new TransportError("RESPONSE_TOO_LARGE", `${action} response of ${bytes} bytes is over the ${deps.maxFrameBytes}-byte limit`, {
          action, ...(groupId ? { groupId } : {}), requestId, bytes, limit: deps.maxFrameBytes, msgIds: msgIdsIn(text),
        }),
      );
    // A push too large to read: whatever it carried is pulled instead.
    if (!answered) for (const feed of deps.feeds.values()) void feed.sync();
    return;
  }
  const parsed = parseServerFrame(text);
  if (!parsed.ok) {
    if (parsed.reason === "unknown-action") deps.counters.unknownActions++;
    else deps.counters.malformedFrames++;
    deps.logger.log("warn", "transport.frame-dropped", { reason: parsed.reason, detail: parsed.detail, bytes: bytes ?? Buffer.byteLength(text, "utf8"), preview: text.slice(0, 120) });
    if (parsed.requestId !== undefined) {
      deps.pending.reject(parsed.requestId, (action, groupId) =>
        new TransportError("BAD_RESPONSE", `${action} response: ${parsed.detail}`, { action, ...(groupId ? { groupId } : {}), requestId: parsed.requestId }),
      );
    }
    return;
  }
  let frame = parsed.frame;
  if (frame.kind === "response" && PUSH_ACTIONS.has(frame.action) && !deps.pending.has(frame.requestId)) {
    // As the SDK does: a pending request takes its answer; anything else goes to the push handlers.
    const again = parseServerFrame(text, { asPush: true });
    if (again.ok) frame = again.frame;
  }
  if (frame.kind === "response") {
    if (!deps.pending.resolve(frame)) {
      deps.counters.unmatchedResponses++;
      deps.logger.log("warn", "transport.frame-dropped", { reason: "unmatched-response", action: frame.action, requestId: frame.requestId });
    }
    if (frame.event !== undefined && frame.groupId) {
      handleNotify(deps, { kind: "notify", groupId: frame.groupId, event: frame.event, data: isPlain(frame.data) ? frame.data : {}, timestamp: undefined });
    }
    return;
  }
  if (frame.kind === "notify") {
    handleNotify(deps, frame);
    return;
  }
  const feed = feedFor(deps, frame.groupId);
  if (!feed) return;
  if (frame.invalid.length > 0) {
    deps.counters.malformedMessages += frame.invalid.length;
    deps.logger.log("warn", "transport.messages-dropped", { groupId: frame.groupId, via: frame.via, reasons: frame.invalid.slice(0, 5) });
  }
  if (frame.messages.length > 0 || frame.range) feed.push(frame.messages, frame.range);
}

function handleNotify(deps: InboundDeps, frame: Extract<ServerFrame, { kind: "notify" }>): void {
  const feed = feedFor(deps, frame.groupId);
  if (!feed) return;
  if (frame.event === "new_message") {
    const latest = frame.data.latest_msg_id;
    if (typeof latest === "number" && Number.isSafeInteger(latest)) feed.notifyLatest(latest);
    else {
      deps.counters.malformedFrames++;
      deps.logger.log("warn", "transport.frame-dropped", { reason: "bad-field", detail: "new_message without a numeric latest_msg_id", groupId: frame.groupId });
    }
    return;
  }
  if (frame.event === "new_event") {
    const latest = frame.data.latest_event_id;
    if (typeof latest === "number" && Number.isSafeInteger(latest)) deps.eventFeeds.get(frame.groupId)?.notifyLatest(latest);
    else {
      deps.counters.malformedFrames++;
      deps.logger.log("warn", "transport.frame-dropped", { reason: "bad-field", detail: "new_event without a numeric latest_event_id", groupId: frame.groupId });
    }
    return;
  }
  if (frame.event === "group_event") {
    deps.eventFeeds.get(frame.groupId)?.event(frame.data);
    return;
  }
  if (frame.event === "group_message") {
    // The SDK's own name for a single pushed message.
    const parsed = parseWireMessage(frame.groupId, frame.data);
    if (parsed.ok) feed.push([parsed.message]);
    else deps.counters.malformedMessages++;
    return;
  }
  try {
    deps.onEvent?.(frame.groupId, { event: frame.event, data: frame.data, timestamp: frame.timestamp });
  } catch (err) {
    deps.logger.log("error", "transport.event-handler-failed", { groupId: frame.groupId, event: frame.event, ...errorFields(err) });
  }
}

function feedFor(deps: InboundDeps, groupId: string): GroupFeed | undefined {
  const feed = deps.feeds.get(groupId);
  if (!feed) {
    deps.counters.unknownGroups++;
    deps.logger.log("debug", "transport.frame-dropped", { reason: "unknown-group", groupId });
  }
  return feed;
}

/** The request_id of a frame, read from its first 1 KiB without parsing it (responses put it first). */
export function requestIdOf(text: string): string | undefined {
  return /[{,]\s*"request_id"\s*:\s*"([^"\\]{1,200})"/.exec(text.slice(0, 1024))?.[1];
}
