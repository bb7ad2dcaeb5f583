// Who may spend the agent, end to end over fake timers: the real group client hands batches to the
// real monitor (deterministic back-end, recording transport). A stranger who floods mentions gets
// their share of the addressed allowance and then silence; the others and the owner are answered.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { initGroupClientForIdentity } from "../../src/group/group-client.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupMonitor, type DispatchDecision } from "../../src/monitor/monitor.ts";
import { MemberDirectory } from "../../src/members/member-types.ts";
import type { GroupMessage, GroupSettings } from "../../src/types.ts";
import { ALICE, T0, recordingSender, settingsWith } from "./helpers.ts";
import { reasonOf } from "../support/outcome.ts";

const MALLORY = "mallory.agentcp.io";
const BOB = "bob.agentcp.io";
const OWNER = "carol.agentcp.io"; // ALICE's owner
// Distinct replies, so the reply dedup never hides a call.
const WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "ocean", "violet", "copper", "garden", "lemon", "harbor", "falcon", "meadow", "silver", "pepper", "canyon", "willow", "ember", "prairie", "glacier", "orchid", "thunder", "saffron", "lantern", "quartz", "tundra", "juniper", "comet", "marble"];

function gm(id: number, atMs: number, content: string, sender: string): GroupMessage {
  return { msgId: String(id), groupId: "g1", sender, content, contentType: "text", timestamp: T0 + atMs, metadata: null };
}

async function at(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
}

function setup(settings: GroupSettings) {
  const sender = recordingSender(() => Date.now());
  let n = 0;
  const reply = () => {
    n++;
    return `${WORDS[n % 30]} ${WORDS[(n * 7) % 30]} ${WORDS[(n * 13) % 30]}.`;
  };
  const backend = createScriptedBackend({ mode: "always", replyText: reply });
  const decisions: DispatchDecision[] = [];
  const logger = createMemoryLogger();
  const monitor = createGroupMonitor({ identityId: "alice", identity: ALICE, groupId: "g1", settings, humans: [MALLORY, BOB], backend, sender, logger, random: () => 0.5, onDecision: (d) => decisions.push(d) });
  const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings, humans: [MALLORY, BOB], dispatch: monitor.handle, logger });
  return { sender, backend, decisions, logger, monitor, client };
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("per-sender share of the addressed allowance", () => {
  it("a stranger flooding mentions gets 10 of the 15 addressed calls in 5 min; bob and the owner are still answered", async () => {
    // An addressed 5m allowance of 15 calls and the default senderShare 0.67 → 10 calls per sender per 5 min.
    const { sender, backend, decisions, monitor, client } = setup(settingsWith({ budget: { addressed: { "5m": { messages: 15, tokens: 180_000 } } } }));

    // T+0s … T+290s: mallory mentions Alice every 10 s (30 mentions).
    for (let i = 0; i < 30; i++) {
      await at(i * 10_000);
      client.feedBufferGate([gm(i + 1, i * 10_000, `Alice, answer me ${i + 1}`, MALLORY)]);
    }
    // T+292s: bob mentions Alice once. T+294s: the owner does.
    await at(292_000);
    client.feedBufferGate([gm(31, 292_000, "Alice, what time is the standup?", BOB)]);
    await at(294_000);
    client.feedBufferGate([gm(32, 294_000, "Alice, please summarise the thread", OWNER)]);
    await at(296_000);

    const byTrigger = decisions.map((d) => ({ msg: d.messageIds.join(","), sent: (d.outcome.kind === "sent"), skip: reasonOf(d.outcome) ?? null, payer: d.payer ?? null }));
    // Mallory: answered at T+0 … T+90s (msgs 1–10), then silence with no model call.
    expect(byTrigger.slice(0, 10)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => ({ msg: String(n), sent: true, skip: null, payer: MALLORY })));
    expect(byTrigger.slice(10, 30)).toEqual(Array.from({ length: 20 }, (_, i) => ({ msg: String(i + 11), sent: false, skip: "sender-over-share", payer: null })));
    expect(byTrigger[30]).toEqual({ msg: "31", sent: true, skip: null, payer: BOB });
    expect(byTrigger[31]).toEqual({ msg: "32", sent: true, skip: null, payer: OWNER });
    expect(decisions[10]!.detail).toBe(`${MALLORY} addressed:5m:messages 10/10`);
    expect(backend.calls).toHaveLength(12);
    expect(sender.sent).toHaveLength(12);
    // Nothing of the refusal reached the group.
    expect(sender.sent.map((s) => s.content).join("\n")).not.toMatch(/share|budget|refus/i);

    // T+301s: mallory's call at T+0 has left the 5-min window — one more answer, then silence again.
    await at(301_000);
    client.feedBufferGate([gm(33, 301_000, "Alice, answer me again", MALLORY)]);
    await at(302_000);
    client.feedBufferGate([gm(34, 302_000, "Alice, and again", MALLORY)]);
    await at(303_000);
    expect(decisions.slice(32).map((d) => [d.messageIds.join(","), d.outcome.kind === "sent", reasonOf(d.outcome) ?? null])).toEqual([
      ["33", true, null],
      ["34", false, "sender-over-share"],
    ]);
    // The charges survive a restart (persisted with the group state).
    expect(monitor.snapshot().senderCharges!.filter((c) => c[2] === MALLORY)).toHaveLength(11);
    await client.close();
    monitor.close();
  });

  it("strangers who use up the whole addressed allowance between them cannot stop the owner", async () => {
    // Allowance 6 calls per 5 min, share 0.5 → 3 each: two strangers take all six.
    const { decisions, monitor, client } = setup(settingsWith({ senderShare: 0.5, budget: { addressed: { "5m": { messages: 6, tokens: 1_000_000 } } } }));
    // T+0s … T+70s: mallory and bob alternate mentions every 10 s.
    for (let i = 0; i < 8; i++) {
      await at(i * 10_000);
      client.feedBufferGate([gm(i + 1, i * 10_000, `Alice, question ${WORDS[i]}`, i % 2 === 0 ? MALLORY : BOB)]);
    }
    // T+80s: mallory again (pool and share spent). T+90s: the owner.
    await at(80_000);
    client.feedBufferGate([gm(9, 80_000, "Alice, one more from me", MALLORY)]);
    await at(90_000);
    client.feedBufferGate([gm(10, 90_000, "Alice, status please", OWNER)]);
    await at(91_000);
    expect(decisions.map((d) => [d.messageIds.join(","), d.outcome.kind === "sent", reasonOf(d.outcome) ?? null])).toEqual([
      ["1", true, null],
      ["2", true, null],
      ["3", true, null],
      ["4", true, null],
      ["5", true, null],
      ["6", true, null],
      ["7", false, "sender-over-share"],
      ["8", false, "sender-over-share"],
      ["9", false, "sender-over-share"],
      ["10", true, null],
    ]);
    await client.close();
    monitor.close();
  });
});

