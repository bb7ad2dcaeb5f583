// `start` end to end: the embedded local network (access point, message service, group service),
// two identities and the human signed in with keys its CA issued, over real sockets; the offline
// responder, a file state dir — driven through startCommand and the CLI's main() with captured
// output. Real time (sockets), with tiny timings in the config.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { startCommand } from "../../src/cli/start.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
import { tempDir, waitFor } from "../support/runtime-harness.ts";

const OPENAI_VARS = ["OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"] as const;
let savedEnv: Record<string, string | undefined> = {};
let dirs: Array<{ remove(): void }> = [];

beforeEach(() => {
  // The offline responder is what these tests see: no model may be configured from outside.
  savedEnv = {};
  for (const k of OPENAI_VARS) {
    savedEnv[k] = process.env[k];
    delete process.env[k];
  }
});
afterEach(() => {
  for (const k of OPENAI_VARS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
  for (const d of dirs) d.remove();
  dirs = [];
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) } };
}

/** A temp dir with a config: Alice and Bob in `lobby` (re-homed onto the local domain by start), tiny timings. */
function setup(lobby: Record<string, unknown> = {}) {
  const d = tempDir("start");
  dirs.push(d);
  const config = {
    humans: ["you"],
    identities: {
      alice: { aid: "alice.agentcp.io", name: "Alice" },
      bob: { aid: "bob.agentcp.io", name: "Bob" },
    },
    groups: {
      lobby: {
        subject: "test lobby",
        bufferGateMs: 50,
        bufferGateMaxWaitMs: 200,
        cooldownMs: 50,
        delay: { enabled: false },
        ...lobby,
      },
    },
  };
  const configFile = join(d.dir, "config.json");
  writeFileSync(configFile, JSON.stringify(config));
  return { dir: d.dir, configFile, stateDir: join(d.dir, "state") };
}

const stateFile = (stateDir: string, id: string) => join(stateDir, encodeSafeName(id), `${encodeSafeName("lobby")}.group.json`);

