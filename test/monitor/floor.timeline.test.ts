// A room of three agents of ours (alice, bob, carol) on one simulated clock, through the real
// group clients and monitors (src/replay/room.ts), with the `helpful` stand-in for the model (it
// wants to answer every question; a hosted model cannot run here). Default settings: buffer gate
// 3 s, cooldown 30 s, a short reply waits 2–6 s, the model takes 2 s — and orphans off (FLOOR_ONLY).
//
// Each agent's place for a question is its floor rank: the send waits 2000 + rank × 4000 ms.
//   q1: carol 0.1354 → 2542 ms · bob 0.3220 → 3288 ms · alice 0.7961 → 5184 ms
//   q2: carol 0.0235 → 2094 ms · alice 0.8978 → 5591 ms · bob 0.9306 → 5722 ms
import { describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { floorRank, replyToOf } from "../../src/monitor/floor.ts";
import { runRoomReplay, type RoomReport } from "../../src/replay/room.ts";
import type { LogLine } from "../../src/replay/log.ts";

const T0 = Date.UTC(2026, 0, 5, 14, 30, 0);
const at = (ms: number) => T0 + ms;
let lineNo = 0;
const line = (id: string, ms: number, sender: string, content: string): LogLine => ({ id, ts: at(ms), sender, content, line: ++lineNo });

// The floor as the normal path uses it, claiming an open question at once: orphans off (with the
// defaults, an open question is first left to people; test/monitor/orphans.timeline.test.ts), and
// the unaddressed allowance's pace off (budget.unaddressedEvery): every agent looks at every
// open question of these short timelines.
const FLOOR_ONLY = {
  ...DEFAULT_GROUP_SETTINGS,
  orphans: { ...DEFAULT_GROUP_SETTINGS.orphans, enabled: false },
  budget: { ...DEFAULT_GROUP_SETTINGS.budget, unaddressedEvery: 0 },
};

function room(lines: LogLine[], agents: string[] = [], deliveryMs = 0, strangers: string[] = []): Promise<RoomReport> {
  return runRoomReplay(
    lines,
    ["alice", "bob", "carol"].map((persona, i) => ({ persona, settings: FLOOR_ONLY, responder: "helpful" as const, agentLatencyMs: 2000, seed: 1 + i, agents, strangers })),
    undefined,
    deliveryMs,
  );
}

/** Per agent: every dispatch as [T+ms, trigger, message ids, sent, skip reason, detail]. */
function decisions(r: RoomReport): Record<string, unknown[]> {
  return Object.fromEntries(
    r.agents.map((a) => [
      a.persona,
      a.report.dispatches.map((d) => [d.at - T0, d.trigger, d.messageIds, d.outcome.sent, d.outcome.skipReason, d.outcome.detail]),
    ]),
  );
}

/** Every reply that went out: [T+ms, who, what it claims to answer]. */
const sends = (r: RoomReport) => r.sent.map((m) => [m.timestamp - T0, m.aid, replyToOf(m.metadata) ?? null]);

describe("the floor: ranks used in the timelines below", () => {
  it("are what the header says", () => {
    expect([floorRank("carol", "q1"), floorRank("bob", "q1"), floorRank("alice", "q1")].map((r) => r.toFixed(4))).toEqual(["0.1354", "0.3220", "0.7961"]);
    expect([floorRank("carol", "q2"), floorRank("alice", "q2"), floorRank("bob", "q2")].map((r) => r.toFixed(4))).toEqual(["0.0235", "0.8978", "0.9306"]);
  });
});

describe("the floor: a room of three agents", () => {
  it("3 agents, one open question → one answer, the other two yield to it", async () => {
    // T+0       sam asks the room (q1)
    // T+3s      every agent's buffer gate fires: three dispatches of [q1]; model replies at T+5s
    // T+7.542s  carol (rank 0.1354) sends, reply_to q1
    // T+8.288s  bob's delay ends: carol's answer is there → yields (answered-by-other)
    // T+10.184s alice's delay ends → yields the same way
    // T+38.288s / T+40.184s after their cooldowns, bob and alice see carol's answer alone: an
    //           answer to someone else is not answered (agent-answer, no model call)
    const r = await room([line("q1", 0, "sam", "anyone know why apt hangs on update?")]);
    expect(sends(r)).toEqual([[7542, "carol", "q1"]]);
    expect(decisions(r)).toEqual({
      alice: [
        [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:carol"],
        [40_184, "normal", ["carol:reply-1"], false, "agent-answer", "answers-to-others"],
      ],
      bob: [
        [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:carol"],
        [38_288, "normal", ["carol:reply-1"], false, "agent-answer", "answers-to-others"],
      ],
      carol: [[3000, "normal", ["q1"], true, null, null]],
    });
    expect(r.room).toMatchObject({ openQuestions: 1, answeredBy: { none: 0, one: 1, twoOrMore: 0 }, longestAgentChain: 1 });
  });

  it("a question a person answers first → no agent answers it", async () => {
    // T+0     sam asks (q1) · T+3s three dispatches, replies ready at T+5s
    // T+6s    dan answers sam by name
    // T+7.542s, T+8.288s, T+10.184s: carol, bob, alice find dan's answer → all yield
    const r = await room([line("q1", 0, "sam", "anyone know why apt hangs on update?"), line("d1", 6000, "dan", "sam: your mirror is down, pick another one")]);
    expect(sends(r)).toEqual([]);
    const firsts = Object.fromEntries(Object.entries(decisions(r)).map(([k, v]) => [k, v[0]]));
    expect(firsts).toEqual({
      alice: [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:dan"],
      bob: [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:dan"],
      carol: [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:dan"],
    });
    expect(r.room.answeredBy).toEqual({ none: 1, one: 0, twoOrMore: 0 });
  });

  it("an outsider answers every open question with junk (a `.` naming it in reply_to, `sam: no`) → each still answered once", async () => {
    // zed joined the open group by its link: nobody vouches for zed, and neither line says anything.
    // T+0       sam asks q1 · T+1s zed: "." with reply_to q1
    // T+4s      three dispatches of [q1, z1] (the buffer gate restarted at T+1s); replies ready at T+6s
    // T+8.542s  carol (q1 rank 0.1354) answers q1 · bob and alice find carol's answer → yield
    // T+120s    sam asks q2 · T+121s zed: "sam: no"
    // T+124s    three dispatches of [q2, z2] (carol's engaged with sam now) · carol answers at once when
    //           her reply is ready, bob and alice wait their q2 turns and find her answer → yield
    const r = await room(
      [
        line("q1", 0, "sam", "How should I set up backups?"),
        { ...line("z1", 1000, "zed", "."), metadata: { reply_to: "q1" } },
        line("q2", 120_000, "sam", "What is a good way to rotate logs?"),
        line("z2", 121_000, "zed", "sam: no"),
      ],
      [],
      0,
      ["zed"],
    );
    expect(sends(r)).toEqual([
      [8542, "carol", "q1"],
      [134_282, "carol", "q2"],
    ]);
    const firsts = Object.fromEntries(Object.entries(decisions(r)).map(([k, v]) => [k, v.filter((d) => ((d as unknown[])[2] as string[]).some((id) => id === "z1" || id === "z2"))]));
    expect(firsts).toEqual({
      alice: [
        [4000, "normal", ["q1", "z1"], false, "answered-by-other", "after-delay q1:by:carol"],
        [124_000, "normal", ["q2", "z2"], false, "answered-by-other", "after-delay q2:by:carol"],
      ],
      bob: [
        [4000, "normal", ["q1", "z1"], false, "answered-by-other", "after-delay q1:by:carol"],
        [124_000, "normal", ["q2", "z2"], false, "answered-by-other", "after-delay q2:by:carol"],
      ],
      carol: [
        [4000, "normal", ["q1", "z1"], true, null, null],
        [124_000, "engaged", ["q2", "z2"], true, null, null],
      ],
    });
    expect(r.room.answeredBy).toEqual({ none: 0, one: 2, twoOrMore: 0 });
  });

  it("an agent that is not ours just posts (no reply_to) → ours yield to it", async () => {
    // T+0     sam asks (q1) · T+3s three dispatches, replies ready at T+5s
    // T+6s    helperbot (a known agent, not ours) posts, naming nothing
    // T+7.542s, T+8.288s, T+10.184s: carol, bob, alice take its post as the answer → all yield
    const r = await room([line("q1", 0, "sam", "anyone know why apt hangs on update?"), line("h1", 6000, "helperbot", "Run apt-get clean and retry.")], ["helperbot"]);
    expect(sends(r)).toEqual([]);
    const firsts = Object.fromEntries(Object.entries(decisions(r)).map(([k, v]) => [k, v[0]]));
    expect(firsts).toEqual({
      alice: [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:helperbot"],
      bob: [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:helperbot"],
      carol: [3000, "normal", ["q1"], false, "answered-by-other", "after-delay q1:by:helperbot"],
    });
  });

  it("two questions at once → each answered once, by different agents", async () => {
    // T+0     sam asks q1 · T+0.5s ann asks q2 · T+3.5s three dispatches of [q1, q2] (short: 2–6 s)
    // T+5.5s  replies ready; each agent claims the newest open one, q2
    // T+7.594s  carol (q2 rank 0.0235) answers q2
    // T+11.091s alice (q2 rank 0.8978): q2 is answered, q1 is still open → takes q1 and waits her
    //           q1 turn (rank 0.7961 → 5184 ms)
    // T+11.222s bob (q2 rank 0.9306) the same → his q1 turn (rank 0.3220 → 3288 ms)
    // T+14.510s bob answers q1 · T+16.275s alice: both answered → yields (the detail names the newest)
    const r = await room([line("q1", 0, "sam", "how do I mount an iso image?"), line("q2", 500, "ann", "why is wifi so slow on 20.04?")]);
    expect(sends(r)).toEqual([
      [7594, "carol", "q2"],
      [14_510, "bob", "q1"],
    ]);
    const firsts = Object.fromEntries(Object.entries(decisions(r)).map(([k, v]) => [k, v[0]]));
    expect(firsts).toEqual({
      alice: [3500, "normal", ["q1", "q2"], false, "answered-by-other", "after-delay q2:by:carol"],
      bob: [3500, "normal", ["q1", "q2"], true, null, null],
      carol: [3500, "normal", ["q1", "q2"], true, null, null],
    });
    expect(r.room.answeredBy).toEqual({ none: 0, one: 2, twoOrMore: 0 });
  });

  it("two questions at once, with 300 ms between a send and the others seeing it → still each answered once", async () => {
    // q1 ranks: carol 0.1354 · bob 0.3220 · alice 0.7961 — q2 ranks: carol 0.0235 · alice 0.8978 · bob 0.9306
    // T+3.5s    three dispatches of [q1, q2]; T+5.5s replies ready; each claims q2 and waits its q2 rank
    // T+7.594s  carol answers q2 (the others see it at T+7.894s)
    // T+11.091s alice's q2 wait ends: q2 answered, q1 open → she takes q1 and waits her q1 turn
    //           (rank 0.7961 → 5184 ms) rather than sending at once
    // T+11.222s bob the same: q1 turn 3288 ms
    // T+14.510s bob answers q1 (seen by the others at T+14.810s)
    // T+16.275s alice's q1 turn ends: bob's answer is there → yields
    const r = await room([line("q1", 0, "sam", "how do I mount an iso image?"), line("q2", 500, "ann", "why is wifi so slow on 20.04?")], [], 300);
    expect(sends(r)).toEqual([
      [7594, "carol", "q2"],
      [14_510, "bob", "q1"],
    ]);
    expect(r.room.answeredBy).toEqual({ none: 0, one: 2, twoOrMore: 0 });
  });

  it("a follow-up question from someone an agent talked with (engaged for it only) → still one answer", async () => {
    // T+0       sam asks q1 · T+7.542s carol answers it (reply_to q1): sam is engaged for carol
    // T+38.288s / T+40.184s bob and alice skip carol's answer (agent-answer); their cooldowns run
    //           to T+68.288s and T+70.184s
    // T+60s     sam asks again (q2) · T+63s carol's buffer gate: an engaged line does not wait out
    //           the cooldown → engaged dispatch; reply ready at T+65s; the floor holds for an
    //           engaged line too: carol waits her q2 rank, 2094 ms
    // T+67.094s carol sends, reply_to q2
    // T+68.288s bob dispatches [q2, carol's answer] → yields before the model call
    // T+70.184s alice the same
    const r = await room([line("q1", 0, "sam", "anyone know why apt hangs on update?"), line("q2", 60_000, "sam", "which mirror should I pick then?")]);
    expect(sends(r)).toEqual([
      [7542, "carol", "q1"],
      [67_094, "carol", "q2"],
    ]);
    const d = decisions(r);
    expect(d["carol"]).toEqual([
      [3000, "normal", ["q1"], true, null, null],
      [63_000, "engaged", ["q2"], true, null, null],
    ]);
    expect(d["bob"]!.at(-1)).toEqual([68_288, "normal", ["q2", "carol:reply-2"], false, "answered-by-other", "q2:by:carol"]);
    expect(d["alice"]!.at(-1)).toEqual([70_184, "normal", ["q2", "carol:reply-2"], false, "answered-by-other", "q2:by:carol"]);
    expect(r.agents.map((a) => a.report.dispatches.at(-1)!.outcome.modelCalled)).toEqual([false, false, true]);
    expect(r.room.answeredBy).toEqual({ none: 0, one: 2, twoOrMore: 0 });
  });

  it("an open question next to an engaged line for one agent → its answer claims the question, the others yield", async () => {
    // T+0       sam asks q1 · T+7.542s carol answers it (reply_to q1): sam is engaged for carol
    // T+60s     ann asks the room (q2) · T+60.5s sam, after carol's answer: "ok, that worked"
    // T+63.5s   carol's engaged dispatch of [q2, s2]; reply ready at T+65.5s, a normal reply
    //           (8–20 s) waits her q2 rank 0.0235 → 8282 ms
    // T+68.288s bob's cooldown ends: dispatch of [q2, s2], model writes, waits rank 0.9306
    // T+70.184s alice the same, rank 0.8978
    // T+73.782s carol sends; reply_to names q2, the question she took — not sam's engaged line,
    //           which the others would not read as an answer to q2
    // after their delays, bob and alice find carol's answer to q2 → yield
    const r = await room([
      line("q1", 0, "sam", "anyone know why apt hangs on update?"),
      line("q2", 60_000, "ann", "anyone know how to mount an iso image?"),
      line("s2", 60_500, "sam", "ok, that worked"),
    ]);
    expect(sends(r)).toEqual([
      [7542, "carol", "q1"],
      [73_782, "carol", "q2"],
    ]);
    const d = decisions(r);
    expect(d["carol"]!.at(-1)).toEqual([63_500, "engaged", ["q2", "s2"], true, null, null]);
    expect(d["bob"]![2]).toEqual([68_288, "normal", ["q2", "s2"], false, "answered-by-other", "after-delay q2:by:carol"]);
    expect(d["alice"]![2]).toEqual([70_184, "normal", ["q2", "s2"], false, "answered-by-other", "after-delay q2:by:carol"]);
    expect(r.room.answeredBy).toEqual({ none: 0, one: 2, twoOrMore: 0 });
  });

  it("an agent addressed by name among others → it answers at once, the others stay out", async () => {
    // T+0     sam: "bob, …?" → bob's mention dispatch at T+0, reply at T+2s (no delay for a mention)
    // T+5s    alice and carol (buffer gate restarted by bob's reply at T+2s) dispatch [m1, bob's
    //         reply]; the only question was put to bob → addressed-to-other, nothing sent
    const r = await room([line("m1", 0, "sam", "bob, why does apt hang on update?")]);
    expect(sends(r)).toEqual([[2000, "bob", "m1"]]);
    expect(decisions(r)).toEqual({
      alice: [[5000, "normal", ["m1", "bob:reply-1"], false, "addressed-to-other", "m1"]],
      bob: [[0, "mention", ["m1"], true, null, null]],
      carol: [[5000, "normal", ["m1", "bob:reply-1"], false, "addressed-to-other", "m1"]],
    });
    expect(r.room).toMatchObject({ openQuestions: 0, agentMessages: 1, longestAgentChain: 1 });
  });
});
