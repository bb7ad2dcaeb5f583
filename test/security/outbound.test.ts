// What goes out is clean: model output before it is posted, and member text before `start`
// prints it on a terminal.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cleanOutboundText, displaySafe } from "../../src/monitor/outbound.ts";
import { createGroupMonitor } from "../../src/monitor/monitor.ts";
import { resolveGroupSettings } from "../../src/config/load.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import type { DispatchBatch, InboundMessage } from "../../src/types.ts";
import { testGroup } from "../monitor/helpers.ts";

describe("cleanOutboundText", () => {
  it("removes escape sequences, controls, bidi overrides and lone surrogates", () => {
    expect(cleanOutboundText("\u001b[31mred\u001b[0m text")).toBe("red text");
    expect(cleanOutboundText("title\u001b]0;pwned\u0007 ok")).toBe("title ok");
    expect(cleanOutboundText("a\u0000b\u0007c\u009b0md\u202Ee\u2066f\uD800g")).toBe("abcdefg");
    expect(cleanOutboundText("one\r\ntwo\u2028three")).toBe("one\ntwo\nthree");
  });

  it("leaves emoji, CJK and ordinary punctuation untouched", () => {
    for (const s of ["👨‍👩‍👧 family 🇯🇵 1️⃣", "今天天气不错，你觉得呢？", "Hi! (yes) — \"quoted\" 'x'; a: b… [1] {c} <d> ~e~ @bob #2 50% & more", "ok\nsecond line"]) {
      expect(cleanOutboundText(s)).toBe(s);
    }
  });

  it("never leaves an escape, a C0/C1 control or a bidi override (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        expect(cleanOutboundText(s)).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/);
      }),
    );
  });
});

describe("displaySafe (start's transcript)", () => {
  it("shows escapes instead of sending them to the terminal", () => {
    expect(displaySafe("bob: \u001b[2J\u001b]0;owned\u0007hi\u202Eevil")).toBe("bob: ␛[2J␛]0;owned␇hi\uFFFDevil");
    expect(displaySafe("日本語 👍 ok")).toBe("日本語 👍 ok");
  });
});

describe("the monitor posts cleaned model output", () => {
  it("a reply with escape sequences and bidi overrides is sent clean (model mocked: no hosted LLM here)", async () => {
    const config = parseChannelConfig({
      identities: { alice: { aid: "alice.agentcp.io" } },
      groups: { g1: { delay: { enabled: false } } },
    });
    const identity = config.identities.alice!;
    const sent: string[] = [];
    const monitor = createGroupMonitor({
      identityId: "alice",
      identity,
      groupId: "g1",
      settings: resolveGroupSettings(config, identity, "g1"),
      humans: [],
      backend: { name: "fake-model", generate: async () => ({ text: "\u001b[31mSure\u001b[0m, \u202Eit works 👍" }) },
      sender: { sendMessage: async (m) => (sent.push(m.content), { msgId: "9", timestamp: 1 }) },
    });
    const m: InboundMessage = { msgId: "1", groupId: "g1", sender: "bob.agentcp.io", content: "alice?", contentType: "text", timestamp: 1, metadata: null, isMention: true, engaged: false };
    const batch: DispatchBatch = {
      identityId: "alice", groupId: "g1", dispatchId: 1, messages: [m],
      vitality: { state: "COOLING", messagesIn5m: 1, uniqueSpeakersIn5m: 1, myMessagesIn5m: 0, updatedAt: 1 },
      mentionInfo: { mentioned: true, mentionCount: 1, batchesMerged: 1, triggerType: "mention" },
      now: 1, attempt: 0,
    };
    const outcome = await monitor.handle(batch, testGroup().context);
    expect(outcome.kind === "sent").toBe(true);
    expect(sent).toEqual(["Sure, it works 👍"]);
  });
});
