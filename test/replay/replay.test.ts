// `acp-group replay` end to end through main(): a hand-written log in, the --json report out.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { line, runCli, T0, tempDir, type TempDir } from "./helpers.ts";
import type { ReplayReport } from "../../src/replay/replay.ts";

let dir: TempDir;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.remove());

async function replayJson(file: string, ...extra: string[]): Promise<ReplayReport> {
  const run = await runCli(["replay", file, "--persona", "alice", "--json", ...extra]);
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.out) as ReplayReport;
}

// Seed 003 §4.3: three unaddressed batches, then a mention 2.5 s in merges all of them at once.
const SEED_TIMELINE = [
  line("a1", T0, "bob", "morning"),
  line("a2", T0, "carol", "morning bob"),
  line("a3", T0, "bob", "anyone seen the build?"),
  line("b1", T0 + 1000, "dave", "it is red"),
  line("b2", T0 + 1000, "carol", "again?"),
  line("c1", T0 + 2000, "bob", "flaky test"),
  line("c2", T0 + 2000, "bob", "the network one"),
  line("c3", T0 + 2000, "carol", "retry it"),
  line("c4", T0 + 2000, "dave", "did that"),
  line("d1", T0 + 2500, "bob", "alice, can you look at the build?"),
];

describe("replay --json: the seed §4.3 timeline", () => {
  it("T+0 a×3, T+1s b×2, T+2s c×4, T+2.5s d×1 naming alice → one mention dispatch at T+2.5s with all 10 in order", async () => {
    const report = await replayJson(dir.jsonl("seed.jsonl", SEED_TIMELINE));

    expect(Object.keys(report).sort()).toEqual(["addressed", "dispatches", "drops", "messages", "payers", "summary"]);
    // No annotations in this log: nothing to measure reach against.
    expect(report.addressed).toBeNull();
    expect(report.messages).toEqual([
      { id: "a1", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "a2", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "a3", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "b1", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "b2", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "c1", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "c2", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "c3", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "c4", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "d1", isMention: true, engaged: false, why: "mention", reached: true, directed: null },
    ]);
    expect(report.dispatches).toEqual([
      {
        at: T0 + 2500,
        trigger: "mention",
        messageIds: ["a1", "a2", "a3", "b1", "b2", "c1", "c2", "c3", "c4", "d1"],
        batchesMerged: 4,
        mentionCount: 1,
        vitality: { state: "ACTIVE", messagesIn5m: 10, uniqueSpeakersIn5m: 3, myMessagesIn5m: 0 },
        outcome: { replyType: "normal", sent: false, skipReason: "silent", text: null, budgetRatio: 0, modelCalled: true, detail: "no-reply-token" },
      },
    ]);
    expect(report.drops).toEqual([]);
    expect(report.summary).toEqual({
      messages: 10,
      dispatches: 1,
      mentions: 1,
      maxWaitMs: 2500,
      p95WaitMs: 2500,
      maxMentionWaitMs: 0,
      modelCalls: 1,
      sent: 0,
      skipped: { silent: 1 },
      replyTypes: {},
    });
  });

  it("without --json prints a readable timeline and the totals", async () => {
    const run = await runCli(["replay", dir.jsonl("seed-text.jsonl", SEED_TIMELINE), "--persona", "alice"]);
    expect(run.code).toBe(0);
    expect(run.out).toContain("14:30:02  dispatch mention  10 msg(s), 4 batch(es), mentions=1, ACTIVE (10 msgs/3 speakers in 5m) → skipped (silent)");
    expect(run.out).toContain("[mentioned] bob: alice, can you look at the build?");
    expect(run.out).toContain("10 messages, 1 mentions → 1 dispatches (1 model calls, 10.0% of messages), 0 sent");
  });
});

