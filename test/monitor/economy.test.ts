// The addressed-first economy end to end: the real group client and monitor with DEFAULT
// settings, a deterministic stand-in for the hosted model (2 s latency), fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import type { GroupMessage } from "../../src/types.ts";
import { ALICE, T0, aliceWith, recordingSender } from "./helpers.ts";
import { reasonOf } from "../support/outcome.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function gm(id: number, atMs: number, content: string, sender: string): GroupMessage {
  return { msgId: String(id), groupId: "g1", sender, content, contentType: "text", timestamp: T0 + atMs, metadata: null };
}

describe("addressed-first economy (default settings, scripted model)", () => {
  it("someone addressing the agent every 30 s for 6 hours: every line reaches a model call", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 2000, replyText: (r) => `answer ${r.dispatchId}` });
    const { settings, decisions, monitor, client } = aliceWith({ backend, humans: ["dan.agentcp.io"] });
    const HOURS = 6;
    const lines = (HOURS * 3600) / 30;
    // T+0, T+30s, … T+6h-30s: "Alice, question n" from dan; a colleague chats in between.
    for (let i = 0; i < lines; i++) {
      const atMs = i * 30_000;
      await vi.advanceTimersByTimeAsync(T0 + atMs - Date.now());
      client.feedBufferGate([gm(2 * i + 1, atMs, `Alice, question ${i}?`, "dan.agentcp.io")]);
      await vi.advanceTimersByTimeAsync(10_000);
      client.feedBufferGate([gm(2 * i + 2, atMs + 10_000, `side remark ${i}`, "erin.agentcp.io")]);
    }
    await vi.advanceTimersByTimeAsync(120_000);
    await client.close();
    monitor.close();

    const reached = new Set<string>();
    for (const d of decisions) if (d.modelCalls > 0) for (const id of d.messageIds) reached.add(id);
    const addressed = Array.from({ length: lines }, (_, i) => String(2 * i + 1));
    expect(addressed.filter((id) => !reached.has(id))).toEqual([]);
    expect(decisions.filter((d) => reasonOf(d.outcome) === "over-budget" && d.trigger === "mention")).toEqual([]);
    // Each question dispatched on its own, answered within the model latency.
    expect(decisions.filter((d) => d.trigger === "mention")).toHaveLength(lines);
    // The prompt never sees a budget ratio outside [0, 1].
    expect(decisions.every((d) => d.budgetRatio >= 0 && d.budgetRatio <= 1)).toBe(true);
    // The side remarks are unaddressed and stay a small share: at most 2 calls per 5 minutes.
    const unaddressedCalls = decisions.filter((d) => d.budgetPool === "unaddressed" && d.modelCalls > 0).length;
    expect(unaddressedCalls).toBeLessThanOrEqual(HOURS * 12 * 2);
  });
});

describe("unaddressed talk follows the channel's pace (budget.unaddressedEvery, default 40)", () => {
  async function slowChannel(ours: ReadonlyArray<{ atMs: number; content: string }>) {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 2000 });
    const { settings, decisions, monitor, client } = aliceWith({ backend, humans: ["erin.agentcp.io"] });
    // A slow channel: erin says a line every 10 minutes for a day (144 lines, ids 1…144), nobody
    // addresses the agent. The windows alone would allow 48 unaddressed calls in that day.
    const feed: Array<{ atMs: number; m: GroupMessage }> = [];
    for (let i = 0; i < 144; i++) feed.push({ atMs: i * 600_000, m: gm(i + 1, i * 600_000, `remark ${i}`, "erin.agentcp.io") });
    ours.forEach((o, k) => feed.push({ atMs: o.atMs, m: gm(1000 + k, o.atMs, o.content, ALICE.aid) }));
    feed.sort((a, b) => a.atMs - b.atMs);
    for (const f of feed) {
      await vi.advanceTimersByTimeAsync(T0 + f.atMs - Date.now());
      client.feedBufferGate([f.m]);
    }
    await vi.advanceTimersByTimeAsync(120_000);
    await client.close();
    monitor.close();
    const plain = decisions.filter((d) => d.trigger === "normal");
    return {
      called: plain.filter((d) => d.modelCalls > 0).map((d) => `${d.messageIds.join(",")} ${d.budgetPool}`),
      paced: plain.filter((d) => d.modelCalls === 0).map((d) => `${reasonOf(d.outcome)} ${d.detail}`),
    };
  }

  it("one call per 40 lines of others: a look at the first line, then at lines 41, 81 and 121", async () => {
    // T+0      line 1     → a look (a fresh agent may look at once)
    // T+10m…   lines 2–40 → skipped before the model: over-budget, unaddressed:pace (1/40 … 39/40)
    // T+6h40m  line 41    → 40 lines since the look: a look; and so at T+13h20m (81), T+20h (121)
    const { called, paced } = await slowChannel([]);
    expect(called).toEqual(["1 unaddressed", "41 unaddressed", "81 unaddressed", "121 unaddressed"]);
    expect(paced).toHaveLength(140);
    expect(paced[0]).toBe("over-budget unaddressed:pace:messages 1/40 +39");
    expect(paced[38]).toBe("over-budget unaddressed:pace:messages 39/40 +1");
  });

  it("after a line of ours, the next batch is the room's reaction: a look on the addressed allowance", async () => {
    // T+0      line 1     → a look (unaddressed)
    // T+55m    we say something to the room
    // T+1h     line 7     → a look on the addressed allowance (we spoke since the last look); the
    //                       40 lines count from here
    // T+1h10m  line 8     → no look: once per line of ours
    // T+7h40m  line 47    → an unaddressed look, then lines 87 and 127
    const { called, paced } = await slowChannel([{ atMs: 55 * 60_000, content: "by the way, the mirror is back" }]);
    expect(called).toEqual(["1 unaddressed", "7 addressed", "47 unaddressed", "87 unaddressed", "127 unaddressed"]);
    expect(paced[5]).toBe("over-budget unaddressed:pace:messages 1/40 +39");
  });
});

