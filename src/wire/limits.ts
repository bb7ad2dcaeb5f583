// Sizes the group service and the client agree on, so that no stored message can make a frame
// the other side drops. The service stores at most MAX_MESSAGE_BYTES per message and fills a
// pull page or push batch up to MAX_PAGE_BYTES (always at least one message); the client takes
// payloads up to MAX_INBOUND_PAYLOAD_BYTES and socket frames up to MAX_SOCKET_FRAME_BYTES.

/** One stored message: its content and metadata as JSON (UTF-8 bytes, escapes included). */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** The messages of one pull page or push batch, as JSON; a page holds at least one message. */
export const MAX_PAGE_BYTES = 512 * 1024;
/**
 * The largest group frame (the `message` of a session_message) the client reads. Above the
 * largest page the service sends (MAX_PAGE_BYTES plus one message plus the frame's own fields),
 * with room for a message stored before the cap existed.
 */
export const MAX_INBOUND_PAYLOAD_BYTES = 2 * 1024 * 1024;
/**
 * The largest WebSocket frame the client reads: a payload travels as a JSON string inside the
 * session_message envelope, where escaping can double it (`\` → `\\`, `"` → `\"`).
 */
export const MAX_SOCKET_FRAME_BYTES = 2 * MAX_INBOUND_PAYLOAD_BYTES + 64 * 1024;

/** Bytes of `content` and `metadata` as the service stores and sends them. */
export function messageBytes(content: string, metadata: unknown): number {
  return Buffer.byteLength(JSON.stringify(content), "utf8") + (metadata === null || metadata === undefined ? 0 : Buffer.byteLength(JSON.stringify(metadata), "utf8"));
}
