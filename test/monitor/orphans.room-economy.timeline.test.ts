// The room's economy on the orphan path (issue 28): what the agents of a room leave alone so that
// their share of the room's lines goes to the questions nobody answers. Three agents of ours
// (alice, bob, carol) on one simulated clock through the real group clients and monitors
// (src/replay/room.ts), with the `helpful` stand-in for the model (a hosted model cannot run
// here); default settings, the model takes 2 s. Ranks and due times as in orphans.timeline.test.ts:
//   q1: carol 0.1354 → due T+64.061s · bob 0.3220 → T+69.659s · alice 0.7961 → T+83.883s
//   q2 (asked at T+1s): carol 0.0235 → T+61.705s · alice 0.8978 → T+87.933s · bob 0.9306 → T+88.916s
import { describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { replyToOf } from "../../src/monitor/floor.ts";
import { runRoomReplay, type RoomReport } from "../../src/replay/room.ts";
import type { LogLine } from "../../src/replay/log.ts";

const T0 = Date.UTC(2026, 0, 5, 14, 30, 0);
let lineNo = 0;
const line = (id: string, ms: number, sender: string, content: string): LogLine => ({ id, ts: T0 + ms, sender, content, line: ++lineNo });

function room(lines: LogLine[]): Promise<RoomReport> {
  return runRoomReplay(
    lines,
    ["alice", "bob", "carol"].map((persona, i) => ({ persona, settings: DEFAULT_GROUP_SETTINGS, responder: "helpful" as const, agentLatencyMs: 2000, seed: 1 + i })),
  );
}

const sends = (r: RoomReport) => r.sent.map((m) => [m.timestamp - T0, m.aid, replyToOf(m.metadata) ?? null]);
/** Per agent: its dispatches of `trigger` as [T+ms, message ids, sent, skip reason, detail]. */
const dispatches = (r: RoomReport, trigger: string) =>
  Object.fromEntries(
    r.agents.map((a) => [a.persona, a.report.dispatches.filter((d) => d.trigger === trigger).map((d) => [d.at - T0, d.messageIds, d.outcome.sent, d.outcome.skipReason, d.outcome.detail])]),
  );

const Q1 = "anyone know why apt hangs on update?";

describe("the orphan path in a room spends the agents' share on questions nobody answers", () => {
  it("a bare `?` (or `huh?`) is a reaction, not a question to the room → never watched, no agent speaks", async () => {
    // T+0     sam: "?" · T+20s ann: "huh?"
    // T+60s … T+90s  no orphan turn comes: neither line says anything an agent could answer
    const r = await room([line("q1", 0, "sam", "?"), line("q2", 20_000, "ann", "huh?")]);
    expect(dispatches(r, "orphan")).toEqual({ alice: [], bob: [], carol: [] });
    expect(sends(r)).toEqual([]);
  });

  it("the asker asks again before anyone answered → only the newer question is answered (once); the older one's turns drop it without a model call", async () => {
    // T+0        sam asks q1 · T+1s sam rephrases: q2, the question sam is asking now
    // T+61.705s  carol's q2 turn → model, sent T+65.799s (2000 + 0.0235 × 4000 ms after the reply)
    // T+65.799s  carol's q1 turn (due T+64.061s, waited for her q2 dispatch): sam asked again → dropped
    // T+69.659s  bob's q1 turn · T+83.883s alice's: sam asked again → dropped
    // T+87.933s  alice's q2 turn · T+88.916s bob's: carol answered → yield
    const r = await room([line("q1", 0, "sam", Q1), line("q2", 1000, "sam", "is the main mirror down maybe?")]);
    expect(sends(r)).toEqual([[65_799, "carol", "q2"]]);
    expect(dispatches(r, "orphan")).toEqual({
      alice: [
        [83_883, ["q1"], false, "orphan-stale", "q1:asked-again:q2"],
        [87_933, ["q2"], false, "answered-by-other", "q2:by:carol"],
      ],
      bob: [
        [69_659, ["q1"], false, "orphan-stale", "q1:asked-again:q2"],
        [88_916, ["q2"], false, "answered-by-other", "q2:by:carol"],
      ],
      carol: [
        [61_705, ["q2"], true, null, null],
        [65_799, ["q1"], false, "orphan-stale", "q1:asked-again:q2"],
      ],
    });
  });

  it("after an agent answered, its asker talks with another person → their next line is theirs, not an engaged follow-up: no agent speaks again", async () => {
    // T+0        sam asks q1 · T+64.061s carol's turn → sent T+68.603s (sam is engaged with carol)
    // T+80s      dan: "sam: did you check the proxy settings?" — sam and dan are in an exchange
    // T+90s      sam: "where are those set?" — to dan: no engaged dispatch; a normal one leaves it
    //            to people, and it is never watched (its asker is in an exchange)
    const r = await room([
      line("q1", 0, "sam", Q1),
      line("d1", 80_000, "dan", "sam: did you check the proxy settings?"),
      line("f1", 90_000, "sam", "where are those set?"),
    ]);
    expect(sends(r)).toEqual([[68_603, "carol", "q1"]]);
    expect(dispatches(r, "engaged")).toEqual({ alice: [], bob: [], carol: [] });
  });

  it("the same follow-up with no other person talking to the asker → still carol's engaged follow-up, answered", async () => {
    // T+0 sam asks q1 · T+68.603s carol's answer · T+90s sam: "where are those set?" → carol's
    // engaged follow-up (sam talks with carol alone) → answered
    const r = await room([line("q1", 0, "sam", Q1), line("f1", 90_000, "sam", "where are those set?")]);
    expect(sends(r)[0]).toEqual([68_603, "carol", "q1"]);
    expect(dispatches(r, "engaged")["carol"]).toMatchObject([[expect.any(Number), ["f1"], true, null, null]]);
  });

  it("someone answers without naming the asker and the asker replies to it → taken up: no agent answers, no model call", async () => {
    // T+0        sam asks q1 (to the room)
    // T+20s      dan: "probably a stale lock in /var/lib/apt" — names nobody (not an answer by findAnswer)
    // T+30s      sam: "ah that was it, thanks" — sam answers dan's line: the question was taken up
    // T+64.061s  carol's q1 turn · T+69.659s bob's · T+83.883s alice's → answered-by-other (taken up by dan)
    const r = await room([
      line("q1", 0, "sam", Q1),
      line("d1", 20_000, "dan", "probably a stale lock in /var/lib/apt"),
      line("s1", 30_000, "sam", "ah that was it, thanks"),
    ]);
    expect(sends(r)).toEqual([]);
    expect(dispatches(r, "orphan")).toEqual({
      alice: [[83_883, ["q1"], false, "answered-by-other", "q1:taken-up:dan"]],
      bob: [[69_659, ["q1"], false, "answered-by-other", "q1:taken-up:dan"]],
      carol: [[64_061, ["q1"], false, "answered-by-other", "q1:taken-up:dan"]],
    });
  });

  it("the same unnamed line with no reply from the asker → the question is still nobody's: carol answers it once", async () => {
    // T+0 sam asks q1 · T+20s dan's unnamed line · sam says nothing more
    // T+64.061s carol's turn → sent T+68.603s · bob and alice yield to carol's answer
    const r = await room([line("q1", 0, "sam", Q1), line("d1", 20_000, "dan", "probably a stale lock in /var/lib/apt")]);
    expect(sends(r)).toEqual([[68_603, "carol", "q1"]]);
  });
});