describe("the room's reaction is a look on the addressed allowance only after an answer of ours", () => {
  it("an agent that replies to every plain batch stays on the unaddressed allowance: 2 calls per 5 minutes, none addressed", async () => {
    // The stand-in model replies to everything, each reply unlike the others (no duplicate suppression).
    const REPLIES = ["the ferry leaves at noon", "quantum dots glow green", "my violin needs new strings", "glaciers carve fjords slowly", "try the lentil soup", "chess openings bore me", "rain again in Lisbon", "kites need steady wind", "owls hunt at dusk", "copper turns green"];
    const backend = createScriptedBackend({ mode: "always", latencyMs: 2000, replyText: (r) => REPLIES[r.dispatchId % REPLIES.length]! });
    const sender = recordingSender(() => Date.now());
    const { decisions, monitor, client } = aliceWith({ backend, humans: ["erin.agentcp.io"], sender });
    // T+0, T+90s, … T+13m30s: erin says a line every 90 s (ids 1…10); nobody addresses the agent.
    // Every plain batch after the first comes after a reply of ours said unprompted: no reaction
    // look on the addressed allowance; the unaddressed windows (2 calls per 5 minutes) hold it.
    // (erin's first line within 60 s of a line of ours may answer it — maybe ours, a follow-up;
    // at 90 s apart none is.)
    // T+3s     line 1  → a look (a fresh agent), the agent replies
    // T+93s    line 2  → a look at once after our line, unaddressed; the agent replies
    // T+183s   line 3  → over-budget (unaddressed:5m 2/2), and so line 4 at T+273s
    // T+363s   line 5  → a look (the T+3s call has left the 5-minute window); T+453s line 6 too
    // T+543s…  lines 7, 8 over-budget; lines 9, 10 (T+723s, T+813s) looks
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(T0 + i * 90_000 - Date.now());
      client.feedBufferGate([gm(i + 1, i * 90_000, `remark ${i}`, "erin.agentcp.io")]);
    }
    await vi.advanceTimersByTimeAsync(120_000);
    await client.close();
    monitor.close();
    const called = decisions.filter((d) => d.modelCalls > 0).map((d) => `${d.messageIds.join(",")} T+${Math.round((d.at - T0) / 1000)}s ${d.budgetPool}`);
    expect(called).toEqual(["1 T+3s unaddressed", "2 T+93s unaddressed", "5 T+363s unaddressed", "6 T+453s unaddressed", "9 T+723s unaddressed", "10 T+813s unaddressed"]);
    const skipped = decisions.filter((d) => d.modelCalls === 0).map((d) => `${d.messageIds.join(",")} ${reasonOf(d.outcome)} ${d.detail}`);
    expect(skipped).toEqual(["3 over-budget unaddressed:5m:messages 2/2 +1", "4 over-budget unaddressed:5m:messages 2/2 +1", "7 over-budget unaddressed:5m:messages 2/2 +1", "8 over-budget unaddressed:5m:messages 2/2 +1"]);
  });
});
