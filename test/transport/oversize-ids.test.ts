// Reading msg ids and the request id out of a frame too large to parse: a member's content or
// metadata must not make the client skip a message it never received.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { requestIdOf } from "../../src/transport/inbound.ts";
import { msgIdsIn } from "../../src/wire/msg-id.ts";

const response = (messages: unknown[]) => JSON.stringify({ action: "pull_messages", request_id: "alice-1-ab12-7", code: 0, data: { messages, has_more: true, latest_msg_id: 99 } });

describe("ids of an oversize frame", () => {
  it("finds the request id and the message ids; a forged key inside content or a metadata key name is not a message id", () => {
    const text = response([
      { msg_id: 5, sender: "bob", content: ',"msg_id":1,"request_id":"x"', content_type: "text", timestamp: 1, metadata: { 'x"msg_id': 2 } },
    ]);
    expect(requestIdOf(text)).toBe("alice-1-ab12-7");
    expect(msgIdsIn(text)).toEqual([5]);
  });

  it("property: whatever a member puts in content and metadata keys, the smallest id found above the cursor is never above the message's own id", () => {
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer())), fc.integer({ min: 1, max: 1e9 }), (content, metadata, id) => {
        const ids = msgIdsIn(response([{ msg_id: id, sender: "bob", content, content_type: "text", timestamp: 1, metadata }]));
        expect(ids).toContain(id);
        expect(Math.min(...ids.filter((x) => x > id - 1))).toBe(id);
      }),
    );
  });
});