describe("replay: the persona's own lines", () => {
  it("are dropped as `self` and counted in myMessagesIn5m of the next dispatch", async () => {
    const report = await replayJson(
      dir.jsonl("self.jsonl", [
        line("b1", T0, "bob", "hi all"),
        line("s1", T0 + 1000, "alice", "hello everyone"),
        line("c1", T0 + 2000, "carol", "alice, ping"),
      ]),
    );
    expect(report.drops).toEqual([{ id: "s1", reason: "self" }]);
    expect(report.messages).toEqual([
      { id: "b1", isMention: false, engaged: false, why: null, reached: true, directed: null },
      { id: "s1", isMention: false, engaged: false, why: null, reached: false, directed: null },
      { id: "c1", isMention: true, engaged: false, why: "mention", reached: true, directed: null },
    ]);
    expect(report.dispatches.map((d) => [d.at, d.trigger, d.messageIds, d.batchesMerged, d.vitality])).toEqual([
      [T0 + 2000, "mention", ["b1", "c1"], 2, { state: "ACTIVE", messagesIn5m: 3, uniqueSpeakersIn5m: 3, myMessagesIn5m: 1 }],
    ]);
  });

  it("matches the persona case-insensitively and by --aid", async () => {
    const report = await replayJson(
      dir.jsonl("self-aid.jsonl", [
        line("s1", T0, "Alice", "morning"),
        line("s2", T0 + 1000, "alice.agentcp.io", "still here"),
        line("b1", T0 + 2000, "bob", "hi"),
      ]),
      "--aid",
      "alice.agentcp.io",
    );
    expect(report.drops).toEqual([
      { id: "s1", reason: "self" },
      { id: "s2", reason: "self" },
    ]);
    // bob's "hi" is the first line after ours that names nobody: it may answer us (maybe ours).
    expect(report.dispatches.map((d) => [d.at, d.trigger, d.messageIds, d.vitality.myMessagesIn5m])).toEqual([[T0 + 5000, "engaged", ["b1"], 2]]);
    expect(report.messages.find((m) => m.id === "b1")).toMatchObject({ isMention: false, engaged: false, why: "after-our-line" });
  });
});

