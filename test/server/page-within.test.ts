// Pages by bytes: whatever the messages, a pull page or push batch holds at least one message and
// never more than the budget unless that one message alone is larger; and the sizes the client
// reads hold a full page of the largest messages the service stores, escaping included.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { pageWithin } from "../../src/server/actions.ts";
import { toWireMessage } from "../../src/wire/message.ts";
import { MAX_INBOUND_PAYLOAD_BYTES, MAX_MESSAGE_BYTES, MAX_PAGE_BYTES, MAX_SOCKET_FRAME_BYTES } from "../../src/wire/limits.ts";
import type { GroupMessage } from "../../src/types.ts";

const msg = (id: number, content: string): GroupMessage => ({ msgId: String(id), groupId: "g", sender: "a.acp.local", content, contentType: "text", timestamp: id, metadata: null });
const bytes = (ms: readonly GroupMessage[]) => Buffer.byteLength(JSON.stringify(ms.map(toWireMessage)), "utf8");

describe("pageWithin", () => {
  it("property: a non-empty prefix within the budget, or one message when it alone is larger", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 400, unit: "binary" }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4000 }), (contents, budget) => {
        const all = contents.map((c, i) => msg(i + 1, c));
        const page = pageWithin(all, budget);
        expect(page.length).toBeGreaterThanOrEqual(1);
        expect(page).toEqual(all.slice(0, page.length));
        if (page.length > 1) expect(bytes(page)).toBeLessThanOrEqual(budget + 1);
        if (page.length < all.length) expect(bytes(all.slice(0, page.length + 1))).toBeGreaterThan(budget);
      }),
    );
  });

  it("a page of the largest stored messages (worst-case escaping) fits what the client reads, in the payload and in the socket frame", () => {
    // 10,000 control characters (6 bytes each as JSON) plus quotes in metadata up to the cap.
    const content = "\u0000".repeat(10_000);
    const metadata = { p: '"'.repeat(Math.floor((MAX_MESSAGE_BYTES - 60_012) / 2)) };
    const one: GroupMessage = { ...msg(1, content), metadata };
    const all = Array.from({ length: 100 }, (_, i) => ({ ...one, msgId: String(i + 1) }));
    const page = pageWithin(all, MAX_PAGE_BYTES);
    const payload = JSON.stringify({ action: "pull_messages", request_id: "x".repeat(200), code: 0, group_id: "g".repeat(200), data: { messages: page.map(toWireMessage), has_more: true, latest_msg_id: 100 }, error: "" });
    const envelope = JSON.stringify({ cmd: "session_message", data: { message_id: "1", session_id: "s".repeat(32), ref_msg_id: "", sender: "group.acp.local", receiver: "a.acp.local", message: payload, timestamp: "1" } });
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(MAX_INBOUND_PAYLOAD_BYTES);
    expect(Buffer.byteLength(envelope)).toBeLessThanOrEqual(MAX_SOCKET_FRAME_BYTES);
  });
});
