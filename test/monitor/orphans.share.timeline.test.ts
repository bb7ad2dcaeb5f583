// The agents' share of a room's talk (orphans.maxAgentShare, 0.05), held over the day: agents'
// lines (ours and other agents') of the last 24 h against people's, never fewer than 100 people's
// lines. What it limits: orphaned questions (the orphan path) and follow-ups that are only possibly
// ours (`maybeOurs`); never a mention or an engaged follow-up.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { replyToOf } from "../../src/monitor/floor.ts";
import { MonitorState } from "../../src/monitor/monitor-state.ts";
import { createGroupMonitor, type DispatchDecision } from "../../src/monitor/monitor.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { runRoomReplay } from "../../src/replay/room.ts";
import type { DispatchBatch, InboundMessage } from "../../src/types.ts";
import { ALICE, T0, batch, msg, recordingSender, testGroup } from "./helpers.ts";
import { reasonOf } from "../support/outcome.ts";

const SHARE = DEFAULT_GROUP_SETTINGS.orphans.maxAgentShare;
const MIN = 60_000;
const H = 3600_000;

describe("MonitorState.agentsAtShare: agents' lines of the last 24 h against people's", () => {
  it("a fresh room counts as 100 people's lines: the fifth agent's line is the last within 0.05", () => {
    const s = new MonitorState(undefined);
    s.noteRoomLines([1, 2, 3, 4].map((i) => ({ ts: T0 + i * 1000, agent: true })));
    expect(s.agentsAtShare(SHARE, T0 + 10_000)).toEqual({ at: false, agents: 4, people: 0 });
    s.noteRoomLines([{ ts: T0 + 5000, agent: true }]);
    expect(s.agentsAtShare(SHARE, T0 + 10_000)).toEqual({ at: true, agents: 5, people: 0 });
  });

  it("past 100 people's lines the share grows with them: 300 people's lines hold 15 agents' lines", () => {
    const s = new MonitorState(undefined);
    s.noteRoomLines(Array.from({ length: 300 }, (_, i) => ({ ts: T0 + i * 10_000, agent: false })));
    s.noteRoomLines(Array.from({ length: 14 }, (_, i) => ({ ts: T0 + i * 60_000, agent: true })));
    const now = T0 + H;
    expect(s.agentsAtShare(SHARE, now)).toEqual({ at: false, agents: 14, people: 300 });
    s.noteRoomLines([{ ts: now, agent: true }]);
    expect(s.agentsAtShare(SHARE, now)).toEqual({ at: true, agents: 15, people: 300 });
  });

  it("lines older than 24 h no longer count: at T+25h the agents' lines of T…T+1h are forgotten", () => {
    const s = new MonitorState(undefined);
    s.noteRoomLines(Array.from({ length: 10 }, (_, i) => ({ ts: T0 + i * MIN, agent: true })));
    expect(s.agentsAtShare(SHARE, T0 + H).at).toBe(true);
    s.noteRoomLines([{ ts: T0 + 25 * H, agent: false }]);
    expect(s.agentsAtShare(SHARE, T0 + 25 * H)).toEqual({ at: false, agents: 0, people: 1 });
  });
});

describe("an orphaned question after a quiet stretch: the share is the day's, not the last 100 lines'", () => {
  // Three agents of ours (alice, bob, carol) on one simulated clock (src/replay/room.ts), the
  // `helpful` stand-in for the model (a hosted model cannot run here), the model takes 2 s;
  // helperbot is an agent that is not ours. q1's ranks (orphans.timeline.test.ts): carol 0.1354 →
  // her turn at the grace (60 s) + 4.061 s.
  it("people wrote 200 lines, helperbot 5 right before the question → within the day's share (6 ≤ 10): carol answers it once", async () => {
    // T+0 … T+199s  ann and dan, 200 lines of talk (no questions, nobody named)
    // T+200 … T+204s helperbot: 5 lines — 5 of the room's last 100 lines
    // T+210s        sam asks q1
    // T+274.061s    carol's turn: agents 5 of the day, people 200 (6 ≤ 0.05 × 200) → model → sent T+278.603s
    //               (before, at 5 of the last 100 lines, every turn was agents-share and nobody answered)
    let n = 0;
    const line = (id: string, ms: number, sender: string, content: string): LogLine => ({ id, ts: T0 + ms, sender, content, line: ++n });
    const lines = [
      ...Array.from({ length: 200 }, (_, i) => line(`p${i}`, i * 1000, i % 2 === 0 ? "ann" : "dan", `the build on my box took ${i + 3} minutes today`)),
      ...[0, 1, 2, 3, 4].map((i) => line(`b${i}`, 200_000 + i * 1000, "helperbot", `nightly build ${i + 1} passed all checks`)),
      line("q1", 210_000, "sam", "anyone know why apt hangs on update?"),
    ];
    const r = await runRoomReplay(
      lines,
      ["alice", "bob", "carol"].map((persona, i) => ({ persona, settings: DEFAULT_GROUP_SETTINGS, responder: "helpful" as const, agentLatencyMs: 2000, seed: 1 + i, agents: ["helperbot"] })),
    );
    expect(r.sent.map((m) => [m.timestamp - T0, m.aid, replyToOf(m.metadata)])).toEqual([[278_603, "carol", "q1"]]);
  });
});

