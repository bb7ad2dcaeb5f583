// `acp-group inspect`: the exact prompt the model would get, from a config and optionally a log.
import { spawnSync } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { inspectAt, type InspectResult } from "../../src/replay/inspect.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { line, runCli, T0, tempDir, type TempDir } from "./helpers.ts";

let dir: TempDir;
let cfg: string;
let log: string;
beforeAll(() => {
  dir = tempDir();
  cfg = dir.json("config.json", {
    identities: { alice: { aid: "alice.agentcp.io", name: "Alice", aliases: ["ali"], owner: "olivia.agentcp.io" } },
    // A second mention within a minute waits, so it is still pending at T+10s.
    groups: { g1: { subject: "Release planning", mentionMinIntervalMs: 60_000 } },
  });
  log = dir.jsonl("chat.jsonl", [
    line("m1", T0, "bob", "alice, first?"),
    line("c1", T0 + 5000, "carol", "hello"),
    line("d1", T0 + 10_000, "dave", "alice, second?"),
    line("e1", T0 + 20_000, "erin", "later"),
  ]);
});
afterAll(() => dir.remove());

async function inspectJson(...extra: string[]): Promise<InspectResult> {
  const run = await runCli(["inspect", "--config", cfg, "--identity", "alice", "--group", "g1", "--json", ...extra]);
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.out) as InspectResult;
}

describe("inspect (sample messages)", () => {
  it("prints the stable system prompt, then the situation block, then the body", async () => {
    const run = await runCli(["inspect", "--config", cfg, "--identity", "alice", "--group", "g1"]);
    expect(run.code).toBe(0);
    expect(run.err).toBe("");
    const out = run.out;
    expect(out.split("\n")[0]).toBe("# identity alice.agentcp.io · group g1 · messages: sample (2) · reply_type=short");
    expect(out).toContain("\n===== system prompt =====\n# ACP Network Context\n\nYou are Alice (alice.agentcp.io), an AI agent on the ACP agent network.\n");
    expect(out).toContain("People may also call you: ali.\nYour owner is olivia.agentcp.io.");
    const situation = out.indexOf("## Group Situation Context");
    expect(situation).toBeGreaterThan(out.indexOf("===== system prompt ====="));
    expect(out.indexOf("\n[Reply Policy]\n")).toBeGreaterThan(situation);
    expect(out).toContain("[Reply Policy]\nreply_type=short\navoid_repetition=true\nno_markdown=true\nhuman_chat_style=true\nmax_chars=500\n");
    expect(out.indexOf("===== message body =====")).toBeGreaterThan(out.indexOf("\n[Reply Policy]\n"));
    expect(out).toContain("[group] subject: Release planning\n");
    // The sample speakers are members as the running agent meets them: its owner, then another
    // member of its network (a placeholder on its own domain when the config names nobody else).
    expect(out).toMatch(/\[msg_id:1\] \[\d\d:\d\d:\d\d\] olivia\.agentcp\.io: Has anyone tried the new release\?\n/);
    expect(out).toMatch(/\[msg_id:2\] \[\d\d:\d\d:\d\d\] bob\.agentcp\.io: Alice, what do you think\? \[mentioned\]$/);
    expect(out).toContain("[Senders]\nolivia.agentcp.io: human, your owner\nbob.agentcp.io: type unknown\n");
  });

  it("--json parses and the system prompt is the stable prefix, a blank line, the situation", async () => {
    const r = await inspectJson();
    expect(r.source).toBe("sample");
    expect(r.messageCount).toBe(2);
    expect(r.systemPrompt).toBe(`${r.stablePrefix}\n\n${r.situation}`);
    expect(r.situation.startsWith("## Group Situation Context\n\n[Group Vitality]\nstate=COOLING\nmessages_in_5m=2\nunique_speakers_in_5m=2\n")).toBe(true);
    expect(r.stablePrefix).not.toContain("Group Situation");
  });
});

describe("inspect --log --at", () => {
  it("shows the messages pending at that moment, in line form, the mention marked", async () => {
    const r = await inspectJson("--log", log, "--at", String(T0 + 10_000));
    expect(r.source).toBe("pending");
    expect(r.messageCount).toBe(2);
    expect(r.body).toBe(
      [
        "[group] subject: Release planning",
        "[msg_id:c1] [14:30:05] carol: hello",
        "[msg_id:d1] [14:30:10] dave: alice, second? [mentioned]",
      ].join("\n"),
    );
    expect(r.situation).toContain("[Mentions]\nmentioned_in_context=true\nmention_count=1\npending_batches_merged=2\n");
    // The first mention was answered (silently) at T+0: one model call is on the budget.
    expect(r.situation).toContain("[Group Vitality]\nstate=ACTIVE\nmessages_in_5m=3\nunique_speakers_in_5m=3\n");
  });

  it("takes an ISO time as well as epoch ms", async () => {
    const r = await inspectJson("--log", log, "--at", "2026-01-05T14:30:10.000Z");
    expect(r.body.split("\n").slice(1)).toEqual(["[msg_id:c1] [14:30:05] carol: hello", "[msg_id:d1] [14:30:10] dave: alice, second? [mentioned]"]);
  });

  it("leaves out messages after --at", async () => {
    const r = await inspectJson("--log", log, "--at", String(T0 + 9_999));
    expect(r.body.split("\n").slice(1)).toEqual(["[msg_id:c1] [14:30:05] carol: hello"]);
    expect(r.situation).toContain("mentioned_in_context=false\nmention_count=0\n");
  });

  it("with nothing pending, shows the last dispatch", async () => {
    const r = await inspectJson("--log", log, "--at", String(T0 + 1000));
    expect(r.source).toBe("last-dispatch");
    expect(r.body.split("\n").slice(1)).toEqual(["[msg_id:m1] [14:30:00] bob: alice, first? [mentioned]"]);
  });

  it("the stable prefix is byte-identical across runs, with and without a log", async () => {
    const a = await inspectJson();
    const b = await inspectJson("--log", log, "--at", String(T0 + 10_000));
    const c = await inspectJson("--log", log, "--at", String(T0 + 20_000));
    expect(a.stablePrefix.length).toBeGreaterThan(500);
    expect(b.stablePrefix).toBe(a.stablePrefix);
    expect(c.stablePrefix).toBe(a.stablePrefix);
    expect(b.systemPrompt.startsWith(`${a.stablePrefix}\n\n## Group Situation Context`)).toBe(true);
    // The dynamic part does differ between the moments.
    expect(c.situation).not.toBe(b.situation);
  });
});

