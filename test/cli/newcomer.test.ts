// The README's live path as a newcomer meets it: separate CLI processes (bin/acp-group.mjs), no
// DNS entry and no resolver hook — only names that resolve on any machine (127.0.0.1). One
// `acp-group server --tls` in its own process serves every case; each case has its own state dir.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin", "acp-group.mjs");
const NO_MODEL_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OPENAI_") && k !== "ACP_SEED_PASSWORD" && k !== "ACP_GROUP_STATE_DIR"));

interface Proc {
  child: ChildProcess;
  out: string[];
  err: string[];
  exited: Promise<number | null>;
}

const procs: Proc[] = [];
const base = mkdtempSync(join(tmpdir(), "acp-newcomer-"));
let n = 0;
const freshDir = () => join(base, `s${++n}`);

function cli(args: string[], env: Record<string, string> = {}, stdin: "ignore" | "pipe" = "ignore"): Proc {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: base, env: { ...NO_MODEL_ENV, ...env }, stdio: [stdin, "pipe", "pipe"] });
  const p: Proc = { child, out: [], err: [], exited: new Promise((r) => child.once("exit", (code) => r(code))) };
  const lines = (sink: string[]) => {
    let rest = "";
    return (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      sink.push(...parts);
    };
  };
  child.stdout!.on("data", lines(p.out));
  child.stderr!.on("data", lines(p.err));
  procs.push(p);
  return p;
}

async function done(p: Proc): Promise<{ code: number | null; out: string[]; err: string[] }> {
  const code = await p.exited;
  // Let the last chunks of the pipes arrive.
  await new Promise((r) => setImmediate(r));
  return { code, out: p.out, err: p.err };
}

/** Waits for `probe` (the processes' output, which they append as it comes); on a timeout the output is in the error. */
function until<T>(probe: () => T | undefined, what: string, p: Proc[], timeoutMs = 30_000): Promise<T> {
  return waitFor(probe, () => `${what}\n${p.map((x) => [...x.out, ...x.err].join("\n")).join("\n---\n")}`, timeoutMs, 50);
}

const line = (p: Proc, prefix: string) => p.out.find((l) => l.startsWith(prefix))?.slice(prefix.length);

let server: Proc;
let ap: string;
let ca: string;
let link: string;

beforeAll(async () => {
  server = cli(["server", "--tls", "--port", "0", "--state-dir", join(base, "server")]);
  await until(() => line(server, "sdk domain: "), "the server's banner", [server]);
  ap = line(server, "access point: ")!;
  ca = line(server, "ca: ")!;
  link = line(server, "join lobby: ")!;
}, 30_000);

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  rmSync(base, { recursive: true, force: true });
});

describe("server --tls prints an access point every machine resolves", () => {
  it("the printed URL is https://127.0.0.1:<port>, its certificate covers it, and `id create` works with it as printed", async () => {
    expect(ap).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const r = await done(cli(["id", "create", "dave.acp.local", "--ap-url", ap, "--ca-file", ca, "--no-passphrase", "--state-dir", freshDir()]));
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe(`created dave.acp.local (certificate from ${ap})`);
  });

  it("a name that does not resolve fails in one line with the fix (no raw getaddrinfo alone)", async () => {
    const port = new URL(ap).port;
    const r = await done(cli(["id", "create", "dave.acp.local", "--ap-url", `https://acp3.acp.local:${port}`, "--ca-file", ca, "--no-passphrase", "--state-dir", freshDir()]));
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toBe(
      `acp-group: cannot reach https://acp3.acp.local:${port}: the name acp3.acp.local does not resolve (for a local network use the \`access point:\` URL \`acp-group server\` printed, such as https://127.0.0.1:${port})`,
    );
  });

  it("without the CA: `certificate not trusted: pass --ca-file …`, one line", async () => {
    const r = await done(cli(["id", "create", "dave.acp.local", "--ap-url", ap, "--no-passphrase", "--state-dir", freshDir()]));
    expect(r.code).toBe(1);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^acp-group: certificate not trusted: pass --ca-file or set network\.caFile \(https:\/\/127\.0\.0\.1:\d+: SELF_SIGNED_CERT_IN_CHAIN\)/);
  });
});

