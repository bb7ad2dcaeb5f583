// `replay` text output: --only filters, the per-hour table, and the progress line for long logs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { line, runCli, T0, tempDir, type TempDir } from "./helpers.ts";

const HOUR = 3_600_000;
let dir: TempDir;
let log: string;
beforeAll(() => {
  dir = tempDir();
  // Hour 14: a plain line (normal dispatch, silent → skipped), then a mention (sent with --responder mention).
  // Hour 15: one more plain line.
  log = dir.jsonl("hours.jsonl", [
    line("n1", T0, "bob", "hello all"),
    line("m1", T0 + 60_000, "carol", "alice, are you there?"),
    line("n2", T0 + HOUR, "bob", "later on"),
  ]);
});
afterAll(() => dir.remove());

const dispatchLines = (out: string) => out.split("\n").filter((l) => /^\d\d:\d\d:\d\d {2}dispatch /.test(l));

describe("replay --only", () => {
  it("with no filter every dispatch is listed", async () => {
    const run = await runCli(["replay", log, "--persona", "alice", "--responder", "mention"]);
    expect(dispatchLines(run.out).map((l) => l.slice(0, 26).trimEnd())).toEqual(["14:30:03  dispatch normal", "14:31:00  dispatch mention", "15:30:03  dispatch normal"]);
  });

  it.each([
    ["mentions", ["14:31:00  dispatch mention"]],
    ["sent", ["14:31:00  dispatch mention"]],
    ["skips", ["14:30:03  dispatch normal", "15:30:03  dispatch normal"]],
    ["engaged", []],
    ["engaged,skips", ["14:30:03  dispatch normal", "15:30:03  dispatch normal"]],
  ])("--only %s", async (only, expected) => {
    const run = await runCli(["replay", log, "--persona", "alice", "--responder", "mention", "--only", only]);
    expect(run.code).toBe(0);
    expect(dispatchLines(run.out).map((l) => l.slice(0, 26).trimEnd())).toEqual(expected);
    // The totals still count everything.
    expect(run.out).toContain("3 messages, 1 mentions → 3 dispatches");
  });

  it("is refused with --json", async () => {
    const run = await runCli(["replay", log, "--persona", "alice", "--only", "sent", "--json"]);
    expect(run.code).toBe(2);
    expect(run.err.split("\n")[0]).toBe("acp-group: `--only` filters the text output; leave it out with `--json`");
  });
});

describe("replay: per-hour table", () => {
  it("ends the text output, one row per UTC hour with something in it", async () => {
    const run = await runCli(["replay", log, "--persona", "alice", "--responder", "mention"]);
    expect(run.out.split("\n").slice(-3)).toEqual([
      "hour (UTC)        messages  mentions  dispatches  model calls  sent  skipped",
      "2026-01-05 14:00         2         1           2            2     1        1",
      "2026-01-05 15:00         1         0           1            1     0        1",
    ]);
  });
});

describe("replay: progress on a terminal", () => {
  it("a long log reports progress through io.progress and clears it; a short one stays quiet", async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => line(`p${i}`, T0 + i * 1000, i % 2 ? "bob" : "carol", `line ${i}`));
    const long = dir.jsonl("long.jsonl", rows);
    const progress: string[] = [];
    const out: string[] = [];
    const code = await main(["replay", long, "--persona", "bob", "--json"], { out: (s) => out.push(s), err: () => {}, progress: (s) => progress.push(s) });
    expect(code).toBe(0);
    expect(progress).toEqual([
      "replay: 5,000/20,000 lines",
      "replay: 10,000/20,000 lines",
      "replay: 15,000/20,000 lines",
      "replay: 20,000/20,000 lines",
      "replay: 20,000/20,000 lines",
      "",
    ]);

    const quiet: string[] = [];
    await main(["replay", log, "--persona", "alice", "--json"], { out: () => {}, err: () => {}, progress: (s) => quiet.push(s) });
    expect(quiet).toEqual([]);
  }, 60_000);
});
