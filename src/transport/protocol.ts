// The ACP group wire protocol (reference/acp-group-protocol.md). Snake_case objects are the wire;
// the camelCase GroupMessage is the domain type. Conversion and validation happen here, once.
import type { GroupMessage } from "../types.ts";

/** ACP group result codes. */
export const RESULT_CODES = {
  OK: 0,
  GROUP_NOT_FOUND: 1001,
  NO_PERMISSION: 1002,
  GROUP_DISSOLVED: 1003,
  GROUP_SUSPENDED: 1004,
  ALREADY_MEMBER: 1005,
  NOT_MEMBER: 1006,
  BANNED: 1007,
  MEMBER_FULL: 1008,
  INVALID_PARAMS: 1009,
  RATE_LIMITED: 1010,
  INVITE_CODE_INVALID: 1011,
  REQUEST_EXISTS: 1012,
  BROADCAST_CONFLICT: 1013,
  DUTY_NOT_ENABLED: 1020,
  NOT_DUTY_AGENT: 1021,
  AGENT_MD_NOT_FOUND: 1024,
  AGENT_MD_INVALID: 1025,
  NOT_IMPLEMENTED: 1099,
} as const;
export type ResultCode = (typeof RESULT_CODES)[keyof typeof RESULT_CODES];

export interface WireMessage {
  msg_id: number;
  sender: string;
  content: string;
  content_type: string;
  timestamp: number;
  metadata: Record<string, unknown> | null;
}

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

export type Plain = Record<string, unknown>;
export const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

const isMsgIdNumber = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** Numeric value of a normalised msg id (ACP ids are decimal strings of safe integers). */
export function msgIdValue(msgId: string): number {
  return Number(msgId);
}

export type ParsedMessage = { ok: true; message: GroupMessage } | { ok: false; reason: string };

/** Validates one wire message and converts it to a GroupMessage (msgId = String(msg_id)). */
export function parseWireMessage(groupId: string, raw: unknown): ParsedMessage {
  if (!isPlain(raw)) return { ok: false, reason: "message: expected an object" };
  let id: number;
  if (isMsgIdNumber(raw.msg_id)) id = raw.msg_id;
  else if (typeof raw.msg_id === "string" && /^\d{1,15}$/.test(raw.msg_id)) id = Number(raw.msg_id);
  else return { ok: false, reason: `msg_id: expected a non-negative integer, got ${describe(raw.msg_id)}` };
  if (typeof raw.sender !== "string" || raw.sender === "") {
    return { ok: false, reason: `sender: expected a non-empty string, got ${describe(raw.sender)}` };
  }
  if (typeof raw.content !== "string") return { ok: false, reason: `content: expected a string, got ${describe(raw.content)}` };
  if (typeof raw.timestamp !== "number" || !Number.isFinite(raw.timestamp)) {
    return { ok: false, reason: `timestamp: expected epoch ms, got ${describe(raw.timestamp)}` };
  }
  const contentType = raw.content_type ?? "text";
  if (typeof contentType !== "string") return { ok: false, reason: `content_type: expected a string, got ${describe(contentType)}` };
  const metadata = raw.metadata ?? null;
  if (metadata !== null && !isPlain(metadata)) return { ok: false, reason: `metadata: expected an object or null, got ${describe(metadata)}` };
  return {
    ok: true,
    message: {
      msgId: String(id),
      groupId,
      sender: raw.sender,
      content: raw.content,
      contentType: contentType === "" ? "text" : contentType,
      timestamp: raw.timestamp,
      metadata,
    },
  };
}

export function toWireMessage(m: GroupMessage): WireMessage {
  return {
    msg_id: msgIdValue(m.msgId),
    sender: m.sender,
    content: m.content,
    content_type: m.contentType,
    timestamp: m.timestamp,
    metadata: m.metadata === null ? null : { ...m.metadata },
  };
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

export interface PullPage {
  messages: GroupMessage[];
  hasMore: boolean;
  latestMsgId: number | undefined;
  invalid: string[];
}

/** Validates the `data` of a pull_messages response. */
export function parsePullData(groupId: string, data: unknown): { ok: true; page: PullPage } | { ok: false; reason: string } {
  if (!isPlain(data)) return { ok: false, reason: `data: expected an object, got ${describe(data)}` };
  const list = data.messages ?? [];
  if (!Array.isArray(list)) return { ok: false, reason: `data.messages: expected an array, got ${describe(list)}` };
  const hasMore = data.has_more ?? false;
  if (typeof hasMore !== "boolean") return { ok: false, reason: `data.has_more: expected a boolean, got ${describe(hasMore)}` };
  const messages: GroupMessage[] = [];
  const invalid: string[] = [];
  list.forEach((m, i) => {
    const parsed = parseWireMessage(groupId, m);
    if (parsed.ok) messages.push(parsed.message);
    else invalid.push(`data.messages[${i}].${parsed.reason}`);
  });
  const latest = isMsgIdNumber(data.latest_msg_id) ? data.latest_msg_id : undefined;
  return { ok: true, page: { messages, hasMore, latestMsgId: latest, invalid } };
}

/** Validates the `data` of a send_message response. */
export function parseSendData(data: unknown): { ok: true; msgId: string; timestamp: number } | { ok: false; reason: string } {
  if (!isPlain(data)) return { ok: false, reason: `data: expected an object, got ${describe(data)}` };
  let id: number;
  if (isMsgIdNumber(data.msg_id)) id = data.msg_id;
  else if (typeof data.msg_id === "string" && /^\d{1,15}$/.test(data.msg_id)) id = Number(data.msg_id);
  else return { ok: false, reason: `data.msg_id: expected a non-negative integer, got ${describe(data.msg_id)}` };
  if (typeof data.timestamp !== "number" || !Number.isFinite(data.timestamp)) {
    return { ok: false, reason: `data.timestamp: expected epoch ms, got ${describe(data.timestamp)}` };
  }
  return { ok: true, msgId: String(id), timestamp: data.timestamp };
}

/** Short type description for error details (never the value itself: it may be huge). */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "string") return v.length > 24 ? `string(${v.length})` : JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return typeof v;
}
