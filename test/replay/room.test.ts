// `acp-group replay --persona A --persona B …`: a room of agents of ours end to end through main(),
// the room's figures (measureRoom on a hand-written timeline), and a smoke run on a real IRC log.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { parseLog } from "../../src/replay/log.ts";
import { measureRoom, runRoomReplay, type RoomMetrics } from "../../src/replay/room.ts";
import type { ReplayReport, ReplaySent } from "../../src/replay/replay.ts";
import { line, runCli, T0, tempDir, type TempDir } from "./helpers.ts";

let dir: TempDir;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.remove());

const ROOM = ["--persona", "alice", "--persona", "bob", "--persona", "carol", "--responder", "helpful"];
// Annotated (directedTo): q1 is an open question no other person answered.
const LOG = [
  { ...line("q1", T0, "sam", "anyone know why apt hangs on update?"), directedTo: [] },
  { ...line("n1", T0 + 60_000, "sam", "found it, thanks"), directedTo: [] },
];

describe("replay with several --persona", () => {
  it("--json: per agent what one persona gives (persona, dispatches, drops, summary), and the room", async () => {
    const run = await runCli(["replay", dir.jsonl("room.jsonl", LOG), ...ROOM, "--json"]);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.out) as { agents: Array<{ persona: string } & Pick<ReplayReport, "dispatches" | "drops" | "summary">>; room: RoomMetrics };
    expect(Object.keys(out).sort()).toEqual(["agents", "room"]);
    expect(out.agents.map((a) => a.persona)).toEqual(["alice", "bob", "carol"]);
    expect(Object.keys(out.agents[0]!).sort()).toEqual(["dispatches", "drops", "persona", "summary"]);
    // The dispatch shape is the single-persona one.
    const single = JSON.parse((await runCli(["replay", dir.jsonl("one.jsonl", LOG), "--persona", "alice", "--json"])).out) as ReplayReport;
    expect(Object.keys(out.agents[0]!.dispatches[0]!).sort()).toEqual(Object.keys(single.dispatches[0]!).sort());
    expect(Object.keys(out.agents[0]!.dispatches[0]!.outcome).sort()).toEqual(Object.keys(single.dispatches[0]!.outcome).sort());
    expect(out.agents.map((a) => a.summary.sent)).toEqual([0, 0, 1]);
    expect(out.room).toEqual({
      agents: 3,
      personMessages: 2,
      agentMessages: 1,
      agentPerPerson: 0.5,
      openQuestions: 1,
      answeredBy: { none: 0, one: 1, twoOrMore: 0 },
      multiAnswerRate: 0,
      longestAgentChain: 1,
      orphans: expect.objectContaining({ open: 1, orphaned: 1, orphanedAnsweredBy: { none: 0, one: 1, twoOrMore: 0 }, orphanedOnceInTime: 1, orphanedOnceInTimeRate: 1 }),
    });
  });

  it("text: each agent's report under its name, then the room's figures; --html adds a room section", async () => {
    const html = `${dir.path}/room.html`;
    const run = await runCli(["replay", dir.jsonl("room-text.jsonl", LOG), ...ROOM, "--html", html]);
    expect(run.code).toBe(0);
    const lines = run.out.split("\n");
    expect(lines.filter((l) => l.startsWith("── agent "))).toEqual(["── agent alice ──", "── agent bob ──", "── agent carol ──"]);
    expect(lines).toContain("room: 3 agents, 2 person messages, 1 agent messages (0.500 per person message), longest agent chain 1");
    expect(lines).toContain("open questions: 1 — answered by no agent 0, by one 1, by two or more 0 (0% of those answered)");
    expect(lines.find((l) => l.startsWith("orphaned questions: "))).toMatch(
      /^orphaned questions: 1 of 1 annotated open questions no person answered — answered by no agent 0, by one 1, by two or more 0; once within 3 min 1 \(100%\); time to the answer p50 \d+ s, p90 \d+ s; person-answered ones an agent answered too 0$/,
    );
    expect(run.out).toMatch(/skipped \(answered-by-other\)/);
    const page = readFileSync(html, "utf8");
    expect(page).toContain(`<section id="room"><h2>the room</h2>`);
    expect(page).toContain("<b>0 / 1 / 0</b><span>answered by 0 / 1 / 2+ agents</span>");
    expect(page).toContain("<b>1 (100%)</b><span>orphaned: answered once within 3 min</span>");
  });

  it("a persona that is in the log speaks its own lines; to the other agents they are an agent's", async () => {
    const log = [line("b1", T0, "bob", "I can look at apt later"), line("q1", T0 + 1000, "sam", "anyone know why apt hangs?")];
    const run = await runCli(["replay", dir.jsonl("room-known.jsonl", log), "--persona", "bob", "--persona", "zed", "--responder", "helpful", "--json"]);
    const out = JSON.parse(run.out) as { agents: Array<{ persona: string; drops: ReplayReport["drops"]; dispatches: ReplayReport["dispatches"] }>; room: RoomMetrics };
    expect(out.agents[0]!.drops).toEqual([{ id: "b1", reason: "self" }]);
    expect(out.agents[1]!.drops).toEqual([]);
    expect(out.agents[1]!.dispatches[0]!.messageIds).toEqual(["b1", "q1"]);
    // bob's line counts as an agent message; sam's is the one person message.
    expect(out.room.personMessages).toBe(1);
  });

  it("usage errors: the same persona twice; --aid or --alias with several", async () => {
    const file = dir.jsonl("room-bad.jsonl", LOG);
    const twice = await runCli(["replay", file, "--persona", "alice", "--persona", "Alice"]);
    expect(twice.code).toBe(2);
    expect(twice.err).toContain("each `--persona` must name a different agent");
    const aid = await runCli(["replay", file, "--persona", "alice", "--persona", "bob", "--aid", "alice.agentcp.io"]);
    expect(aid.code).toBe(2);
    expect(aid.err).toContain("`--aid` and `--alias` name one agent");
  });
});

