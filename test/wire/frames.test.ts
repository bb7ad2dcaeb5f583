import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseServerFrame } from "../../src/wire/frames.ts";
import { parseWireMessage, toWireMessage } from "../../src/wire/message.ts";
import { parsePullData, parseSendData } from "../../src/wire/responses.ts";
import { RESULT_CODES } from "../../src/wire/result-codes.ts";

const msg = { msg_id: 42, sender: "bob.agentcp.io", content: "hi", content_type: "text", timestamp: 1767623400000, metadata: null };

describe("parseWireMessage", () => {
  it("normalises msg_id to a string, defaults content_type to text and metadata to null", () => {
    const r = parseWireMessage("g1", { msg_id: 7, sender: "a.x.io", content: "yo", timestamp: 5 });
    expect(r).toEqual({
      ok: true,
      message: { msgId: "7", groupId: "g1", sender: "a.x.io", content: "yo", contentType: "text", timestamp: 5, metadata: null },
    });
  });

  it("accepts a decimal-string msg_id", () => {
    const r = parseWireMessage("g1", { ...msg, msg_id: "43" });
    expect(r.ok && r.message.msgId).toBe("43");
  });

  it.each([
    [{ ...msg, msg_id: "abc" }, "msg_id"],
    [{ ...msg, msg_id: -1 }, "msg_id"],
    [{ ...msg, msg_id: 1.5 }, "msg_id"],
    [{ ...msg, sender: "" }, "sender"],
    [{ ...msg, content: 5 }, "content"],
    [{ ...msg, timestamp: "now" }, "timestamp"],
    [{ ...msg, content_type: 3 }, "content_type"],
    [{ ...msg, metadata: "x" }, "metadata"],
    [[1], "message"],
  ])("rejects %j naming %s", (raw, field) => {
    const r = parseWireMessage("g1", raw);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason.startsWith(field)).toBe(true);
  });

  it("round-trips any valid message through the wire shape (property)", () => {
    fc.assert(
      fc.property(
        fc.record({
          id: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
          sender: fc.string({ minLength: 1 }),
          content: fc.string(),
          contentType: fc.string({ minLength: 1 }),
          timestamp: fc.integer(),
          metadata: fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: null }),
        }),
        (m) => {
          const message = { msgId: String(m.id), groupId: "g", sender: m.sender, content: m.content, contentType: m.contentType, timestamp: m.timestamp, metadata: m.metadata };
          const wire = JSON.parse(JSON.stringify(toWireMessage(message)));
          const back = parseWireMessage("g", wire);
          expect(back).toEqual({ ok: true, message: JSON.parse(JSON.stringify(message)) });
        },
      ),
    );
  });
});

