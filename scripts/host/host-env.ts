// The installed OpenClaw host (scripts/host/install.sh) as the real-host scripts use it: paths, an
// isolated config/state/home per run, the `openclaw` CLI, and a gateway process with its log.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runChild } from "../run-child.ts";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export interface HostPaths {
  dir: string;
  node: string;
  openclaw: string;
  version: string;
}

export function resolveHostPaths(env: NodeJS.ProcessEnv = process.env): HostPaths {
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  const dir = resolve(env.OPENCLAW_HOST_DIR ?? join(cacheHome, "acp-group-channel", "openclaw-host"));
  const node = join(dir, "node/bin/node");
  const pkg = join(dir, "host/node_modules/openclaw");
  const openclaw = join(pkg, "openclaw.mjs");
  if (!existsSync(node) || !existsSync(openclaw)) {
    throw new Error(`no OpenClaw host in ${dir}: run scripts/host/install.sh first`);
  }
  const version = (JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string }).version;
  return { dir, node, openclaw, version };
}

/**
 * Where the plugin the host loads comes from (ACP_PLUGIN_SOURCE):
 * - `installed` (default): this checkout packed and installed by the host itself
 *   (scripts/host/plugin-install.sh: `npm pack`, then `openclaw plugins install npm-pack:<tgz>`);
 *   the runs load that installed package folder — its dist/, its host-installed dependencies and
 *   its `openclaw` peer link — exactly what a user's install holds.
 * - `checkout`: this checkout's folder (after `npm run build`), for quicker iteration.
 */
export type PluginSource = "installed" | "checkout";

export function pluginSource(env: NodeJS.ProcessEnv = process.env): PluginSource {
  const value = env.ACP_PLUGIN_SOURCE ?? "installed";
  if (value !== "installed" && value !== "checkout") throw new Error(`ACP_PLUGIN_SOURCE=${value}: expected installed or checkout`);
  return value;
}

/** Written by scripts/host/plugin-install.sh: the installed package folder. */
export const INSTALLED_PLUGIN_MARK = join(REPO, ".cache", "openclaw-plugin-dir");

/**
 * The plugin root the host loads (see PluginSource), unless ACP_PLUGIN_DIR names another. The host
 * finds the entry through package.json `openclaw.extensions` (./dist/plugin.js).
 */
export function resolvePluginDir(env: NodeJS.ProcessEnv = process.env): string {
  let dir: string;
  if (env.ACP_PLUGIN_DIR) dir = resolve(env.ACP_PLUGIN_DIR);
  else if (pluginSource(env) === "checkout") dir = REPO;
  else {
    if (!existsSync(INSTALLED_PLUGIN_MARK)) throw new Error(`no installed plugin (${INSTALLED_PLUGIN_MARK}): run scripts/host/plugin-install.sh first`);
    dir = readFileSync(INSTALLED_PLUGIN_MARK, "utf8").trim();
  }
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { openclaw?: { extensions?: unknown } };
  const extensions = pkg.openclaw?.extensions;
  if (!Array.isArray(extensions) || extensions.length === 0) {
    throw new Error(`${join(dir, "package.json")} has no \`openclaw.extensions\`: the host cannot load the plugin from ${dir}`);
  }
  for (const entry of extensions) {
    if (!existsSync(join(dir, String(entry)))) throw new Error(`${dir} has no ${String(entry)} (npm run build)`);
  }
  if (!existsSync(join(dir, "openclaw.plugin.json"))) throw new Error(`${dir} has no openclaw.plugin.json (node scripts/gen-manifest.ts)`);
  return dir;
}

/** A fresh directory holding one run's HOME, state dir and config. */
export function createRunDir(host: HostPaths, name: string): { root: string; home: string; state: string; config: string } {
  // One folder per run: the host cache is shared by every checkout on the machine, and two runs
  // writing the same folder overwrite each other's config and gateway log.
  const root = join(host.dir, "runs", `${name}-${process.pid}-${Date.now().toString(36)}`);
  rmSync(root, { recursive: true, force: true });
  const home = join(root, "home");
  const state = join(root, "state");
  mkdirSync(home, { recursive: true });
  mkdirSync(state, { recursive: true });
  return { root, home, state, config: join(state, "openclaw.json") };
}

