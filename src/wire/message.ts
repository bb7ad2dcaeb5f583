// One group message on the wire. Snake_case objects are the wire; the camelCase GroupMessage is
// the domain type. Conversion and validation happen here, once.
import type { GroupMessage } from "../types.ts";
import { msgIdValue, parseMsgId } from "./msg-id.ts";
import { describe, isPlain } from "./plain.ts";

export interface WireMessage {
  msg_id: number;
  sender: string;
  content: string;
  content_type: string;
  timestamp: number;
  metadata: Record<string, unknown> | null;
}

export type ParsedMessage = { ok: true; message: GroupMessage } | { ok: false; reason: string };

/** Validates one wire message and converts it to a GroupMessage (msgId = String(msg_id)). */
export function parseWireMessage(groupId: string, raw: unknown): ParsedMessage {
  if (!isPlain(raw)) return { ok: false, reason: "message: expected an object" };
  const id = parseMsgId(raw.msg_id);
  if (id === undefined) return { ok: false, reason: `msg_id: expected a non-negative integer, got ${describe(raw.msg_id)}` };
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