describe("start", () => {
  it("runs two agents on the embedded local network: --say reaches them, Alice answers offline, then it stops after --duration-ms", async () => {
    const { configFile, stateDir } = setup();
    const c = capture();
    const code = await startCommand(
      ["--config", configFile, "--state-dir", stateDir, "--say", "Alice, ping", "--duration-ms", "1500", "--no-stdin"],
      c.io,
    );
    expect(code).toBe(0);
    const out = c.out.join("\n");
    // Each on its own line: the access point, then a join link per group (no `ca:` without --tls).
    expect(c.out[0]).toMatch(/^access point: http:\/\/127\.0\.0\.1:\d+$/);
    expect(c.out[1]).toMatch(/^join lobby: https:\/\/group\.acp\.local\/lobby\?code=[A-Za-z0-9_-]+$/);
    expect(out).not.toMatch(/^ca: /m);
    expect(out).toMatch(/^local network acp\.local · groups: lobby · state: /m);
    expect(out).toContain("no model configured");
    expect(out).toContain("agents online: alice (alice.acp.local), bob (bob.acp.local)");
    // The conversation: the human's message, then Alice's offline reply, each printed once.
    expect(c.out.filter((l) => / \[lobby\] #1 you\.acp\.local: Alice, ping$/.test(l))).toHaveLength(1);
    expect(c.out.filter((l) => / \[lobby\] #2 alice\.acp\.local \(agent\): \[offline responder\] heard you\.acp\.local: "Alice, ping" · ref [0-9a-f]{8}-[0-9a-f]{8}$/.test(l))).toHaveLength(1);
    // Alice's dispatch decision: mention trigger, one message, sent.
    expect(c.out.filter((l) => /↳ alice \[lobby\] dispatch #1 mention · 1 msg\(s\) · .* → sent /.test(l))).toHaveLength(1);
    // Bob was not named: every one of his dispatches stays silent, and he never speaks.
    const bobLines = c.out.filter((l) => l.includes("↳ bob [lobby]"));
    expect(bobLines.length).toBeGreaterThan(0);
    expect(bobLines.every((l) => l.includes("→ skipped: silent"))).toBe(true);
    expect(out).not.toContain("bob.acp.local (agent):");
    expect(c.out.filter((l) => / \[lobby\] #\d+ /.test(l))).toHaveLength(2);
    expect(out).toContain("stopping (--duration-ms 1500) — saving state");
    expect(c.out.at(-1)).toBe("stopped");
    // Warnings and errors only (default log level): nothing went wrong.
    expect(c.err).toEqual([]);
    expect(existsSync(stateFile(stateDir, "alice"))).toBe(true);
    expect(existsSync(stateFile(stateDir, "bob"))).toBe(true);
    const alice = JSON.parse(readFileSync(stateFile(stateDir, "alice"), "utf8")) as { data: { cursor: number; replyHashes: string[] } };
    expect(alice.data).toMatchObject({ cursor: 2 });
    expect(alice.data.replyHashes).toHaveLength(1);
  });

  it("a direct message (--dm at start, /dm typed): the agent answers the human one to one, and nothing of it enters the group", async () => {
    const { configFile, stateDir } = setup();
    const c = capture();
    const stop = new AbortController();
    const stdin = new PassThrough();
    const run = startCommand(["--config", configFile, "--state-dir", stateDir, "--dm", "alice Alice, can you hear me?", "--duration-ms", "20000"], c.io, { signal: stop.signal, stdin });
    await waitFor(() => c.out.some((l) => l.includes("[dm] alice.acp.local (agent) → you.acp.local:")), "Alice's direct answer", 10_000);
    stdin.write("/dm bob Bob, a word?\n");
    await waitFor(() => c.out.some((l) => l.includes("[dm] bob.acp.local (agent) → you.acp.local:")), "Bob's direct answer", 10_000);
    stop.abort();
    expect(await run).toBe(0);
    const dm = c.out.filter((l) => l.includes("[dm")).map((l) => l.replace(/^\d\d:\d\d:\d\d /, "").replace(/ · ref [0-9a-f-]+$/, ""));
    expect(dm).toEqual([
      "[dm] you.acp.local → alice.acp.local: Alice, can you hear me?",
      '[dm] alice.acp.local (agent) → you.acp.local: [offline responder] heard you.acp.local: "Alice, can you hear me?"',
      "    ↳ alice [dm you.acp.local] dispatch #1 direct · 1 msg(s) · reply_type normal · budget 0.00 → sent normal",
      "[dm] you.acp.local → bob.acp.local: Bob, a word?",
      '[dm] bob.acp.local (agent) → you.acp.local: [offline responder] heard you.acp.local: "Bob, a word?"',
      "    ↳ bob [dm you.acp.local] dispatch #1 direct · 1 msg(s) · reply_type normal · budget 0.00 → sent normal",
    ]);
    expect(c.out.filter((l) => / \[lobby\] #\d+ /.test(l))).toEqual([]);
    expect(c.err).toEqual([]);
    const usage = capture();
    expect(await main(["start", "--config", configFile, "--dm", "alice"], usage.io)).toBe(2);
    expect(usage.err[0]).toBe("acp-group: expected `--dm 'NAME TEXT'` (an agent's name, a space, the message), got `alice`\nrun 'acp-group start --help'");
  }, 30_000);

  it("agents for direct messages only (no group anywhere): start runs them, --dm and /dm are answered, a plain line says to use /dm, --say is a usage error", async () => {
    const d = tempDir("start-dm-only");
    dirs.push(d);
    const configFile = join(d.dir, "config.json");
    writeFileSync(configFile, JSON.stringify({ humans: ["you"], identities: { alice: { aid: "alice.agentcp.io", name: "Alice" } } }));
    const c = capture();
    const stop = new AbortController();
    const stdin = new PassThrough();
    const run = startCommand(["--config", configFile, "--state-dir", join(d.dir, "state"), "--dm", "alice Alice, can you hear me?", "--duration-ms", "20000"], c.io, { signal: stop.signal, stdin });
    await waitFor(() => c.out.some((l) => l.includes("[dm] alice.acp.local (agent) → you.acp.local:")), "Alice's direct answer", 10_000);
    stdin.write("hello room\n");
    await waitFor(() => c.err.length > 0, "the plain line refused");
    stdin.write("/dm alice And again?\n");
    await waitFor(() => c.out.filter((l) => l.includes("[dm] alice.acp.local (agent) → you.acp.local:")).length === 2, "Alice's second answer", 10_000);
    stop.abort();
    expect(await run).toBe(0);
    expect(c.out).toContain("agents online: alice (alice.acp.local)");
    expect(c.out.filter((l) => l.startsWith("local network "))).toEqual([expect.stringMatching(/^local network acp\.local · groups: none \(direct messages only\) · state: /)]);
    expect(c.out).toContain("type `/dm NAME TEXT` to message an agent as you.acp.local; Ctrl-C to stop");
    expect(c.err[0]).toBe("could not post as you.acp.local: no group to post in (the agents take direct messages only): type `/dm NAME TEXT`");
    expect(c.err.slice(1).map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({ level: "warn", event: "start.post-failed", code: "USAGE" })]);
    const dm = c.out.filter((l) => l.includes("[dm")).map((l) => l.replace(/^\d\d:\d\d:\d\d /, "").replace(/ · ref [0-9a-f-]+$/, "").replace(/budget \d+\.\d+/, "budget …"));
    expect(dm).toEqual([
      "[dm] you.acp.local → alice.acp.local: Alice, can you hear me?",
      '[dm] alice.acp.local (agent) → you.acp.local: [offline responder] heard you.acp.local: "Alice, can you hear me?"',
      "    ↳ alice [dm you.acp.local] dispatch #1 direct · 1 msg(s) · reply_type normal · budget … → sent normal",
      "[dm] you.acp.local → alice.acp.local: And again?",
      '[dm] alice.acp.local (agent) → you.acp.local: [offline responder] heard you.acp.local: "And again?"',
      "    ↳ alice [dm you.acp.local] dispatch #2 direct · 1 msg(s) · reply_type normal · budget … → sent normal",
    ]);
    const usage = capture();
    expect(await main(["start", "--config", configFile, "--say", "hi"], usage.io)).toBe(2);
    expect(usage.err[0]).toBe(`acp-group: \`--say\` posts into a group and ${configFile} configures none: use \`--dm 'NAME TEXT'\`\nrun 'acp-group start --help'`);
  }, 30_000);

  it("the offline responder answers two different questions to Bob, each with its own answer (judgement, not dedup)", async () => {
    const { configFile, stateDir } = setup();
    const c = capture();
    const stop = new AbortController();
    const bobSaid = () => c.out.filter((l) => / \[lobby\] #\d+ bob\.acp\.local \(agent\): /.test(l));
    const run = startCommand(
      ["--config", configFile, "--state-dir", stateDir, "--say", "Bob, can you hear me?", "--say", "Bob, any news?", "--duration-ms", "8000", "--no-stdin"],
      c.io,
      { signal: stop.signal },
    );
    await waitFor(() => bobSaid().length >= 2 || c.out.some((l) => l.includes("↳ bob [lobby]") && l.includes("duplicate")), "Bob's second answer", 8000);
    stop.abort();
    expect(await run).toBe(0);
    expect(c.out.join("\n")).not.toContain("duplicate-of-recent-reply");
    const answers = bobSaid().map((l) => l.replace(/^.*\(agent\): /, ""));
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/^\[offline responder\] heard you\.acp\.local: "Bob, can you hear me\?" · ref [0-9a-f]{8}-[0-9a-f]{8}$/);
    expect(answers[1]).toMatch(/^\[offline responder\] heard you\.acp\.local: "Bob, any news\?" · ref [0-9a-f]{8}-[0-9a-f]{8}$/);
    expect(c.err).toEqual([]);
  });

  it("prints a member's escape sequences as visible text, never raw to the terminal", async () => {
    const { configFile, stateDir } = setup();
    const c = capture();
    const code = await startCommand(
      ["--config", configFile, "--state-dir", stateDir, "--say", "hi \u001b[2J\u001b]0;owned\u0007 \u202Eevil", "--duration-ms", "600", "--no-stdin"],
      c.io,
    );
    expect(code).toBe(0);
    const line = c.out.find((l) => / \[lobby\] #1 you\.acp\.local: /.test(l));
    expect(line).toBeDefined();
    expect(line).not.toMatch(/[\u001b\u0007\u202E]/);
    expect(line).toContain("hi ␛[2J␛]0;owned␇ \uFFFDevil");
  });

  it("counts the embedded history's skipped bad lines in the log", async () => {
    const { configFile, stateDir } = setup();
    mkdirSync(join(stateDir, "local-network"), { recursive: true });
    writeFileSync(join(stateDir, "local-network", "group-history.jsonl"), "not json\n{\"g\":\"lobby\"}\n{torn");
    const c = capture();
    expect(await startCommand(["--config", configFile, "--state-dir", stateDir, "--duration-ms", "300", "--no-stdin"], c.io)).toBe(0);
    const skipped = c.err.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "server.history-lines-skipped");
    expect(skipped).toEqual([expect.objectContaining({ level: "warn", skipped: 3 })]);
  });

  it("a 1.1 MB line is refused with a message and wedges nothing: the next line is answered, once", async () => {
    const { configFile, stateDir } = setup();
    const c = capture();
    const huge = "A".repeat(1_100_000);
    const code = await startCommand(["--config", configFile, "--state-dir", stateDir, "--say", huge, "--say", "Alice, ping", "--duration-ms", "1500", "--no-stdin"], c.io);
    expect(code).toBe(0);
    expect(c.err.filter((l) => l.startsWith("could not post as you.acp.local: message too large: 1100002 bytes"))).toHaveLength(1);
    // The refused line was never stored: the next one is #1, and Alice answers it once.
    expect(c.out.filter((l) => / \[lobby\] #1 you\.acp\.local: Alice, ping$/.test(l))).toHaveLength(1);
    expect(c.out.filter((l) => / \[lobby\] #2 alice\.acp\.local \(agent\): /.test(l))).toHaveLength(1);
    expect(c.out.join("\n")).not.toContain("AAAAAAAAAA");
  });

  it("stops when its signal aborts, and a second start on the same state dir resumes the embedded history without repeating", async () => {
    const { configFile, stateDir } = setup();
    const first = capture();
    const stop1 = new AbortController();
    const run1 = startCommand(["--config", configFile, "--state-dir", stateDir, "--say", "Alice, ping", "--no-stdin"], first.io, { signal: stop1.signal });
    await waitFor(() => first.out.some((l) => l.includes("[offline responder] heard you.acp.local")), "alice's reply");
    stop1.abort();
    expect(await run1).toBe(0);
    expect(first.out).toContain("stopping (aborted) — saving state");

    const second = capture();
    const stop2 = new AbortController();
    const run2 = startCommand(["--config", configFile, "--state-dir", stateDir, "--say", "Bob, your turn", "--no-stdin"], second.io, { signal: stop2.signal });
    await waitFor(() => second.out.some((l) => l.includes("bob.acp.local (agent): [offline responder] heard you.acp.local")), "bob's reply");
    stop2.abort();
    expect(await run2).toBe(0);
    // The history file kept #1 and #2, so the new message is #3 and Bob's answer #4; Alice does
    // not answer "Alice, ping" a second time.
    expect(second.out.filter((l) => / \[lobby\] #3 you\.acp\.local: Bob, your turn$/.test(l))).toHaveLength(1);
    expect(second.out.filter((l) => / \[lobby\] #4 bob\.acp\.local \(agent\): \[offline responder\] heard you\.acp\.local: "Bob, your turn" · ref [0-9a-f]{8}-[0-9a-f]{8}$/.test(l))).toHaveLength(1);
    expect(second.out.filter((l) => l.includes("↳ alice") && l.includes("→ sent"))).toEqual([]);
    expect(second.out.filter((l) => l.includes("alice.acp.local (agent):"))).toEqual([]);
  });

  it("--tls --domain: HTTPS/WSS from the local CA, identities re-homed to <name>.D, and Alice still answers", async () => {
    const { configFile, stateDir } = setup();
    const c = capture();
    const code = await startCommand(
      ["--config", configFile, "--state-dir", stateDir, "--tls", "--domain", "demo.test", "--say", "Alice, can you hear me?", "--duration-ms", "1500", "--no-stdin"],
      c.io,
    );
    expect(code).toBe(0);
    expect(c.out[0]).toMatch(/^access point: https:\/\/127\.0\.0\.1:\d+$/);
    expect(c.out[1]).toMatch(/^ca: .+$/);
    expect(existsSync(c.out[1]!.slice(4))).toBe(true);
    expect(c.out[2]).toMatch(/^join lobby: https:\/\/group\.demo\.test\/lobby\?code=/);
    expect(c.out).toContain("agents online: alice (alice.demo.test), bob (bob.demo.test)");
    expect(c.out.filter((l) => / \[lobby\] #2 alice\.demo\.test \(agent\): \[offline responder\] heard you\.demo\.test: "Alice, can you hear me\?" · ref [0-9a-f]{8}-[0-9a-f]{8}$/.test(l))).toHaveLength(1);
    expect(c.err).toEqual([]);
  });

  it("returns 0 without starting agents when its signal is already aborted", async () => {
    const { configFile, stateDir } = setup();
    const c = capture();
    const code = await startCommand(["--config", configFile, "--state-dir", stateDir, "--say", "Alice, ping", "--no-stdin"], c.io, {
      signal: AbortSignal.abort(),
    });
    expect(code).toBe(0);
    expect(c.out.slice(-2)).toEqual(["stopping (aborted) — saving state", "stopped"]);
    expect(c.out.some((l) => l.startsWith("agents online"))).toBe(false);
    expect(c.out.some((l) => l.includes("Alice, ping"))).toBe(false);
    expect(existsSync(stateFile(stateDir, "alice"))).toBe(false);
  });

  it("a bad config file fails with exit code 1, naming the file and the bad key, without a stack trace", async () => {
    const { dir, configFile } = setup({ bufferGateMs: -5 });
    const c = capture();
    const code = await main(["start", "--config", configFile, "--state-dir", join(dir, "state")], c.io);
    expect(code).toBe(1);
    const err = c.err.join("\n");
    expect(err).toContain(configFile);
    expect(err).toContain("groups.lobby.bufferGateMs");
    expect(err).not.toMatch(/\n\s+at /);
    expect(c.out).toEqual([]);

    const unknown = setup({ bufferGateMS: 50 });
    const c2 = capture();
    expect(await main(["start", "--config", unknown.configFile], c2.io)).toBe(1);
    expect(c2.err.join("\n")).toContain("groups.lobby: unknown key `bufferGateMS`");
    expect(c2.err.join("\n")).not.toMatch(/\n\s+at /);
  });
});
