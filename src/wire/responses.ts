// The `data` of the responses the client reads beyond a result code: a pull_messages page and a
// send_message receipt, validated into typed values.
import type { GroupMessage } from "../types.ts";
import { parseWireMessage } from "./message.ts";
import { isMsgIdNumber, parseMsgId } from "./msg-id.ts";
import { describe, isPlain } from "./plain.ts";

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
  const id = parseMsgId(data.msg_id);
  if (id === undefined) return { ok: false, reason: `data.msg_id: expected a non-negative integer, got ${describe(data.msg_id)}` };
  if (typeof data.timestamp !== "number" || !Number.isFinite(data.timestamp)) {
    return { ok: false, reason: `data.timestamp: expected epoch ms, got ${describe(data.timestamp)}` };
  }
  return { ok: true, msgId: String(id), timestamp: data.timestamp };
}
