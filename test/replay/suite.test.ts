// `replay --suite DIR`: every log of a folder for its top personas, the reach table per persona,
// per log and pooled, and why lines were missed. Real files: two of the bundled logs in a temp dir.
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RULE_ROWS } from "../../src/replay/suite-rules.ts";
import { MISS_CAUSES, type SuiteReport, type SuiteRow } from "../../src/replay/suite.ts";
import { runCli, tempDir, type TempDir } from "./helpers.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/irc-dev/", import.meta.url));
const LOGS = ["ubuntu-2016-12-19", "rust-0"];

let dir: TempDir;
let bare: TempDir;
beforeAll(() => {
  dir = tempDir();
  bare = tempDir();
  for (const log of LOGS) {
    copyFileSync(join(FIXTURES, `${log}.jsonl`), join(dir.path, `${log}.jsonl`));
    copyFileSync(join(FIXTURES, `${log}.jsonl`), join(bare.path, `${log}.jsonl`));
  }
  copyFileSync(join(FIXTURES, "personas.json"), join(dir.path, "personas.json"));
});
afterAll(() => {
  dir.remove();
  bare.remove();
});

const sumOf = (rows: readonly SuiteRow[], f: (r: SuiteRow) => number) => rows.reduce((a, r) => a + f(r), 0);