describe("chat", () => {
  let state: string;
  beforeAll(async () => {
    state = freshDir();
    const made = await done(cli(["id", "create", "erin.acp.local", "--ap-url", ap, "--ca-file", ca, "--no-passphrase", "--state-dir", state]));
    expect(made.code).toBe(0);
    const said = await done(cli(["chat", link, "--identity", "erin.acp.local", "--state-dir", state, "--say", "first line", "--say", "second line", "--no-stdin", "--duration-ms", "1500"]));
    expect(said.code).toBe(0);
  }, 40_000);

  it("to a group that does not exist: one line, exit 1, no JSON", async () => {
    const r = await done(cli(["chat", "lobbby", "--identity", "erin.acp.local", "--state-dir", state, "--no-stdin", "--duration-ms", "3000"]));
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err).toEqual(["acp-group: no group lobbby on group.acp.local (group not found)"]);
  });

  it("--history N shows the last N messages in every session, the second too", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await done(cli(["chat", "lobby", "--identity", "erin.acp.local", "--state-dir", state, "--history", "5", "--no-stdin", "--duration-ms", "300"]));
      expect(r.err).toEqual([]);
      expect(r.code).toBe(0);
      expect(r.out[0]).toBe("erin.acp.local in [lobby] on group.acp.local");
      expect(r.out.slice(1).map((l) => l.replace(/^\d\d:\d\d:\d\d \[lobby\] #\d+ /, ""))).toEqual(["erin.acp.local (you): first line", "erin.acp.local (you): second line"]);
    }
    const one = await done(cli(["chat", "lobby", "--identity", "erin.acp.local", "--state-dir", state, "--history", "1", "--no-stdin", "--duration-ms", "300"]));
    expect(one.out.slice(1).map((l) => l.replace(/^\d\d:\d\d:\d\d \[lobby\] #\d+ /, ""))).toEqual(["erin.acp.local (you): second line"]);
  }, 30_000);
});

describe("run", () => {
  it("without --config asks for one (never the demo config, never NO_NETWORK)", async () => {
    const r = await done(cli(["run", "--no-stdin", "--duration-ms", "2000", "--state-dir", freshDir()]));
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err[0]).toBe("acp-group: expected `--config FILE`: the file `acp-group join … --config FILE` wrote (`acp-group start` runs the demo on a network of its own)");
  });
});

describe("one identity, one process", () => {
  it("a second `run` of an identity that runs is refused in one line naming the first; the lock goes with the first", async () => {
    const state = freshDir();
    const config = join(state, "gus.json");
    expect((await done(cli(["id", "create", "gus.acp.local", "--ap-url", ap, "--ca-file", ca, "--no-passphrase", "--state-dir", state]))).code).toBe(0);
    const joined = await done(cli(["join", link, "--identity", "gus.acp.local", "--config", config, "--state-dir", state]));
    // The next command as printed runs in a checkout as where the package is installed.
    expect(joined.out[1]).toMatch(new RegExp(`; start it with: npx acp-group run --config ${config.replaceAll(".", "\\.")}$`));
    const first = cli(["run", "--config", config, "--no-stdin"]);
    await until(() => first.out.find((l) => l.startsWith("agents online:")), "gus online", [first]);
    const second = await done(cli(["run", "--config", config, "--no-stdin", "--duration-ms", "5000"]));
    expect(second.code).toBe(1);
    expect(second.err).toEqual([
      `acp-group: gus.acp.local is already running in another process (pid ${first.child.pid}: acp-group run --config ${config} --no-stdin, since ${JSON.parse(readFileSync(join(state, "locks", "gus.acp.local.lock"), "utf8")).since}); one identity runs in one process — stop that one first (if it is gone, delete ${join(state, "locks", "gus.acp.local.lock")}) (IDENTITY_IN_USE)`,
    ]);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(existsSync(join(state, "locks", "gus.acp.local.lock"))).toBe(false);
  }, 40_000);

  it("with many identities per run: a second run sharing one of them is refused naming it, and lets go of the ones it had started", async () => {
    const state = freshDir();
    const config = join(state, "pair.json");
    const other = join(state, "other.json");
    for (const aid of ["hal.acp.local", "ida.acp.local", "jon.acp.local"]) {
      expect((await done(cli(["id", "create", aid, "--ap-url", ap, "--ca-file", ca, "--no-passphrase", "--state-dir", state]))).code).toBe(0);
    }
    // The first runs hal and ida; the second jon first, then ida.
    for (const aid of ["hal.acp.local", "ida.acp.local"]) expect((await done(cli(["join", link, "--identity", aid, "--config", config, "--state-dir", state]))).code).toBe(0);
    for (const aid of ["jon.acp.local", "ida.acp.local"]) expect((await done(cli(["join", link, "--identity", aid, "--config", other, "--state-dir", state]))).code).toBe(0);
    const first = cli(["run", "--config", config, "--no-stdin"]);
    await until(() => first.out.find((l) => l.startsWith("agents online:")), "hal and ida online", [first]);
    const second = await done(cli(["run", "--config", other, "--no-stdin", "--duration-ms", "5000"]));
    expect(second.code).toBe(1);
    expect(second.err).toHaveLength(1);
    expect(second.err[0]).toMatch(new RegExp(`^acp-group: ida\\.acp\\.local is already running in another process \\(pid ${first.child.pid}: acp-group run --config ${config.replaceAll(".", "\\.")} --no-stdin, `));
    // jon, started before ida was refused, was stopped and its lock let go; the first run's stay.
    expect(existsSync(join(state, "locks", "jon.acp.local.lock"))).toBe(false);
    expect(existsSync(join(state, "locks", "hal.acp.local.lock"))).toBe(true);
    expect(existsSync(join(state, "locks", "ida.acp.local.lock"))).toBe(true);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(existsSync(join(state, "locks", "ida.acp.local.lock"))).toBe(false);
  }, 60_000);
});

describe("start --fresh", () => {
  it("removes its state dir when its output pipe closes (`start --fresh | head -1`)", async () => {
    const p = cli(["start", "--fresh", "--no-stdin", "--say", "Alice, are you there?", "--duration-ms", "20000"]);
    const dir = await until(() => p.out.map((l) => /· state: (\S+)$/.exec(l)?.[1]).find(Boolean), "the state dir line", [p]);
    expect(existsSync(dir)).toBe(true);
    // The reader goes away, as `head -1` does after its line.
    p.child.stdout!.destroy();
    const code = await p.exited;
    expect(code).toBe(0);
    expect(existsSync(dir)).toBe(false);
  }, 30_000);
});

describe("inspect --config", () => {
  it("shows what `start` sends for the demo config: the owner and senders as members of its network", async () => {
    const r = await done(cli(["inspect", "--config", join(ROOT, "config", "demo.json")]));
    expect(r.code).toBe(0);
    const text = r.out.join("\n");
    expect(text).toContain("Your owner is sam.acp.local.");
    expect(text).not.toMatch(/Your owner is sam\. /);
    expect(text).not.toContain("agentcp.io:");
    expect(text).toMatch(/\[Senders\]\nsam\.acp\.local: human, your owner\nbob\.acp\.local: /);
    expect(text).toMatch(/\[msg_id:2\] \[\d\d:\d\d:\d\d\] bob\.acp\.local: Alice, what do you think\? \[mentioned\]/);
  });
});

describe("npx acp-group in a checkout", () => {
  it("runs the checkout's own command", async () => {
    const cache = join(base, "npm-cache");
    const child = spawn("npx", ["--no-install", "acp-group", "--version"], {
      cwd: ROOT,
      env: { ...NO_MODEL_ENV, npm_config_cache: cache, npm_config_update_notifier: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    const code = await new Promise<number | null>((r) => child.on("close", r));
    const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
    expect({ code, out: out.trim(), err: err.trim() }).toEqual({ code: 0, out: `acp-group ${version}`, err: "" });
  }, 120_000);
});