describe("inspect --log --at: the log is walked, not held", () => {
  it("reads the lines only up to --at: the first line past it is the last one taken", async () => {
    let taken = 0;
    function* lines(): Generator<LogLine> {
      for (let i = 0; i < 1000; i++) {
        taken++;
        yield { id: `l${i}`, ts: T0 + i * 1000, sender: i % 2 ? "bob" : "carol", content: i === 3 ? "alice, are you there?" : `line ${i}`, line: i + 1 };
      }
    }
    const r = await inspectAt({
      lines: lines(),
      at: T0 + 4_500,
      identity: { aid: "alice.agentcp.io", name: "Alice", aliases: [], enabled: true, groups: {} },
      persona: "alice",
      groupId: "g1",
      settings: DEFAULT_GROUP_SETTINGS,
    });
    // l0…l4 are at or before T+4.5 s; l5 is read, found past it, and the walk stops.
    expect(taken).toBe(6);
    expect(r.body).toContain("[msg_id:l4]");
    expect(r.body).not.toContain("[msg_id:l5]");
  });

  it("a log out of time order gives what the same log in order gives", async () => {
    const shuffled = dir.jsonl("shuffled.jsonl", [
      line("e1", T0 + 20_000, "erin", "later"),
      line("c1", T0 + 5000, "carol", "hello"),
      line("d1", T0 + 10_000, "dave", "alice, second?"),
      line("m1", T0, "bob", "alice, first?"),
    ]);
    for (const at of [T0 + 1000, T0 + 10_000, T0 + 20_000]) {
      expect(await inspectJson("--log", shuffled, "--at", String(at))).toEqual(await inspectJson("--log", log, "--at", String(at)));
    }
  });

  it("a 40 MB log out of time order is inspected in a process whose heap may not hold it (--max-old-space-size=48)", () => {
    const f = join(dir.path, "big.jsonl");
    // Each pair of lines swapped, about 200 bytes a line; held whole, its lines take ~70 MB of heap.
    const fd = openSync(f, "w");
    const pad = "lorem ipsum dolor sit amet ".repeat(5);
    for (let i = 0, bytes = 0; bytes < 40 * 1024 * 1024; ) {
      const out: string[] = [];
      for (let k = 0; k < 2000; k++, i++) {
        const j = i ^ 1;
        out.push(JSON.stringify({ id: `m${j}`, ts: T0 + j * 1000, sender: `s${j % 7}`, content: `${j === 40 ? "alice, " : ""}line ${j} ${pad}` }));
      }
      const text = `${out.join("\n")}\n`;
      writeSync(fd, text);
      bytes += text.length;
    }
    closeSync(fd);
    const bin = fileURLToPath(new URL("../../bin/acp-group.mjs", import.meta.url));
    const r = spawnSync(process.execPath, ["--max-old-space-size=48", bin, "inspect", "--config", cfg, "--identity", "alice", "--group", "g1", "--json", "--log", f, "--at", String(T0 + 45_000)], {
      encoding: "utf8",
      env: { ...process.env, TMPDIR: dir.path },
    });
    expect(r.stderr.slice(-300)).toBe("");
    expect(r.status).toBe(0);
    const result = JSON.parse(r.stdout) as InspectResult;
    // m40 (a mention) went out at once; m41…m45 wait, m46 is past --at.
    expect(result.source).toBe("pending");
    expect(result.body).toContain("[msg_id:m45]");
    expect(result.body).not.toContain("[msg_id:m46]");
  });
});

describe("inspect without a log: sample messages", () => {
  it("never uses the identity itself as a sample sender, so both sample lines are in the body", async () => {
    const { inspectSample } = await import("../../src/replay/inspect.ts");
    const { DEFAULT_GROUP_SETTINGS } = await import("../../src/config/load.ts");
    const identity = { aid: "carol.agentcp.io", name: "Carol", aliases: [], enabled: true, groups: {} };
    const r = inspectSample({ identity, groupId: "g1", settings: DEFAULT_GROUP_SETTINGS, now: T0 });
    expect(r.body.split("\n")).toEqual([
      "[msg_id:1] [14:29:40] bob.agentcp.io: Has anyone tried the new release?",
      "[msg_id:2] [14:29:55] dave.agentcp.io: Carol, what do you think? [mentioned]",
    ]);
  });
});