describe("replay --suite (default settings, --responder mention)", () => {
  let report: SuiteReport;
  let text: string;
  beforeAll(async () => {
    const json = await runCli(["replay", "--suite", dir.path, "--json"]);
    expect(json.code).toBe(0);
    report = JSON.parse(json.out) as SuiteReport;
    const t = await runCli(["replay", "--suite", dir.path]);
    expect(t.code).toBe(0);
    text = t.out;
  }, 60_000);

  it("replays each log for the personas personas.json names, in its order", () => {
    const personas = JSON.parse(readFileSync(join(FIXTURES, "personas.json"), "utf8")) as Record<string, { personas: Array<{ nick: string }> }>;
    expect(report.logs.map((l) => l.log)).toEqual(["rust-0", "ubuntu-2016-12-19"]);
    for (const l of report.logs) expect(l.personas.map((p) => p.persona)).toEqual(personas[l.log]!.personas.slice(0, 3).map((p) => p.nick));
  });

  it("the rows add up: pooled rows are the sums of their parts, every missed line has one cause", () => {
    const all = report.logs.flatMap((l) => l.personas);
    for (const row of [...all, ...report.logs.map((l) => l.pooled), report.pooled]) {
      expect(row.reached).toBeLessThanOrEqual(row.gold);
      expect(sumOf([row], (r) => MISS_CAUSES.reduce((a, c) => a + r.missed[c], 0))).toBe(row.gold - row.reached);
      expect(row.waitP50Ms).toBeLessThanOrEqual(row.waitP95Ms);
      expect(Math.abs(row.callsPerMessage - row.modelCalls / row.messages)).toBeLessThanOrEqual(0.0005 + 1e-9);
    }
    for (const l of report.logs) {
      expect(l.pooled.gold).toBe(sumOf(l.personas, (r) => r.gold));
      expect(l.pooled.reached).toBe(sumOf(l.personas, (r) => r.reached));
      expect(l.pooled.modelCalls).toBe(sumOf(l.personas, (r) => r.modelCalls));
      expect(l.pooled.flagged).toBe(sumOf(l.personas, (r) => r.flagged));
    }
    expect(report.pooled.gold).toBe(sumOf(all, (r) => r.gold));
    expect(report.pooled.reached).toBe(sumOf(all, (r) => r.reached));
    // The annotations of these two logs: 59 lines meant for the #ubuntu personas, 58 for the #rust ones.
    expect(report.logs.map((l) => l.pooled.gold)).toEqual([58, 59]);
  });

  it("meets the reach goals on these logs: each ≥ 0.95 reached, ≤ 0.10 model calls per message pooled", () => {
    for (const l of report.logs) expect(l.pooled.reach).toBeGreaterThanOrEqual(0.95);
    expect(report.pooled.callsPerMessage).toBeLessThanOrEqual(0.1);
  });

  it("prints one row per persona, per log and pooled, and the missed lines by cause", () => {
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^log\s+persona\s+directed\s+reached\s+reach\s+wait p50\s+p95\s+calls\/msg\s+calls\/h\s+flag prec\s+recall\s+late$/);
    const p = report.pooled;
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^pooled\\s+pooled\\s+${p.gold}\\s+${p.reached}\\s+${p.reach.toFixed(2)}\\s`)));
    for (const l of report.logs) for (const r of l.personas) expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${l.log}\\s+${r.persona.replace(/[{}]/g, "\\$&")}\\s+${r.gold}\\s+${r.reached}\\s`)));
    expect(lines).toContainEqual(expect.stringMatching(/^log\s+missed\s+unaddressed-allowance\s+for-someone-else\s+flagged-addressed-allowance/));
  });

  it("prints each addressing rule's lines, precision and recall, per log and pooled, adding up to the rows", () => {
    for (const part of [...report.logs, { log: "pooled", pooled: report.pooled, rules: report.rules }]) {
      const { pooled: row, rules } = part;
      expect(rules.map((r) => r.rule)).toEqual(RULE_ROWS.map((r) => r.rule));
      // Every annotated line of the log falls under exactly one rule: the directed ones sum to the row's gold.
      expect(rules.reduce((a, r) => a + r.directed, 0)).toBe(row.gold);
      // The rules that take a line as ours are the row's flags (the flag precision's count).
      const ours = rules.filter((r) => r.verdict === "ours");
      expect(ours.reduce((a, r) => a + r.lines, 0)).toBe(row.flagged);
      expect(ours.reduce((a, r) => a + r.directed, 0)).toBe(row.flaggedGold);
      for (const r of rules) {
        const flags = r.verdict === "ours" || r.verdict === "maybe ours";
        expect(r.precision).toBe(flags && r.lines > 0 ? Math.round((r.directed / r.lines) * 1000) / 1000 : null);
        expect(flags ? r.recall : r.lost).toBe(Math.round((r.directed / row.gold) * 1000) / 1000);
      }
    }
    const lines = text.split("\n");
    const head = lines.findIndex((l) => /^log\s+rule\s+verdict\s+lines\s+directed\s+precision\s+recall\s+lost$/.test(l));
    expect(head).toBeGreaterThan(0);
    const mention = report.rules.find((r) => r.rule === "mention")!;
    expect(mention.lines).toBeGreaterThan(0);
    expect(lines.slice(head)).toContainEqual(
      expect.stringMatching(new RegExp(`^pooled\\s+mention\\s+ours\\s+${mention.lines}\\s+${mention.directed}\\s+${mention.precision!.toFixed(2)}\\s+${mention.recall!.toFixed(2)}\\s+-$`)),
    );
  });

  it("without personas.json, the personas are the most addressed nicks of the annotations", async () => {
    const r = await runCli(["replay", "--suite", bare.path, "--personas", "2", "--json"]);
    expect(r.code).toBe(0);
    const got = JSON.parse(r.out) as SuiteReport;
    // #ubuntu 2016-12-19: nacc (24 lines meant for them), then groob (18).
    expect(got.logs.find((l) => l.log === "ubuntu-2016-12-19")!.personas.map((p) => p.persona)).toEqual(["nacc", "groob"]);
  }, 60_000);

  it("refuses a log file with --suite, and options that belong to one log", async () => {
    expect((await runCli(["replay", "x.jsonl", "--suite", dir.path])).code).toBe(2);
    expect((await runCli(["replay", "--suite", dir.path, "--persona", "nacc"])).err).toMatch(/--persona.*does not go with.*--suite/);
    const missing = await runCli(["replay", "--suite", join(dir.path, "nothing-here")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`cannot read ${join(dir.path, "nothing-here")}: ENOENT`);
  });
});
