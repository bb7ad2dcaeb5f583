// The runtime's monitors are built on first use; from then on they behave as the monitor does.
import { describe, expect, it } from "vitest";
import { parseChannelConfig, resolveGroupSettings } from "../../src/config/load.ts";
import { createLazyGroupMonitor } from "../../src/monitor/lazy-monitor.ts";
import type { DispatchBatch } from "../../src/types.ts";
import { testGroup } from "./helpers.ts";

const config = parseChannelConfig({ identities: { alice: { aid: "alice.agentcp.io" } }, groups: { g1: { delay: { enabled: false } } } });
const identity = config.identities.alice!;
const batch: DispatchBatch = {
  identityId: "alice", groupId: "g1", dispatchId: 1,
  messages: [{ msgId: "1", groupId: "g1", sender: "bob.agentcp.io", content: "alice?", contentType: "text", timestamp: 1, metadata: null, isMention: true, engaged: false }],
  vitality: { state: "COOLING", messagesIn5m: 1, uniqueSpeakersIn5m: 1, myMessagesIn5m: 0, updatedAt: 1 },
  mentionInfo: { mentioned: true, mentionCount: 1, batchesMerged: 1, triggerType: "mention" },
  now: 1, attempt: 0,
};
const group = testGroup().context;

function make(calls: string[]) {
  return createLazyGroupMonitor({
    identityId: "alice", identity, groupId: "g1", settings: resolveGroupSettings(config, identity, "g1"), humans: [],
    backend: { name: "fake-model", generate: async () => (calls.push("model"), { text: "here" }) },
    sender: { sendMessage: async () => ({ msgId: "2", timestamp: 2 }) },
    restored: { lastSelfSpeakAt: 5, replyHashes: ["aa"], replyTexts: ["x"], budgetEvents: [[1, 10, 0]], agentChain: 1 },
  });
}

describe("createLazyGroupMonitor", () => {
  it("restored state reads back unchanged before any dispatch", () => {
    // The monitor's part of the saved state; what we said is the group's memory (src/group/memory.ts).
    expect(make([]).snapshot()).toEqual({ budgetEvents: [[1, 10, 0]], agentChain: 1 });
  });

  it("closed before first use: a dispatch is group-closed and the model is never called", async () => {
    const calls: string[] = [];
    const m = make(calls);
    m.close();
    await expect(m.handle(batch, group)).resolves.toMatchObject({ kind: "skipped", reason: "group-closed" });
    expect(calls).toEqual([]);
  });

  it("first use builds the monitor: the dispatch runs and sends (model mocked: no hosted LLM here)", async () => {
    const calls: string[] = [];
    await expect(make(calls).handle(batch, group)).resolves.toMatchObject({ kind: "sent", text: "here" });
    expect(calls).toEqual(["model"]);
  });
});