export function hostEnv(run: { home: string; state: string; config: string }): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: run.home,
    OPENCLAW_STATE_DIR: run.state,
    OPENCLAW_CONFIG_PATH: run.config,
    // The host talks only to our local mock model and group server: no update checks, no LAN
    // advertising, no canvas host (also faster to start).
    OPENCLAW_NO_AUTO_UPDATE: "1",
    OPENCLAW_DISABLE_BONJOUR: "1",
    OPENCLAW_SKIP_CANVAS_HOST: "1",
    NO_COLOR: "1",
    FORCE_COLOR: "0",
  };
}

export function writeJson(file: string, value: unknown): void {
  writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

/** Runs the `openclaw` CLI to completion. */
export async function runOpenclaw(host: HostPaths, env: NodeJS.ProcessEnv, args: string[], timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runChild(host.node, [host.openclaw, ...args], { env, timeoutMs });
  return { code, stdout, stderr };
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolvePromise(port));
    });
  });
}

export interface Gateway {
  readonly pid: number;
  readonly logFile: string;
  log(): string;
  tail(lines?: number): string;
  /** Resolves with the first log line matching `pattern` after `fromOffset` (a log() length). */
  waitForLog(pattern: RegExp, timeoutMs: number, fromOffset?: number): Promise<string>;
  /** SIGTERM, then wait for the process to exit on its own. */
  stop(timeoutMs: number): Promise<{ exited: boolean; code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  /** Last resort after a failure: SIGKILL the gateway's process group (only what we spawned). */
  kill(): void;
}

/**
 * `auth: "none"` (default) lets any local client in without credentials; `{ token }` makes the
 * gateway require that shared token, which is what lets the `openclaw` CLI (an operator client
 * without a paired device) connect to it: 2026.9.6 refuses device-less operators unless they
 * authenticated with the shared secret ("device identity required").
 */
export function startGateway(host: HostPaths, env: NodeJS.ProcessEnv, params: { port: number; logFile: string; auth?: "none" | { token: string } }): Gateway {
  const out = createWriteStream(params.logFile);
  let text = "";
  // Its own process group, so cleanup reaches the gateway's children and nothing else.
  const child: ChildProcess = spawn(
    host.node,
    [
      host.openclaw, "gateway", "run", "--port", String(params.port),
      ...(params.auth === undefined || params.auth === "none" ? ["--auth", "none"] : ["--auth", "token", "--token", params.auth.token]),
      "--allow-unconfigured", "--verbose",
    ],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  const onData = (d: Buffer) => {
    text += d.toString("utf8");
    out.write(d);
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolvePromise) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolvePromise();
    }),
  );
  const pid = child.pid ?? -1;
  return {
    pid,
    logFile: params.logFile,
    log: () => text,
    tail: (lines = 60) => text.split("\n").slice(-lines).join("\n"),
    async waitForLog(pattern, timeoutMs, fromOffset = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const lines = text.slice(fromOffset).split("\n");
        const hit = lines.find((l) => pattern.test(l));
        if (hit !== undefined) return hit;
        if (exit) throw new Error(`gateway exited (code ${exit.code}, signal ${exit.signal}) before logging ${pattern}`);
        if (Date.now() > deadline) throw new Error(`gateway did not log ${pattern} within ${timeoutMs} ms`);
        await sleep(200);
      }
    },
    async stop(timeoutMs) {
      const started = Date.now();
      if (!exit) child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      const done = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (done && !out.writableEnded) out.end();
      return { exited: done, code: exit?.code ?? null, signal: exit?.signal ?? null, ms: Date.now() - started };
    },
    kill() {
      if (pid <= 0) return;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    },
  };
}

/**
 * The host's `models` section with one provider, `mock`, at `baseUrl` (the local OpenAI-compatible
 * mock): no hosted catalog download, and `mock/mock-model` is the only model.
 */
export function mockModels(baseUrl: string): Record<string, unknown> {
  return {
    catalogRefresh: { enabled: false },
    mode: "merge",
    providers: {
      mock: {
        baseUrl,
        apiKey: "mock-key",
        api: "openai-completions",
        models: [{ id: "mock-model", name: "Mock Model", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32000, maxTokens: 1024 }],
      },
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