describe("parseServerFrame", () => {
  it("parses a response, keeping an event it carries", () => {
    const r = parseServerFrame(JSON.stringify({ action: "send_message", request_id: "r1", code: 0, group_id: "g1", data: { msg_id: 43 }, error: "", event: "new_message" }));
    expect(r).toEqual({
      ok: true,
      frame: { kind: "response", action: "send_message", requestId: "r1", code: 0, groupId: "g1", data: { msg_id: 43 }, error: "", event: "new_message" },
    });
  });

  it("parses notifications and both kinds of push", () => {
    const n = parseServerFrame(JSON.stringify({ action: "group_notify", group_id: "g1", event: "new_message", data: { latest_msg_id: 44 }, timestamp: 9 }));
    expect(n).toEqual({ ok: true, frame: { kind: "notify", groupId: "g1", event: "new_message", data: { latest_msg_id: 44 }, timestamp: 9 } });
    const p = parseServerFrame(JSON.stringify({ action: "message_push", group_id: "g1", data: msg }));
    expect(p.ok && p.frame.kind === "messages" && p.frame.messages.map((m) => m.msgId)).toEqual(["42"]);
    const b = parseServerFrame(JSON.stringify({
      action: "message_batch_push",
      group_id: "g1",
      data: { messages: [msg, { ...msg, msg_id: "x" }, { ...msg, msg_id: 44 }], start_msg_id: 42, latest_msg_id: 44, count: 3 },
    }));
    expect(b.ok && b.frame.kind === "messages" && b.frame.messages.map((m) => m.msgId)).toEqual(["42", "44"]);
    expect(b.ok && b.frame.kind === "messages" && b.frame.invalid).toEqual(['data.messages[1].msg_id: expected a non-negative integer, got "x"']);
  });

  it.each([
    ["not json {", "not-json"],
    ["[1,2]", "not-object"],
    ["null", "not-object"],
    [JSON.stringify({ action: 42 }), "bad-field"],
    [JSON.stringify({ action: "message_push", group_id: "g1", data: { ...msg, content: 5 } }), "bad-field"],
    [JSON.stringify({ action: "message_push", data: msg }), "bad-field"],
    [JSON.stringify({ action: "message_batch_push", group_id: "g1", data: { messages: "x" } }), "bad-field"],
    [JSON.stringify({ action: "group_notify", group_id: "g1" }), "bad-field"],
    [JSON.stringify({ action: "group_notify", group_id: 5, event: "x" }), "bad-field"],
    [JSON.stringify({ action: "pull_messages", request_id: "r1", code: "0" }), "bad-field"],
    [JSON.stringify({ action: "teleport", group_id: "g1" }), "unknown-action"],
  ])("rejects %s as %s", (text, reason) => {
    const r = parseServerFrame(text);
    expect(r.ok ? "accepted" : r.reason).toBe(reason);
  });

  it("names the request a broken response belongs to", () => {
    const r = parseServerFrame(JSON.stringify({ action: "x", request_id: "r9", code: null }));
    expect(!r.ok && r.requestId).toBe("r9");
  });

  it("never throws on arbitrary input (property)", () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
      const r = parseServerFrame(text);
      expect(typeof r.ok).toBe("boolean");
    }));
  });
});

describe("response data", () => {
  it("parses a pull page and counts invalid messages", () => {
    const r = parsePullData("g1", { messages: [msg, { nope: 1 }], has_more: true, latest_msg_id: 50 });
    expect(r.ok && r.page.messages.length).toBe(1);
    expect(r.ok && r.page.hasMore).toBe(true);
    expect(r.ok && r.page.latestMsgId).toBe(50);
    expect(r.ok && r.page.invalid.length).toBe(1);
    expect(parsePullData("g1", { messages: {} }).ok).toBe(false);
    expect(parsePullData("g1", { messages: [], has_more: "yes" }).ok).toBe(false);
  });

  it("parses a send result", () => {
    expect(parseSendData({ msg_id: 43, timestamp: 1000 })).toEqual({ ok: true, msgId: "43", timestamp: 1000 });
    expect(parseSendData({ msg_id: 43 }).ok).toBe(false);
    expect(parseSendData(null).ok).toBe(false);
  });
});

describe("result codes", () => {
  it("knows the agent.md codes 1024 and 1025 beside the group codes", () => {
    expect(RESULT_CODES.AGENT_MD_NOT_FOUND).toBe(1024);
    expect(RESULT_CODES.AGENT_MD_INVALID).toBe(1025);
    expect(RESULT_CODES.RATE_LIMITED).toBe(1010);
  });

  it("parses a batch push's start_msg_id / count / latest_msg_id as its range", () => {
    const parsed = parseServerFrame(JSON.stringify({
      action: "message_batch_push", group_id: "g1", code: 0,
      data: { messages: [{ msg_id: 7, sender: "bob.acp.local", content: "x", timestamp: 1 }], start_msg_id: 7, latest_msg_id: 9, count: 3 },
    }));
    expect(parsed).toMatchObject({ ok: true, frame: { kind: "messages", via: "message_batch_push", range: { startMsgId: 7, count: 3, latestMsgId: 9 } } });
  });
});
