// Orphaned questions in a room of three agents of ours (alice, bob, carol) on one simulated clock,
// through the real group clients and monitors (src/replay/room.ts), with the `helpful` stand-in for
// the model (it answers every question it is given; a hosted model cannot run here). Default
// settings: an open question is left to people for 60 s (orphans.graceMs), then each agent takes
// it at its own rank of a 30 s spread (orphans.spreadMs); the model takes 2 s; a short answer's send
// waits 2000 + rank × 4000 ms. Ranks (util/rank.ts):
//   q1: carol 0.1354 → due T+64.062s · bob 0.3220 → T+69.660s · alice 0.7961 → T+83.883s
//   q2 (asked at T+1s): carol 0.0235 → T+61.705s · alice 0.8978 → T+87.934s · bob 0.9306 → T+88.918s
import { describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { floorRank, replyToOf } from "../../src/monitor/floor.ts";
import { runRoomReplay, type RoomReport } from "../../src/replay/room.ts";
import type { LogLine } from "../../src/replay/log.ts";
import type { GroupSettings } from "../../src/types.ts";

const T0 = Date.UTC(2026, 0, 5, 14, 30, 0);
const at = (ms: number) => T0 + ms;
let lineNo = 0;
const line = (id: string, ms: number, sender: string, content: string): LogLine => ({ id, ts: at(ms), sender, content, line: ++lineNo });

function room(lines: LogLine[], settings: GroupSettings = DEFAULT_GROUP_SETTINGS): Promise<RoomReport> {
  return runRoomReplay(
    lines,
    ["alice", "bob", "carol"].map((persona, i) => ({ persona, settings, responder: "helpful" as const, agentLatencyMs: 2000, seed: 1 + i })),
  );
}

/** Per agent: every dispatch as [T+ms, trigger, message ids, sent, skip reason, detail]. */
function decisions(r: RoomReport): Record<string, unknown[]> {
  return Object.fromEntries(
    r.agents.map((a) => [a.persona, a.report.dispatches.map((d) => [d.at - T0, d.trigger, d.messageIds, d.outcome.sent, d.outcome.skipReason, d.outcome.detail])]),
  );
}

/** Every reply that went out: [T+ms, who, what it claims to answer]. */
const sends = (r: RoomReport) => r.sent.map((m) => [m.timestamp - T0, m.aid, replyToOf(m.metadata) ?? null]);
const modelCalls = (r: RoomReport) => Object.fromEntries(r.agents.map((a) => [a.persona, a.report.summary.modelCalls]));

describe("orphaned questions: the ranks the timelines use", () => {
  it("are what the header says", () => {
    expect([floorRank("carol", "q1"), floorRank("bob", "q1"), floorRank("alice", "q1")].map((r) => r.toFixed(4))).toEqual(["0.1354", "0.3220", "0.7961"]);
    expect([floorRank("carol", "q2"), floorRank("alice", "q2"), floorRank("bob", "q2")].map((r) => r.toFixed(4))).toEqual(["0.0235", "0.8978", "0.9306"]);
  });
});

/** Per agent: its orphan dispatches as [T+ms, sent, skip reason, detail]. */
function orphanDecisions(r: RoomReport): Record<string, unknown[]> {
  return Object.fromEntries(
    r.agents.map((a) => [a.persona, a.report.dispatches.filter((d) => d.trigger === "orphan").map((d) => [d.at - T0, d.outcome.sent, d.outcome.skipReason, d.outcome.detail])]),
  );
}

const Q1 = "anyone know why apt hangs on update?";

describe("orphaned questions in a room of three agents", () => {
  it("a question a person answers at T+20s, naming the asker → no agent speaks; no orphan dispatch starts (the asker is in an exchange)", async () => {
    // T+0        sam asks the room (q1)
    // T+3s       three buffer gates fire: [q1] is left to people (left-to-people, no model call)
    // T+20s      dan answers: "sam: try another mirror…" — sam and dan are in an exchange
    // T+33s      three dispatches of [a1]: no question in it, the stand-in stays silent
    // T+64.061s  carol's orphan turn · T+69.659s bob's · T+83.883s alice's: q1's asker is in an
    //            exchange since it was asked → the question is dropped, no dispatch, no model call
    const r = await room([line("q1", 0, "sam", Q1), line("a1", 20_000, "dan", "sam: try another mirror, the main one is slow today")]);
    expect(sends(r)).toEqual([]);
    expect(decisions(r)["carol"]).toEqual([
      [3000, "normal", ["q1"], false, "left-to-people", "q1"],
      [33_000, "normal", ["a1"], false, "silent", "no-reply-token"],
    ]);
    expect(orphanDecisions(r)).toEqual({ alice: [], bob: [], carol: [] });
    // One call each, for dan's line; none for the orphan.
    expect(modelCalls(r)).toEqual({ alice: 1, bob: 1, carol: 1 });
  });

  it("a question a person answers at T+20s by reply_to, naming nobody → no agent speaks; the orphan dispatches find the answer and make no model call", async () => {
    // T+0        sam asks the room (q1) · T+3s left to people by all three
    // T+20s      dan answers with reply_to q1 and no name: no exchange, but a linked answer
    // T+33s      three dispatches of [a1]: no question in it, the stand-in stays silent
    // T+64.061s  carol's orphan turn: dan answered q1 → yields, no model call
    // T+69.659s  bob's · T+83.883s alice's: the same
    const answer = { ...line("a1", 20_000, "dan", "try another mirror, the main one is slow today"), metadata: { reply_to: "q1" } };
    const r = await room([line("q1", 0, "sam", Q1), answer]);
    expect(sends(r)).toEqual([]);
    expect(orphanDecisions(r)).toEqual({
      alice: [[83_883, false, "answered-by-other", "q1:by:dan"]],
      bob: [[69_659, false, "answered-by-other", "q1:by:dan"]],
      carol: [[64_061, false, "answered-by-other", "q1:by:dan"]],
    });
    expect(modelCalls(r)).toEqual({ alice: 1, bob: 1, carol: 1 });
  });

  it("an orphaned question → carol (ranked first) answers after the grace period; bob and alice see her claim and yield", async () => {
    // T+0        sam asks (q1) · T+3s left to people by all three
    // T+64.061s  carol's turn: nobody answered → model call (orphan allowance), reply ready T+66.061s
    // T+68.603s  carol sends after 2000 + 0.1354 × 4000 ms, reply_to q1
    // T+69.659s  bob's turn: carol's answer is there → yields, no model call
    // T+71.603s  bob and alice: carol's answer alone is an answer to someone else (agent-answer)
    // T+83.883s  alice's turn → yields
    const r = await room([line("q1", 0, "sam", Q1)]);
    expect(sends(r)).toEqual([[68_603, "carol", "q1"]]);
    expect(decisions(r)).toEqual({
      alice: [
        [3000, "normal", ["q1"], false, "left-to-people", "q1"],
        [71_603, "normal", ["carol:reply-1"], false, "agent-answer", "answers-to-others"],
        [83_883, "orphan", ["q1"], false, "answered-by-other", "q1:by:carol"],
      ],
      bob: [
        [3000, "normal", ["q1"], false, "left-to-people", "q1"],
        [69_659, "orphan", ["q1"], false, "answered-by-other", "q1:by:carol"],
        [71_603, "normal", ["carol:reply-1"], false, "agent-answer", "answers-to-others"],
      ],
      carol: [
        [3000, "normal", ["q1"], false, "left-to-people", "q1"],
        [64_061, "orphan", ["q1"], true, null, null],
      ],
    });
    expect(modelCalls(r)).toEqual({ alice: 0, bob: 0, carol: 1 });
    expect(r.agents.find((a) => a.persona === "carol")!.report.dispatches.at(-1)!.outcome.replyType).toBe("short");
  });

  it("two orphaned questions at once → each answered once", async () => {
    // T+0 sam asks q1 · T+1s ann asks q2 · T+4s both left to people
    // T+61.705s  carol's q2 turn → model, sends T+65.799s (2000 + 0.0235 × 4000 ms after the reply)
    // T+64.061s  carol's q1 turn comes while she is busy: it goes when her q2 dispatch ends (T+65.799s);
    //            an orphan's send waits its rank of the short range: sent T+70.341s (2000 + 0.1354 × 4000 ms)
    // T+69.659s  bob's q1 turn: no answer yet → model call; when his reply is ready (T+71.659s) carol's
    //            answer is there → yields before his send delay
    // T+83.883s, T+87.933s, T+88.916s  alice's q1 and q2, bob's q2: answered → yield, no model call
    const r = await room([line("q1", 0, "sam", Q1), line("q2", 1000, "ann", "which kernel is the default now?")]);
    expect(sends(r)).toEqual([
      [65_799, "carol", "q2"],
      [70_341, "carol", "q1"],
    ]);
    expect(orphanDecisions(r)).toEqual({
      alice: [
        [83_883, false, "answered-by-other", "q1:by:carol"],
        [87_933, false, "answered-by-other", "q2:by:carol"],
      ],
      bob: [
        [69_659, false, "answered-by-other", "q1:by:carol"],
        [88_916, false, "answered-by-other", "q2:by:carol"],
      ],
      carol: [
        [61_705, true, null, null],
        [65_799, true, null, null],
      ],
    });
    expect(r.room.answeredBy).toEqual({ none: 0, one: 2, twoOrMore: 0 });
  });

  it("an orphaned question in a HEATED group → still answered once, as a short answer, on the orphan allowance while the unaddressed one is spent", async () => {
    // T−120s … T−4s  30 lines of chatter from five people: the group is HEATED, the unaddressed
    //                allowance spent (over-budget at T−23s), the cooldown doubled
    // T+0            sam asks (q1); chatter goes on every 6 s and nobody answers
    // T+37s          the cooled-down normal path takes q1 with the chatter: left to people
    // T+64.061s      carol's orphan turn (HEATED): model call on the orphan allowance, a short answer
    //                (a reaction is no answer), sent T+68.603s · bob (T+69.659s), alice (T+83.883s) yield
    const who = ["dan", "eve", "kim", "lee", "max"];
    const r = await room([
      ...Array.from({ length: 30 }, (_, i) => line(`c${i}`, -120_000 + i * 4000, who[i % 5]!, `chatter line ${i} about the release`)),
      line("q1", 0, "sam", Q1),
      ...Array.from({ length: 20 }, (_, i) => line(`d${i}`, 5000 + i * 6000, who[i % 5]!, `more chatter ${i} about lunch`)),
    ]);
    expect(sends(r)).toEqual([[68_603, "carol", "q1"]]);
    const carol = r.agents.find((a) => a.persona === "carol")!.report.dispatches;
    expect(carol.filter((d) => d.trigger === "orphan").map((d) => [d.at - T0, d.vitality.state, d.outcome.replyType, d.outcome.sent])).toEqual([[64_061, "HEATED", "short", true]]);
    expect(carol.find((d) => d.messageIds.includes("q1") && d.trigger === "normal")!.outcome.skipReason).toBe("left-to-people");
    expect(carol.some((d) => d.outcome.skipReason === "over-budget" && d.outcome.detail?.startsWith("unaddressed:"))).toBe(true);
    expect(orphanDecisions(r)).toMatchObject({
      alice: [[83_883, false, "answered-by-other", "q1:by:carol"]],
      bob: [[69_659, false, "answered-by-other", "q1:by:carol"]],
    });
  });

  it("a question an agent was named in → that agent answers at once, as before; the others never call the model for it", async () => {
    // T+0        sam: "bob, why does apt hang on update?" — bob's mention: answered at once (T+2s)
    // T+5s       alice and carol: a question put to another member by name (addressed-to-other)
    // T+64.061s, T+83.883s  carol's and alice's orphan turns: not an open question → no model call
    const r = await room([line("q1", 0, "sam", "bob, why does apt hang on update?")]);
    expect(sends(r)).toEqual([[2000, "bob", "q1"]]);
    expect(decisions(r)).toEqual({
      alice: [
        [5000, "normal", ["q1", "bob:reply-1"], false, "addressed-to-other", "q1"],
        [83_883, "orphan", ["q1"], false, "addressed-to-other", "q1"],
      ],
      bob: [[0, "mention", ["q1"], true, null, null]],
      carol: [
        [5000, "normal", ["q1", "bob:reply-1"], false, "addressed-to-other", "q1"],
        [64_061, "orphan", ["q1"], false, "addressed-to-other", "q1"],
      ],
    });
    expect(modelCalls(r)).toEqual({ alice: 0, bob: 1, carol: 0 });
  });

  it("a follow-up question inside an exchange → no agent takes it, engaged with anyone or not; a newcomer's question beside it is answered once", async () => {
    // T−60s      dan: "sam: did you try switching the mirror?" — sam and dan are in an exchange
    // T+0        sam: "how do I change it?" (q1) — inside that exchange, not the room's question
    // T+1s       ann asks the room (q2), in no exchange
    // T+61.705s  carol's q2 turn → answers q2 (sent T+65.799s); bob and alice yield to her claim
    // q1: never watched by any agent (no orphan dispatch, no model call). Before, an agent engaged
    // with nobody did not work out addressees, so it watched q1 and answered it.
    const r = await room([
      line("x1", -60_000, "dan", "sam: did you try switching the mirror?"),
      line("q1", 0, "sam", "how do I change it?"),
      line("q2", 1000, "ann", "is there a way to see which package owns a file?"),
    ]);
    expect(sends(r)).toEqual([[65_799, "carol", "q2"]]);
    for (const a of r.agents) expect(a.report.dispatches.filter((d) => d.trigger === "orphan" && d.messageIds.includes("q1"))).toEqual([]);
  });

  it("the asker turns to someone during the grace period → the question is dropped at its due time, no agent speaks", async () => {
    // T+0        sam asks the room (q1)
    // T+30s      sam: "dan: any idea?" — sam turned to dan: q1 is now theirs
    // T+64.061s, T+69.659s, T+83.883s  the agents' turns: q1's asker is in an exchange → dropped
    const r = await room([line("q1", 0, "sam", Q1), line("d1", 25_000, "dan", "hm"), line("t1", 30_000, "sam", "dan: any idea?")]);
    expect(sends(r)).toEqual([]);
    expect(orphanDecisions(r)).toEqual({ alice: [], bob: [], carol: [] });
  });

  /** Eight people's lines, each answered by name `latencyMs` later by another person (the room's pace), ending before T−`gapMs`. */
  const pace = (latencyMs: number, gapMs: number): LogLine[] =>
    Array.from({ length: 8 }, (_, i) => {
      const t = -gapMs - (8 - i) * 2 * latencyMs;
      return [line(`w${i}`, t, `p${i}`, "the build is green again"), line(`r${i}`, t + latencyMs, `h${i}`, `p${i}: nice, thanks`)];
    }).flat();

  it("a room whose people answer each other in 10 s → the grace is 30 s (1.5 × 10 s, at least half of graceMs): carol answers at T+34.061s", async () => {
    // T−∞ … T−60s  eight lines each answered by name 10 s later: median answer latency 10 s
    // T+0          sam asks (q1) · grace = max(30 s, 1.5 × 10 s) = 30 s
    // T+34.061s    carol's turn (30 s + 0.1354 × 30 s) → model 2 s → sent T+38.603s
    const r = await room([...pace(10_000, 60_000), line("q1", 0, "sam", Q1)]);
    expect(sends(r)).toEqual([[38_603, "carol", "q1"]]);
    expect(orphanDecisions(r)["carol"]).toEqual([[34_061, true, null, null]]);
  });

  it("a room whose people answer each other in 60 s → the grace is 90 s: carol answers at T+94.061s; in 100 s → capped at 120 s (T+124.061s)", async () => {
    const slow = await room([...pace(60_000, 60_000), line("q1", 0, "sam", Q1)]);
    expect(sends(slow)).toEqual([[98_603, "carol", "q1"]]);
    const slower = await room([...pace(100_000, 60_000), line("q1", 0, "sam", Q1)]);
    expect(sends(slower)).toEqual([[128_603, "carol", "q1"]]);
  });

  it("adaptiveGrace off → the configured grace whatever the room's pace", async () => {
    const settings = { ...DEFAULT_GROUP_SETTINGS, orphans: { ...DEFAULT_GROUP_SETTINGS.orphans, adaptiveGrace: false } };
    const r = await room([...pace(10_000, 60_000), line("q1", 0, "sam", Q1)], settings);
    expect(sends(r)).toEqual([[68_603, "carol", "q1"]]);
  });
});