describe("strangers as a class", () => {
  const ERIN = "erin.agentcp.io"; // a known member (config `humans`)
  const stranger = (i: number) => `guest-${String(i).padStart(2, "0")}.agentcp.io`;

  it("40 strangers mentioning once each cannot use up the addressed allowance: erin, a known member, is still answered", async () => {
    // Default settings: the addressed 5m allowance is 30 calls. 40 aids our config does not name
    // each mention Alice once; each alone is far inside its own share. The group service says each
    // is a person (as for people joining through `chat` where the operator allows it), so neither
    // the agent gap nor the loop guard holds them. Together they may use `strangerShare` (0.5) of
    // each window: 15 of 30.
    const members = new MemberDirectory({ humans: [ERIN], owner: OWNER });
    for (let i = 1; i <= 41; i++) members.recordService(stranger(i), "human");
    const sender = recordingSender(() => Date.now());
    let n = 0;
    const backend = createScriptedBackend({ mode: "always", replyText: () => `${WORDS[++n % 30]} ${WORDS[(n * 7) % 30]} ${WORDS[(n * 13) % 30]}.` });
    const decisions: DispatchDecision[] = [];
    const logger = createMemoryLogger();
    const settings = settingsWith({});
    const monitor = createGroupMonitor({ identityId: "alice", identity: ALICE, groupId: "g1", settings, humans: [ERIN], memberTypes: members, backend, sender, logger, random: () => 0.5, onDecision: (d) => decisions.push(d) });
    const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings, humans: [ERIN], memberTypes: members, dispatch: monitor.handle, logger });

    // T+0s, T+6s, …, T+234s: guest-01 … guest-40 each mention Alice once, 6 s apart.
    for (let i = 0; i < 40; i++) {
      await at(i * 6_000);
      client.feedBufferGate([gm(i + 1, i * 6_000, `Alice, a question from ${WORDS[i % 30]} ${i + 1}`, stranger(i + 1))]);
    }
    // T+240s: erin (in `humans`) mentions Alice. T+246s: the owner does.
    await at(240_000);
    client.feedBufferGate([gm(41, 240_000, "Alice, is the release still on for today?", ERIN)]);
    await at(246_000);
    client.feedBufferGate([gm(42, 246_000, "Alice, please summarise the thread", OWNER)]);
    await at(250_000);

    const rows = decisions.map((d) => [d.messageIds.join(","), d.outcome.kind === "sent", reasonOf(d.outcome) ?? null]);
    // guest-01 … guest-15 answered (T+0 … T+84s); guest-16 … guest-40 refused without a model call.
    expect(rows.slice(0, 15)).toEqual(Array.from({ length: 15 }, (_, i) => [String(i + 1), true, null]));
    expect(rows.slice(15, 40)).toEqual(Array.from({ length: 25 }, (_, i) => [String(i + 16), false, "strangers-over-share"]));
    expect(decisions[15]!.detail).toBe("strangers addressed:5m:messages 15/15");
    // erin and the owner: answered.
    expect(rows.slice(40)).toEqual([
      ["41", true, null],
      ["42", true, null],
    ]);
    expect(backend.calls).toHaveLength(17);

    // T+301s: guest-01's call at T+0 has left the 5-min window: one more stranger is answered.
    await at(301_000);
    client.feedBufferGate([gm(43, 301_000, "Alice, one more question", stranger(41))]);
    await at(302_000);
    expect(decisions.at(-1)!.outcome.kind).toBe("sent");
    await client.close();
    monitor.close();
  });

  it("a known member flooding mentions is held by their own share, never by the strangers' class", async () => {
    // The owner is checked against the owner's own calls; a known member against the whole allowance and their share.
    const sender = recordingSender(() => Date.now());
    let n = 0;
    const backend = createScriptedBackend({ mode: "always", replyText: () => `${WORDS[++n % 30]} ${WORDS[(n * 11) % 30]} ${WORDS[(n * 17) % 30]}.` });
    const decisions: DispatchDecision[] = [];
    const settings = settingsWith({});
    const monitor = createGroupMonitor({ identityId: "alice", identity: ALICE, groupId: "g1", settings, humans: [ERIN], backend, sender, random: () => 0.5, onDecision: (d) => decisions.push(d) });
    const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings, humans: [ERIN], dispatch: monitor.handle });
    // T+0s … T+125s: erin mentions Alice every 5 s (26 mentions): her share is 20 of 30.
    for (let i = 0; i < 26; i++) {
      await at(i * 5_000);
      client.feedBufferGate([gm(i + 1, i * 5_000, `Alice, item ${WORDS[i % 30]} ${i}`, ERIN)]);
    }
    await at(130_000);
    const rows = decisions.map((d) => [d.outcome.kind === "sent", reasonOf(d.outcome) ?? null]);
    expect(rows.filter(([sent]) => sent)).toHaveLength(20);
    expect(rows.slice(20)).toEqual(Array.from({ length: 6 }, () => [false, "sender-over-share"]));
    await client.close();
    monitor.close();
  });
});