describe("replay --responder", () => {
  // Unaddressed messages a minute apart, with a mention between the first two.
  const LOG = [
    line("n1", T0, "bob", "anyone around?"),
    line("m1", T0 + 60_000, "carol", "alice, are you there?"),
    line("n2", T0 + 120_000, "bob", "ok then"),
    line("n3", T0 + 180_000, "bob", "still nobody?"),
  ];
  const outcomes = (r: ReplayReport) => r.dispatches.map((d) => [d.at, d.trigger, d.messageIds, d.outcome]);
  // Third unaddressed call inside 5 minutes: over the unaddressed allowance (2 per 5 min), no model call.
  const overBudget = { replyType: null, sent: false, skipReason: "over-budget", text: null, budgetRatio: 1, modelCalled: false, detail: "unaddressed:5m:messages 2/2 +1" };

  it("mention: the mention dispatch sends the reply text, the others stay silent", async () => {
    const report = await replayJson(dir.jsonl("resp-mention.jsonl", LOG), "--responder", "mention", "--reply-text", "ok");
    expect(outcomes(report)).toEqual([
      [T0 + 3000, "normal", ["n1"], { replyType: "short", sent: false, skipReason: "silent", text: null, budgetRatio: 0, modelCalled: true, detail: "no-reply-token" }],
      // The mention draws from the addressed allowance: its ratio does not see the unaddressed call.
      [T0 + 60_000, "mention", ["m1"], { replyType: "short", sent: true, skipReason: null, text: "ok", budgetRatio: 0, modelCalled: true, detail: null }],
      // The first plain batch after our answer is the room's reaction to it: a look on the
      // addressed allowance (1 call of its 30 in 5 minutes so far) …
      [T0 + 123_000, "normal", ["n2"], { replyType: "normal", sent: false, skipReason: "silent", text: null, budgetRatio: 0.033, modelCalled: true, detail: "no-reply-token" }],
      // … and the 40 lines of the channel's pace count from there.
      [T0 + 183_000, "normal", ["n3"], { ...overBudget, budgetRatio: 0.5, detail: "unaddressed:pace:messages 1/40 +39" }],
    ]);
    // Our reply at T+60s is ours in the window of the next dispatch.
    expect(report.dispatches[2]!.vitality).toEqual({ state: "ACTIVE", messagesIn5m: 4, uniqueSpeakersIn5m: 3, myMessagesIn5m: 1 });
    expect(report.summary.sent).toBe(1);
    expect(report.summary.skipped).toEqual({ silent: 2, "over-budget": 1 });
    expect(report.summary.replyTypes).toEqual({ short: 1 });
  });

  it("silent: every model call ends in silence and nothing is sent", async () => {
    const report = await replayJson(dir.jsonl("resp-silent.jsonl", LOG), "--responder", "silent", "--reply-text", "ok");
    expect(report.dispatches.map((d) => [d.at, d.outcome.sent, d.outcome.skipReason, d.outcome.text, d.outcome.modelCalled])).toEqual([
      [T0 + 3000, false, "silent", null, true],
      [T0 + 60_000, false, "silent", null, true],
      // We said nothing since the first look: unaddressed talk waits for the channel's pace (one
      // call per 40 lines of others), and the silent calls were paid for too.
      [T0 + 123_000, false, "over-budget", null, false],
      [T0 + 183_000, false, "over-budget", null, false],
    ]);
    expect(report.dispatches.slice(2).map((d) => d.outcome.detail)).toEqual(["unaddressed:pace:messages 2/40 +38", "unaddressed:pace:messages 3/40 +37"]);
    expect(report.summary.sent).toBe(0);
    expect(report.summary.skipped).toEqual({ silent: 2, "over-budget": 2 });
    expect(report.summary.replyTypes).toEqual({});
  });

  it("always: replies to the unmentioned dispatch too; repeats are stopped by the dedup gate, then the budget", async () => {
    const report = await replayJson(dir.jsonl("resp-always.jsonl", LOG), "--responder", "always", "--reply-text", "ok");
    expect(outcomes(report)).toEqual([
      [T0 + 3000, "normal", ["n1"], { replyType: "short", sent: true, skipReason: null, text: "ok", budgetRatio: 0, modelCalled: true, detail: null }],
      [
        T0 + 60_000,
        "mention",
        ["m1"],
        { replyType: "normal", sent: false, skipReason: "duplicate-of-recent-reply", text: null, budgetRatio: 0, modelCalled: true, detail: "same-hash:1.00" },
      ],
      [
        T0 + 123_000,
        "normal",
        ["n2"],
        { replyType: "normal", sent: false, skipReason: "duplicate-of-recent-reply", text: null, budgetRatio: 0.5, modelCalled: true, detail: "same-hash:1.00" },
      ],
      [T0 + 183_000, "normal", ["n3"], overBudget],
    ]);
    expect(report.summary.sent).toBe(1);
    expect(report.summary.skipped).toEqual({ "duplicate-of-recent-reply": 2, "over-budget": 1 });
    expect(report.summary.replyTypes).toEqual({ short: 1 });
  });

  it("an unknown responder is a usage error", async () => {
    const run = await runCli(["replay", dir.jsonl("resp-bad.jsonl", LOG), "--persona", "alice", "--responder", "sometimes"]);
    expect(run.code).toBe(2);
    expect(run.err).toContain("expected `--responder` to be silent, mention, always or helpful, got `sometimes`");
  });
});

