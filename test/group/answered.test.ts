import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { allAnswered, answeredThroughFor, answeredThroughOf } from "../../src/group/answered.ts";
import { initGroupClientForIdentity } from "../../src/group/group-client.ts";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import type { DispatchBatch, GroupMessage } from "../../src/types.ts";

describe("answered_through", () => {
  it("reads answered_through, else reply_to; ignores what is not a msg id", () => {
    expect(answeredThroughOf({ answered_through: "42", reply_to: "40" })).toBe(42);
    expect(answeredThroughOf({ answered_through: 43 })).toBe(43);
    expect(answeredThroughOf({ reply_to: "40" })).toBe(40);
    expect(answeredThroughOf({ answered_through: "x", reply_to: "y" })).toBeUndefined();
    expect(answeredThroughOf({ answered_through: -1 })).toBeUndefined();
    expect(answeredThroughOf(null)).toBeUndefined();
  });

  it("names the newest numeric id of a batch, and tells when a batch is wholly answered", () => {
    expect(answeredThroughFor([{ msgId: "7" }, { msgId: "12" }, { msgId: "9" }])).toBe("12");
    expect(answeredThroughFor([{ msgId: "irc:1" }])).toBeUndefined();
    expect(allAnswered([{ msgId: "7" }, { msgId: "12" }], 12)).toBe(true);
    expect(allAnswered([{ msgId: "7" }, { msgId: "13" }], 12)).toBe(false);
    expect(allAnswered([], 12)).toBe(false);
    expect(allAnswered([{ msgId: "7" }], undefined)).toBe(false);
  });
});

describe("group client: our reply coming back settles what it answered", () => {
  const T0 = 1_767_600_000_000;
  beforeEach(() => void vi.useFakeTimers({ now: T0 }));
  afterEach(() => void vi.useRealTimers());
  const msg = (id: number, sender: string, content: string, metadata: GroupMessage["metadata"] = null): GroupMessage => ({
    msgId: String(id), groupId: "g1", sender, content, contentType: "text", timestamp: T0 + id, metadata,
  });

  it("T+0 #1 (Alice, ready?), our #2 answering it, #3 → #1 dropped as answered; T+10 buffer gate → one dispatch of [#3]", async () => {
    const batches: DispatchBatch[] = [];
    const client = initGroupClientForIdentity({
      identityId: "alice", groupId: "g1", identity: { aid: "alice.agentcp.io", name: "Alice", aliases: [] },
      settings: { ...DEFAULT_GROUP_SETTINGS, bufferGateMs: 10, bufferGateMaxWaitMs: 20, cooldownMs: 0 },
      dispatch: async (b) => (batches.push(b), { kind: "skipped", reason: "silent" }),
    });
    client.feedBufferGate([
      msg(1, "bob.agentcp.io", "Alice, ready?"),
      msg(2, "alice.agentcp.io", "Ready.", { reply_to: "1", answered_through: "1" }),
      msg(3, "carol.agentcp.io", "and me?"),
    ]);
    expect(client.stats().dropped).toMatchObject({ answered: 1, self: 1 });
    await vi.advanceTimersByTimeAsync(9);
    expect(batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches.map((b) => b.messages.map((m) => m.msgId))).toEqual([["3"]]);
    expect(batches[0]!.mentionInfo.mentioned).toBe(false);
    await client.close();
  });
});
