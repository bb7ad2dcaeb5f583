// The group frames of the ACP group protocol: requests, responses, notifications and message
// pushes, and the edge parser for what the service sends. Never throws on what the wire brings.
import type { GroupMessage } from "../types.ts";
import { parseWireMessage, type WireMessage } from "./message.ts";
import { isMsgIdNumber } from "./msg-id.ts";
import { describe, isPlain, type Plain } from "./plain.ts";

export interface WireRequest {
  action: string;
  request_id: string;
  group_id?: string;
  params?: Record<string, unknown> | null;
}

export interface WireResponse {
  action: string;
  request_id: string;
  code: number;
  group_id?: string;
  data: unknown;
  error: string;
}

export interface WireNotify {
  action: "group_notify";
  group_id: string;
  event: string;
  data: Record<string, unknown>;
  timestamp: number;
}

export interface WireMessagePush {
  action: "message_push";
  group_id: string;
  data: WireMessage;
}

export interface WireBatchPush {
  action: "message_batch_push";
  group_id: string;
  data: { messages: WireMessage[]; start_msg_id: number; latest_msg_id: number; count: number };
}

/** A server → client frame after edge validation. */
export type ServerFrame =
  | {
      kind: "response";
      action: string;
      requestId: string;
      code: number;
      groupId: string | undefined;
      data: unknown;
      error: string;
      /** A response may double as a notification (SDK behaviour). */
      event: string | undefined;
    }
  | { kind: "notify"; groupId: string; event: string; data: Plain; timestamp: number | undefined }
  | {
      kind: "messages";
      via: "message_push" | "message_batch_push";
      groupId: string;
      messages: GroupMessage[];
      /** Messages inside a batch that failed validation and were dropped. */
      invalid: string[];
      /** What a `message_batch_push` says it covers: used to notice messages it did not carry. */
      range?: BatchRange;
    };

/** `start_msg_id` / `count` / `latest_msg_id` of a batch push, when present and numeric. */
export interface BatchRange {
  startMsgId: number | undefined;
  count: number | undefined;
  latestMsgId: number | undefined;
}

export type FrameRejectReason = "not-json" | "not-object" | "bad-field" | "unknown-action";

export type ParsedFrame =
  | { ok: true; frame: ServerFrame }
  | { ok: false; reason: FrameRejectReason; detail: string; requestId?: string };

const bad = (detail: string, requestId?: string): ParsedFrame => ({
  ok: false,
  reason: "bad-field",
  detail,
  ...(requestId !== undefined ? { requestId } : {}),
});

/** Actions a service pushes unasked: one carrying a request_id that answers nothing of ours is still this. */
export const PUSH_ACTIONS: ReadonlySet<string> = new Set(["message_push", "message_batch_push", "group_notify"]);

/**
 * Parses one text frame from the group service. Never throws. `asPush`: read a frame that carries
 * a request_id as a push (it answered none of our requests, and its action is a push action).
 */
export function parseServerFrame(text: string, opts: { asPush?: boolean } = {}): ParsedFrame {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: "not-json", detail: "frame is not JSON" };
  }
  if (!isPlain(raw)) return { ok: false, reason: "not-object", detail: `expected a JSON object, got ${describe(raw)}` };
  const requestId = typeof raw.request_id === "string" && raw.request_id !== "" ? raw.request_id : undefined;
  if (typeof raw.action !== "string") return bad(`action: expected a string, got ${describe(raw.action)}`, requestId);
  const groupId = raw.group_id;
  if (groupId !== undefined && groupId !== null && typeof groupId !== "string") {
    return bad(`group_id: expected a string, got ${describe(groupId)}`, requestId);
  }
  const event = typeof raw.event === "string" && raw.event !== "" ? raw.event : undefined;

  // A push action with a request_id but no result code is a push (a real service may tag pushes).
  const pushWithId = requestId !== undefined && PUSH_ACTIONS.has(raw.action) && (opts.asPush === true || typeof raw.code !== "number");
  if (requestId !== undefined && !pushWithId) {
    if (typeof raw.code !== "number" || !Number.isInteger(raw.code)) {
      return bad(`code: expected an integer, got ${describe(raw.code)}`, requestId);
    }
    const error = raw.error ?? "";
    if (typeof error !== "string") return bad(`error: expected a string, got ${describe(error)}`, requestId);
    return {
      ok: true,
      frame: {
        kind: "response",
        action: raw.action,
        requestId,
        code: raw.code,
        groupId: groupId ?? undefined,
        data: raw.data ?? null,
        error,
        event,
      },
    };
  }

  switch (raw.action) {
    case "group_notify": {
      if (typeof groupId !== "string" || groupId === "") return bad("group_id: required for group_notify");
      if (event === undefined) return bad(`event: expected a non-empty string, got ${describe(raw.event)}`);
      const data = raw.data ?? {};
      if (!isPlain(data)) return bad(`data: expected an object, got ${describe(data)}`);
      const ts = typeof raw.timestamp === "number" && Number.isFinite(raw.timestamp) ? raw.timestamp : undefined;
      return { ok: true, frame: { kind: "notify", groupId, event, data, timestamp: ts } };
    }
    case "message_push": {
      if (typeof groupId !== "string" || groupId === "") return bad("group_id: required for message_push");
      const parsed = parseWireMessage(groupId, raw.data);
      if (!parsed.ok) return bad(`data.${parsed.reason}`);
      return { ok: true, frame: { kind: "messages", via: "message_push", groupId, messages: [parsed.message], invalid: [] } };
    }
    case "message_batch_push": {
      if (typeof groupId !== "string" || groupId === "") return bad("group_id: required for message_batch_push");
      if (!isPlain(raw.data) || !Array.isArray(raw.data.messages)) {
        return bad(`data.messages: expected an array, got ${describe(isPlain(raw.data) ? raw.data.messages : raw.data)}`);
      }
      const messages: GroupMessage[] = [];
      const invalid: string[] = [];
      raw.data.messages.forEach((m, i) => {
        const parsed = parseWireMessage(groupId, m);
        if (parsed.ok) messages.push(parsed.message);
        else invalid.push(`data.messages[${i}].${parsed.reason}`);
      });
      const range: BatchRange = {
        startMsgId: isMsgIdNumber(raw.data.start_msg_id) ? raw.data.start_msg_id : undefined,
        count: isMsgIdNumber(raw.data.count) ? raw.data.count : undefined,
        latestMsgId: isMsgIdNumber(raw.data.latest_msg_id) ? raw.data.latest_msg_id : undefined,
      };
      return { ok: true, frame: { kind: "messages", via: "message_batch_push", groupId, messages, invalid, range } };
    }
    default:
      // A frame with an event but an unfamiliar action is still a notification (SDK behaviour).
      if (event !== undefined && typeof groupId === "string" && groupId !== "") {
        const data = isPlain(raw.data) ? raw.data : {};
        const ts = typeof raw.timestamp === "number" && Number.isFinite(raw.timestamp) ? raw.timestamp : undefined;
        return { ok: true, frame: { kind: "notify", groupId, event, data, timestamp: ts } };
      }
      return { ok: false, reason: "unknown-action", detail: `unknown action ${JSON.stringify(raw.action).slice(0, 80)}` };
  }
}
