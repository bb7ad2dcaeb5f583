// The CLI keeps its word: each command's own --help, one-line usage errors with a hint, negative
// numbers answered by us, --group and --persona checked alike by start, replay and inspect.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/index.ts";
import { START_OPTIONS } from "../../src/cli/start.ts";
import { line, runCli, T0, tempDir, type TempDir } from "../replay/helpers.ts";

let dir: TempDir;
let good: string;
let cfg: string;
beforeAll(() => {
  dir = tempDir();
  good = dir.jsonl("good.jsonl", [line("a", T0, "bob", "hello"), line("b", T0 + 1000, "alice", "hi bob")]);
  cfg = dir.json("cfg.json", {
    humans: ["sam"],
    identities: { alice: { aid: "alice.agentcp.io", name: "Alice" } },
    groups: { lobby: { subject: "Lobby" } },
  });
});
afterAll(() => dir.remove());

describe("acp-group <command> --help", () => {
  it.each([
    ["start", "Usage: acp-group start [--config FILE]"],
    ["replay", "Usage: acp-group replay <log.jsonl> --persona NAME"],
    ["inspect", "Usage: acp-group inspect [--config FILE]"],
  ])("%s --help prints that command's own help, exit 0", async (name, first) => {
    for (const argv of [[name, "--help"], [name, "--persona", "x", "-h"], ["help", name]]) {
      const run = await runCli(argv);
      expect(run.code).toBe(0);
      expect(run.err).toBe("");
      expect(run.out.startsWith(first)).toBe(true);
      expect(run.out).not.toContain("Commands:");
    }
  });

  it("the general help lists every option of start, and every command", async () => {
    const run = await runCli(["--help"]);
    for (const name of Object.keys(START_OPTIONS)) expect(run.out).toContain(`--${name}`);
    for (const c of COMMANDS) expect(run.out).toContain(`  ${c.name} `);
  });

  it("a command's help names every option it accepts", async () => {
    const run = await runCli(["start", "--help"]);
    for (const name of Object.keys(START_OPTIONS)) expect(run.out).toContain(`--${name}`);
  });
});

describe("usage errors are one line plus a hint", () => {
  it.each([
    ["start --duration-ms -5", ["start", "--duration-ms", "-5"], "acp-group: expected `--duration-ms` to be an integer ≥ 1, got `-5`", "start"],
    ["replay --seed -1", ["replay", "GOOD", "--persona", "alice", "--seed", "-1"], "acp-group: expected `--seed` to be an integer ≥ 0, got `-1`", "replay"],
    ["inspect --at=-5", ["inspect", "--log", "GOOD", "--at=-5"], "acp-group: expected `--at` to be epoch ms or an ISO time, got `-5`", "inspect"],
    ["inspect --at -5", ["inspect", "--log", "GOOD", "--at", "-5"], "acp-group: expected `--at` to be epoch ms or an ISO time, got `-5`", "inspect"],
    ["start --group nope", ["start", "--config", "CFG", "--group", "nope", "--no-stdin"], "acp-group: no group `nope` in CFG (have: lobby)", "start"],
    ["replay --group nope", ["replay", "GOOD", "--persona", "alice", "--config", "CFG", "--group", "nope"], "acp-group: no group `nope` in CFG (have: lobby)", "replay"],
    ["inspect --group nope", ["inspect", "--config", "CFG", "--group", "nope"], "acp-group: no group `nope` in CFG (have: lobby)", "inspect"],
    ["start --fresh --state-dir", ["start", "--fresh", "--state-dir", "/tmp/x"], "acp-group: `--fresh` uses a new state directory: leave out `--state-dir`", "start"],
  ])("%s", async (_name, argv, message, command) => {
    const sub = (a: string) => a.replace("GOOD", good).replace("CFG", cfg);
    const run = await runCli(argv.map(sub));
    expect(run.code).toBe(2);
    expect(run.out).toBe("");
    expect(run.err).toBe(`${sub(message)}\nrun 'acp-group ${command} --help'`);
  });

  it("inspect with a config that has no identities errors like start", async () => {
    const empty = dir.json("no-ids.json", { groups: { lobby: {} } });
    const expected = `acp-group: ${empty}: no enabled identity under \`identities\``;
    for (const command of ["inspect", "start"]) {
      const run = await runCli([command, "--config", empty, ...(command === "start" ? ["--no-stdin"] : [])]);
      expect(run.code).toBe(2);
      expect(run.err).toBe(`${expected}\nrun 'acp-group ${command} --help'`);
    }
  });
});

describe("a persona the log never mentions draws a warning (replay and inspect)", () => {
  const warning = "acp-group: warning: `zed` never speaks in the log and is never named in it (check `--persona`)";

  it("replay warns on stderr and still replays", async () => {
    const run = await runCli(["replay", good, "--persona", "zed", "--json"]);
    expect(run.code).toBe(0);
    expect(run.err).toBe(warning);
    expect(JSON.parse(run.out).summary.messages).toBe(2);
  });

  it("inspect warns the same way", async () => {
    const run = await runCli(["inspect", "--log", good, "--at", String(T0 + 1000), "--persona", "zed"]);
    expect(run.code).toBe(0);
    expect(run.err).toBe(warning);
  });

  it("a persona who speaks, or is only named, draws none", async () => {
    expect((await runCli(["replay", good, "--persona", "alice", "--json"])).err).toBe("");
    expect((await runCli(["replay", good, "--persona", "bob", "--json"])).err).toBe("");
  });
});

describe("option values that start with a dash", () => {
  it("`--reply-text -ok` is a value, `--persona --json` still a missing value", async () => {
    const run = await runCli(["replay", good, "--persona", "alice", "--responder", "always", "--reply-text", "-ok", "--json"]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.out) as { dispatches: Array<{ outcome: { text: string | null } }> }).dispatches.map((d) => d.outcome.text)).toContain("-ok");
    const missing = await runCli(["replay", good, "--persona", "--json"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe("acp-group: expected a value after `--persona`, got the option `--json`\nrun 'acp-group replay --help'");
  });
});