describe("a follow-up that is only possibly ours, in a room whose agents have had their share", () => {
  // Alice's monitor alone (batches built by hand, fake timers); helper.agentcp.io is another agent
  // in the group (a room). The model replies to everything (a stand-in), at once.
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function alice() {
    const decisions: DispatchDecision[] = [];
    const group = testGroup();
    const sender = recordingSender(() => Date.now());
    const real = createGroupMonitor({
      identityId: "alice",
      identity: ALICE,
      groupId: "g1",
      settings: DEFAULT_GROUP_SETTINGS,
      humans: ["sam", "ann"],
      agents: ["helper.agentcp.io"],
      backend: createScriptedBackend({ mode: "always", replyText: (r) => (r.dispatchId === 1 ? "the mirror is slow for everyone this morning" : "try clearing the apt lists first") }),
      sender,
      logger: createMemoryLogger(),
      random: () => 0.5,
      onDecision: (d) => decisions.push(d),
    });
    const handle = (b: DispatchBatch) => real.handle(b, group.context).then(group.settle);
    return { handle, decisions, sender };
  }

  /** T+0: helper.agentcp.io's 5 lines and ann's 2 in one batch: agents at their share (5 of a fresh room's 100). */
  const busyRoom = (): InboundMessage[] => [
    ...[1, 2, 3, 4, 5].map((i) => msg(`h${i}`, "helper.agentcp.io", `nightly build ${i} passed all checks`, T0 + i * 100)),
    msg("a1", "ann", "the mirror looks slow today", T0 + 600),
    msg("a2", "ann", "at least the build is green", T0 + 700),
  ];
  const followUp = (extra: Partial<InboundMessage>, at: number) =>
    batch({ dispatchId: 2, now: at, messages: [msg("s1", "sam", "that did not work either", at, extra)], mention: { triggerType: "engaged" } });

  /** Batch 1 (busyRoom) at T+1s, then sam's line marked `extra` at T+60s: each dispatch as [id, outcome, reason, detail]. */
  async function busyRoomThenSam(extra: Partial<InboundMessage>): Promise<unknown[]> {
    const a = alice();
    for (const [b, until] of [[batch({ dispatchId: 1, now: T0 + 1000, messages: busyRoom() }), 60_000], [followUp(extra, T0 + 60_000), 60_000]] as const) {
      const done = a.handle(b);
      await vi.advanceTimersByTimeAsync(until);
      await done;
    }
    return a.decisions.map((d) => [d.dispatchId, d.outcome.kind, reasonOf(d.outcome) ?? null, d.detail ?? null]);
  }

  it("maybe ours → left alone, no model call (agents-share, maybe-ours:6/3)", async () => {
    // T+0      batch 1: the helper's 5 lines and ann's 2 → unaddressed, no question: the model answers (sent)
    //          → agents 6 of the day (helper 5, ours 1), people 2 (3 with sam's line)
    // T+60s    batch 2: sam's line, maybe ours (after another speaker) → agents-share before any model call
    expect(await busyRoomThenSam({ maybeOurs: true })).toEqual([
      [1, "sent", null, null],
      [2, "skipped", "agents-share", "maybe-ours:6/3"],
    ]);
  });

  it("the same line marked engaged (surely ours) → answered: the share never holds back a conversation with us", async () => {
    // T+0 batch 1 as above (sent) · T+60s sam's line, engaged → model → sent
    expect(await busyRoomThenSam({ engaged: true })).toEqual([
      [1, "sent", null, null],
      [2, "sent", null, null],
    ]);
  });
});
