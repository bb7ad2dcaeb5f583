// The command line: usage errors, bad input, exit codes — one clear line, never a stack trace.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { line, runCli, STACK_FRAME, T0, tempDir, type TempDir } from "../replay/helpers.ts";

let dir: TempDir;
let good: string;
beforeAll(() => {
  dir = tempDir();
  good = dir.jsonl("good.jsonl", [line("a", T0, "bob", "hello"), line("b", T0 + 1000, "carol", "alice?")]);
});
afterAll(() => dir.remove());

describe("acp-group (no command / help / unknown)", () => {
  it("no command prints the usage to stderr and exits 2", async () => {
    const run = await runCli([]);
    expect(run.code).toBe(2);
    expect(run.out).toBe("");
    expect(run.err).toMatch(/^Usage: acp-group <command> \[options\]/);
  });

  it("help prints the usage to stdout and exits 0", async () => {
    const run = await runCli(["help"]);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^Usage: acp-group <command> \[options\]/);
  });

  it("an unknown command is a usage error, exit 2", async () => {
    const run = await runCli(["replya", good]);
    expect(run.code).toBe(2);
    expect(run.err).toBe("acp-group: unknown command `replya` (have: start, run, chat, server, join, leave, pairing, replay, inspect, id, import-evol)\nrun 'acp-group --help'");
  });
});

describe("replay: usage errors (exit 2)", () => {
  it.each([
    ["no log file", ["replay", "--persona", "alice"], "acp-group: replay takes exactly one log file"],
    ["two log files", ["replay", "x.jsonl", "y.jsonl", "--persona", "alice"], "acp-group: replay takes exactly one log file"],
    ["no --persona", ["replay", "GOOD"], "acp-group: replay needs `--persona NAME` (whose point of view to replay)"],
    ["--persona without a value", ["replay", "GOOD", "--persona"], "acp-group: Option '--persona <value>' argument missing"],
    ["a negative --agent-latency-ms", ["replay", "GOOD", "--persona", "alice", "--agent-latency-ms", "-5"], "acp-group: expected `--agent-latency-ms` to be an integer ≥ 0, got `-5`"],
    ["an --only that is not a filter", ["replay", "GOOD", "--persona", "alice", "--only", "mentions,loud"], "acp-group: expected `--only` to be mentions, engaged, skips, sent (or a comma list), got `loud`"],
    ["--group without --config", ["replay", "GOOD", "--persona", "alice", "--group", "g1"], "acp-group: `--group g1` picks a configured group: give `--config FILE` too"],
    ["an unknown option", ["replay", "GOOD", "--persona", "alice", "--fast"], "acp-group: Unknown option '--fast'"],
  ])("%s", async (_name, argv, first) => {
    const run = await runCli(argv.map((a) => (a === "GOOD" ? good : a)));
    expect(run.code).toBe(2);
    expect(run.out).toBe("");
    // Changed: one line and a hint, as the README promises (it used to append the whole usage).
    expect(run.err.split("\n")).toEqual([expect.any(String), "run 'acp-group replay --help'"]);
    expect(run.err.startsWith(first)).toBe(true);
    expect(run.err).not.toMatch(STACK_FRAME);
  });
});