describe("allowFrom / denyFrom", () => {
  it("a denied sender's mentions never wake the agent (counted, logged once); the owner matches the pattern and is still answered", async () => {
    const { sender, backend, decisions, logger, monitor, client } = setup(settingsWith({ denyFrom: ["*.agentcp.io"], allowFrom: [] }));
    // T+0s, T+5s, T+10s: mallory mentions Alice three times. T+15s: the owner does.
    for (let i = 0; i < 3; i++) {
      await at(i * 5_000);
      client.feedBufferGate([gm(i + 1, i * 5_000, "Alice, run this for me", MALLORY)]);
    }
    await at(15_000);
    client.feedBufferGate([gm(4, 15_000, "Alice, hello", OWNER)]);
    await at(16_000);
    expect(decisions.map((d) => d.messageIds)).toEqual([["4"]]);
    expect(backend.calls).toHaveLength(1);
    // The model never saw the refused lines.
    expect(backend.calls[0]!.body).not.toContain("run this for me");
    expect(sender.sent).toHaveLength(1);
    expect(client.stats().dropped["refused-sender"]).toBe(3);
    expect(logger.entries.filter((r) => r.event === "group.sender-refused").map((r) => r.fields["sender"])).toEqual([MALLORY]);
    await client.close();
    monitor.close();
  });

  it("allowFrom lets only the listed senders (and the owner) address the agent", async () => {
    const { decisions, client, monitor } = setup(settingsWith({ allowFrom: ["bob.*"] }));
    await at(0);
    client.feedBufferGate([gm(1, 0, "Alice, hi from mallory", MALLORY)]);
    await at(5_000);
    client.feedBufferGate([gm(2, 5_000, "Alice, hi from bob", BOB)]);
    await at(10_000);
    client.feedBufferGate([gm(3, 10_000, "Alice, hi from carol", OWNER)]);
    await at(11_000);
    expect(decisions.map((d) => [d.messageIds.join(","), d.outcome.kind === "sent"])).toEqual([
      ["2", true],
      ["3", true],
    ]);
    expect(client.stats().dropped["refused-sender"]).toBe(1);
    await client.close();
    monitor.close();
  });
});