describe("measureRoom", () => {
  const sent = (aid: string, ms: number, replyTo: string | null, answers: string[]): ReplaySent => ({
    aid,
    msgId: `${aid}:${ms}`,
    timestamp: T0 + ms,
    content: "x",
    metadata: replyTo === null ? null : { reply_to: replyTo },
    answers,
  });

  it("open questions, who answered each, agent messages per person message, the longest agent run", () => {
    const lines = [
      line("q1", T0, "sam", "anyone know why apt hangs?"),
      line("q2", T0 + 1000, "ann", "sam: did you try another mirror?"), // addressed: not open
      line("q3", T0 + 2000, "dan", "which kernel is the default now?"),
      line("n1", T0 + 60_000, "sam", "ok"),
    ].map((l, i) => ({ ...l, line: i + 1 }));
    const m = measureRoom({
      lines,
      isAgentLine: () => false,
      agentNames: [
        { persona: "a", aid: "a" },
        { persona: "b", aid: "b" },
      ],
      // T+3s a claims q1 · T+4s b answers its batch [q1, q2, q3] without a claim (counts for q1 and q3)
      // · T+5s a claims q3: a run of three agent messages before sam's "ok".
      sent: [sent("a", 3000, "q1", ["q1", "q2", "q3"]), sent("b", 4000, null, ["q1", "q2", "q3"]), sent("a", 5000, "q3", ["q3"])],
      reports: [],
    });
    expect(m).toEqual({
      agents: 2,
      personMessages: 4,
      agentMessages: 3,
      agentPerPerson: 0.75,
      openQuestions: 2,
      answeredBy: { none: 0, one: 0, twoOrMore: 2 },
      multiAnswerRate: 1,
      longestAgentChain: 3,
      // No line is annotated: the log does not say who answered, so nothing is counted orphaned.
      orphans: { open: 0, orphaned: 0, orphanedAnsweredBy: { none: 0, one: 0, twoOrMore: 0 }, orphanedOnceInTime: 0, orphanedOnceInTimeRate: 0, personAnsweredAlsoByAgent: 0, timeToAnswerMs: { p50: null, p90: null } },
    });
  });

  it("orphaned questions by the log's annotation: no other person replied; answered once within 3 min, twice, late, by nobody; time to the answer", () => {
    const q = (id: string, ms: number, sender: string, content: string, directedTo: string[], replyTo: string[] = []) => ({ ...line(id, T0 + ms, sender, content), directedTo, replyTo });
    const lines = [
      q("q1", 0, "sam", "anyone know why apt hangs?", [], ["q1"]), // a self-link starts a thread: still orphaned
      q("q2", 1000, "ann", "which kernel is the default now?", ["ann"]), // directed at its asker only: open
      q("q3", 2000, "dan", "how do I mount an iso?", []),
      q("r3", 30_000, "eve", "dan: mount -o loop", ["dan"], ["q3"]), // a person answered q3
      q("q4", 40_000, "kim", "is the mirror down?", []),
      q("q5", 50_000, "lee", "ann: did you reboot?", ["ann"]), // directed at ann: not open
      q("q6", 60_000, "max", "where are the logs?", []),
      q("q7", 70_000, "ned", "what changed in 24.04?", []), // nobody answers
      line("n1", T0 + 5000, "sam", "unannotated question?"), // no directedTo: the log does not say
    ].map((l, i) => ({ ...l, line: i + 1 }));
    const m = measureRoom({
      lines,
      isAgentLine: () => false,
      agentNames: [{ persona: "a", aid: "a" }, { persona: "b", aid: "b" }],
      sent: [
        sent("a", 60_000, "q1", ["q1"]), // q1: once, 60 s
        sent("a", 65_000, "q2", ["q2"]), // q2: a and b → twice
        sent("b", 66_000, "q2", ["q2"]),
        sent("b", 40_000, "q3", ["q3"]), // q3 a person answered too
        sent("b", 40_000 + 240_000, "q4", ["q4"]), // q4: once but 4 min late
        sent("a", 100_000, null, ["q6", "n1"]), // q6: once (its batch), 40 s
      ],
      reports: [],
    });
    // Open: q1, q2, q3, q4, q6, q7 (q5 is directed at ann, n1 unannotated); a person answered q3.
    expect(m.orphans).toEqual({
      open: 6,
      orphaned: 5,
      orphanedAnsweredBy: { none: 1, one: 3, twoOrMore: 1 },
      orphanedOnceInTime: 2,
      orphanedOnceInTimeRate: 2 / 5,
      personAnsweredAlsoByAgent: 1,
      // First answers: q1 60 s, q2 64 s, q4 240 s, q6 40 s → sorted 40, 60, 64, 240.
      timeToAnswerMs: { p50: 64_000, p90: 240_000 },
    });
  });
});

describe("a room on a real log (smoke)", () => {
  it("ubuntu-2010-08-17, three fresh agents, helpful stand-in: ≤ 10% of answered open questions get 2+ answers, no agent chain over 2, ≤ 0.05 agent messages per person message", async () => {
    const { lines } = parseLog(readFileSync(new URL("../fixtures/irc-dev/ubuntu-2010-08-17.jsonl", import.meta.url), "utf8"));
    const room = await runRoomReplay(
      lines,
      ["room-agent-a", "room-agent-b", "room-agent-c"].map((persona, i) => ({ persona, settings: DEFAULT_GROUP_SETTINGS, responder: "helpful" as const, seed: 1 + i })),
    );
    const r = room.room;
    expect(r.openQuestions).toBeGreaterThan(100);
    expect(r.answeredBy.one + r.answeredBy.twoOrMore).toBeGreaterThan(0);
    expect(r.multiAnswerRate).toBeLessThanOrEqual(0.1);
    expect(r.longestAgentChain).toBeLessThanOrEqual(2);
    expect(r.agentPerPerson).toBeLessThanOrEqual(0.05);
  });
});