describe("replay: bad input (exit 1, the line named, no stack)", () => {
  const cases: Array<[string, Array<object | string>, string]> = [
    ["a line that is not JSON", [line("a", T0, "bob", "hi"), '{"id":"b","ts":', line("c", T0 + 2, "bob", "x")], "line 2: not valid JSON"],
    ["a missing field", [line("a", T0, "bob", "hi"), line("b", T0 + 1, "bob", "x"), { id: "c", ts: T0 + 2, sender: "bob" }], "line 3: missing field `content`"],
    ["a non-numeric ts", [{ id: "a", ts: "noon", sender: "bob", content: "hi" }], 'line 1: expected `ts` to be epoch milliseconds, got "noon"'],
  ];

  it.each(cases)("%s", async (_name, rows, reason) => {
    const file = dir.jsonl(`bad-${rows.length}-${reason.length}.jsonl`, rows);
    const run = await runCli(["replay", file, "--persona", "alice", "--json"]);
    expect(run.code).toBe(1);
    expect(run.out).toBe("");
    expect(run.err).toBe(`acp-group: ${file} ${reason}`);
    expect(run.err).not.toMatch(STACK_FRAME);
  });

  it("--skip-bad replays the good lines and reports the skipped count (--json)", async () => {
    const file = dir.jsonl("skip.jsonl", [
      line("a", T0, "bob", "hello"),
      "not json at all",
      { id: "b", ts: "later", sender: "bob", content: "x" },
      line("c", T0 + 1000, "carol", "alice, there?"),
      { id: "d", ts: T0 + 2000, content: "no sender" },
    ]);
    const run = await runCli(["replay", file, "--persona", "alice", "--skip-bad", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as { messages: Array<{ id: string }>; dispatches: Array<{ at: number; messageIds: string[] }>; skippedLines: number };
    expect(report.skippedLines).toBe(3);
    expect(report.messages.map((m) => m.id)).toEqual(["a", "c"]);
    expect(report.dispatches.map((d) => [d.at, d.messageIds])).toEqual([[T0 + 1000, ["a", "c"]]]);
  });

  it("--skip-bad without --json lists the skipped lines after the timeline", async () => {
    const file = dir.jsonl("skip-text.jsonl", [line("a", T0, "bob", "alice, hi"), "oops"]);
    const run = await runCli(["replay", file, "--persona", "alice", "--skip-bad"]);
    expect(run.code).toBe(0);
    expect(run.out.split("\n").at(-1)).toBe("skipped 1 bad line(s): line 2 (not valid JSON)");
  });

  it("a log with no messages is an error", async () => {
    const file = dir.text("empty.jsonl", "\n\n");
    const run = await runCli(["replay", file, "--persona", "alice"]);
    expect(run.code).toBe(1);
    expect(run.err).toBe(`acp-group: ${file}: no messages`);
  });

  it("a missing file names the file and the reason", async () => {
    const file = join(dir.path, "nope.jsonl");
    const run = await runCli(["replay", file, "--persona", "alice"]);
    expect(run.code).toBe(1);
    expect(run.err).toBe(`acp-group: cannot read ${file}: ENOENT`);
    expect(run.err).not.toMatch(STACK_FRAME);
  });

  it("a missing --config file names the file", async () => {
    const cfg = join(dir.path, "missing-config.json");
    const run = await runCli(["replay", good, "--persona", "alice", "--config", cfg]);
    expect(run.code).toBe(1);
    expect(run.err).toBe(`acp-group: ${cfg}: invalid configuration\n  cannot read file: ENOENT`);
  });
});

describe("inspect: usage errors", () => {
  it("--log without --at", async () => {
    const run = await runCli(["inspect", "--log", good]);
    expect(run.code).toBe(2);
    expect(run.err.startsWith("acp-group: `--log` and `--at` go together")).toBe(true);
  });

  it("an --at that is neither epoch ms nor an ISO time", async () => {
    const run = await runCli(["inspect", "--log", good, "--at", "teatime"]);
    expect(run.code).toBe(2);
    expect(run.err.startsWith("acp-group: expected `--at` to be epoch ms or an ISO time, got `teatime`")).toBe(true);
  });

  it("an identity the config does not have", async () => {
    const cfg = dir.json("inspect-cfg.json", { identities: { alice: { aid: "alice.agentcp.io" } } });
    const run = await runCli(["inspect", "--config", cfg, "--identity", "zed"]);
    expect(run.code).toBe(2);
    expect(run.err.startsWith("acp-group: no identity `zed` in the configuration (have: alice)")).toBe(true);
  });

  it("an --at before the first message", async () => {
    const run = await runCli(["inspect", "--log", good, "--at", String(T0 - 1)]);
    expect(run.code).toBe(1);
    expect(run.err).toBe("acp-group: no messages at or before 2026-01-05T14:29:59.999Z in the log");
  });
});