describe("replay --agent-latency-ms", () => {
  // A mention at T+0 starts a dispatch; a second mention at T+1s arrives while it runs.
  const LOG = [line("m1", T0, "bob", "alice, question one"), line("m2", T0 + 1000, "carol", "alice, question two")];
  const timeline = (r: ReplayReport) => r.dispatches.map((d) => [d.at, d.trigger, d.messageIds]);

  it("default 2000 ms: the second mention waits for the running dispatch and goes at T+2s", async () => {
    const report = await replayJson(dir.jsonl("lat-default.jsonl", LOG));
    expect(timeline(report)).toEqual([
      [T0, "mention", ["m1"]],
      [T0 + 2000, "mention", ["m2"]],
    ]);
    expect(report.summary.maxMentionWaitMs).toBe(1000);
  });

  it("5000 ms: the second mention goes when that dispatch ends, at T+5s", async () => {
    const report = await replayJson(dir.jsonl("lat-5000.jsonl", LOG), "--agent-latency-ms", "5000");
    expect(timeline(report)).toEqual([
      [T0, "mention", ["m1"]],
      [T0 + 5000, "mention", ["m2"]],
    ]);
    expect(report.summary.maxMentionWaitMs).toBe(4000);
  });

  it("0 ms: nothing is running at T+1s, so the second mention goes at once", async () => {
    const report = await replayJson(dir.jsonl("lat-0.jsonl", LOG), "--agent-latency-ms", "0");
    expect(timeline(report)).toEqual([
      [T0, "mention", ["m1"]],
      [T0 + 1000, "mention", ["m2"]],
    ]);
  });

  it("a non-integer latency is a usage error", async () => {
    const run = await runCli(["replay", dir.jsonl("lat-bad.jsonl", LOG), "--persona", "alice", "--agent-latency-ms", "fast"]);
    expect(run.code).toBe(2);
    expect(run.err).toContain("expected `--agent-latency-ms` to be an integer ≥ 0, got `fast`");
  });
});

describe("replay --config", () => {
  it("uses the identity's aliases and the group settings of the config", async () => {
    const cfg = dir.json("replay-config.json", {
      identities: { a: { aid: "alice.agentcp.io", name: "Alice", aliases: ["ally"] } },
      groups: { "*": { bufferGateMs: 1000 } },
    });
    const report = await replayJson(
      dir.jsonl("config.jsonl", [line("n1", T0, "bob", "hello"), line("m1", T0 + 10_000, "carol", "ally?")]),
      "--config",
      cfg,
    );
    expect(report.dispatches.map((d) => [d.at, d.trigger, d.messageIds])).toEqual([
      [T0 + 1000, "normal", ["n1"]],
      [T0 + 10_000, "mention", ["m1"]],
    ]);
  });

  it("--group picks that group's settings", async () => {
    const cfg = dir.json("replay-group-config.json", {
      identities: { a: { aid: "alice.agentcp.io", name: "Alice" } },
      groups: { quiet: { bufferGateMs: 8000, bufferGateMaxWaitMs: 8000 } },
    });
    // Alice speaks once (two minutes before, so bob's line is no answer to hers): a persona absent
    // from the log draws a warning on stderr.
    const log = dir.jsonl("group.jsonl", [line("s1", T0 - 120_000, "alice", "morning"), line("n1", T0, "bob", "hello")]);
    const at = async (...extra: string[]) => (await replayJson(log, "--config", cfg, ...extra)).dispatches.map((d) => d.at);
    expect(await at()).toEqual([T0 + 3000]);
    expect(await at("--group", "quiet")).toEqual([T0 + 8000]);
  });

  it("an invalid config names the file and the path, exit 1, no stack", async () => {
    const cfg = dir.json("replay-bad-config.json", { groups: { g1: { bufferGateMs: -3 } } });
    const run = await runCli(["replay", dir.jsonl("config-bad.jsonl", [line("n1", T0, "bob", "hello")]), "--persona", "alice", "--config", cfg]);
    expect(run.code).toBe(1);
    expect(run.out).toBe("");
    expect(run.err).toBe(`acp-group: ${cfg}: invalid configuration\n  groups.g1.bufferGateMs: expected ≥ 0, got -3`);
  });
});
