// End to end over fake timers: the real group client hands batches to the real monitor, which
// talks to the deterministic back-end and a recording transport. Timeline written out literally.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import type { GenerateRequest, GroupMessage } from "../../src/types.ts";
import { T0, aliceWith, recordingSender, settingsWith } from "./helpers.ts";
import { reasonOf } from "../support/outcome.ts";

const SPEAKERS = ["bob", "dave", "erin", "frank", "gina", "hank"].map((n) => `${n}.agentcp.io`);

function gm(id: number, atMs: number, content: string, sender: string): GroupMessage {
  return { msgId: String(id), groupId: "g1", sender, content, contentType: "text", timestamp: T0 + atMs, metadata: null };
}

async function at(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
}

// What the model "says" in each dispatch; dispatch 3 repeats dispatch 2 word for word.
const SCRIPT: Record<number, string> = {
  1: "😂 that is wild. Anyway, moving on to the next topic now.",
  2: "Yes, I looked at it. The fix is in the config. Restart the service after.",
  3: "Yes, I looked at it. The fix is in the config. Restart the service after.",
  4: "NO_REPLY",
  5: "Still here. Ask me again after lunch. I will have numbers.",
};

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("monitor end to end with the group client", () => {
  it("HEATED group: reaction, short reply to a mention, repeat suppressed, the room's reaction to our answer on the addressed allowance though the unaddressed one is spent, mentions on their own", async () => {
    const settings = settingsWith({ budget: { unaddressed: { "5m": { messages: 1, tokens: 1_000_000 } } } });
    const sender = recordingSender(() => Date.now());
    const backend = createScriptedBackend({ mode: "always", replyText: (r: GenerateRequest) => SCRIPT[r.dispatchId] ?? "unexpected call" });
    const { decisions, monitor, client } = aliceWith({ backend, humans: [], settings, sender });

    // T+0 … T+1.5s: 16 messages from 6 agents, one every 100 ms → HEATED.
    for (let i = 0; i < 16; i++) {
      await at(i * 100);
      client.feedBufferGate([gm(i + 1, i * 100, `chatter ${i + 1}`, SPEAKERS[i % 6]!)]);
    }
    // T+4.5s: buffer gate (3 s after the last) → dispatch 1, unaddressed → reaction, fast delay 4 s.
    await at(4500);
    expect(backend.calls.map((c) => c.dispatchId)).toEqual([1]);
    expect(backend.calls[0]!.replyType).toBe("reaction");
    expect(backend.calls[0]!.systemPrompt).toContain("\nstate=HEATED\n");
    await at(8499);
    expect(sender.sent).toEqual([]);
    await at(8500);
    expect(sender.sent.map((s) => [s.at - T0, s.content])).toEqual([[8500, "😂"]]);

    // T+20s: a mention → dispatch 2 at once (cooldown bypassed) → short, no delay.
    await at(20_000);
    client.feedBufferGate([gm(17, 20_000, "Alice, did you look at the outage?", SPEAKERS[0]!)]);
    await at(20_001);
    expect(sender.sent.map((s) => [s.at - T0, s.content])).toEqual([
      [8500, "😂"],
      [20_000, "Yes, I looked at it. The fix is in the config."],
    ]);
    expect(sender.sent[1]!.metadata).toEqual({ reply_to: "17", answered_through: "17" });

    // T+30s: another mention → dispatch 3, the model repeats itself → suppressed.
    await at(30_000);
    client.feedBufferGate([gm(18, 30_000, "Alice? the outage?", SPEAKERS[1]!)]);
    await at(30_001);
    expect(sender.sent).toHaveLength(2);

    // T+40s: unaddressed chatter; cooldown (30 s × 2 for HEATED) from T+30s → dispatch 4 at T+90s.
    // The unaddressed allowance (1 call in 5 min) is spent, but this is the first plain batch since
    // our answer at T+20s: the room's reaction to it, a look on the addressed allowance (the model
    // stays silent).
    await at(40_000);
    client.feedBufferGate([gm(19, 40_000, "more chatter", SPEAKERS[2]!)]);
    await at(89_999);
    expect(decisions).toHaveLength(3);
    await at(90_000);
    expect(decisions).toHaveLength(4);
    expect(backend.calls.map((c) => c.dispatchId)).toEqual([1, 2, 3, 4]);

    // T+100s: a mention → dispatch 5 on the mention reserve.
    await at(100_000);
    client.feedBufferGate([gm(20, 100_000, "Alice, are you still there?", SPEAKERS[3]!)]);
    await at(100_001);
    expect(backend.calls.map((c) => c.dispatchId)).toEqual([1, 2, 3, 4, 5]);

    expect(
      decisions.map((d) => ({
        id: d.dispatchId,
        at: d.at - T0,
        trigger: d.trigger,
        vitality: d.vitality.state,
        replyType: d.replyType,
        calls: d.modelCalls,
        sent: (d.outcome.kind === "sent"),
        skip: reasonOf(d.outcome) ?? null,
        pool: d.budgetPool,
      })),
    ).toEqual([
      { id: 1, at: 4500, trigger: "normal", vitality: "HEATED", replyType: "reaction", calls: 1, sent: true, skip: null, pool: "unaddressed" },
      { id: 2, at: 20_000, trigger: "mention", vitality: "HEATED", replyType: "short", calls: 1, sent: true, skip: null, pool: "addressed" },
      { id: 3, at: 30_000, trigger: "mention", vitality: "HEATED", replyType: "short", calls: 1, sent: false, skip: "duplicate-of-recent-reply", pool: "addressed" },
      { id: 4, at: 90_000, trigger: "normal", vitality: "HEATED", replyType: "reaction", calls: 1, sent: false, skip: "silent", pool: "addressed" },
      { id: 5, at: 100_000, trigger: "mention", vitality: "HEATED", replyType: "short", calls: 1, sent: true, skip: null, pool: "addressed" },
    ]);
    expect(sender.sent.map((s) => [s.at - T0, s.content])).toEqual([
      [8500, "😂"],
      [20_000, "Yes, I looked at it. The fix is in the config."],
      [100_000, "Still here. Ask me again after lunch."],
    ]);
    // The group client learnt of our sends from the outcomes.
    expect(client.lastSelfSpeakAt).toBe(T0 + 100_000);
    expect(client.stats()).toMatchObject({ received: 20, accepted: 20, dispatched: 20, dispatches: 5, failures: 0 });

    monitor.close();
    await client.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
