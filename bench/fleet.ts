// `npm run bench -- fleet [--n 100] [--groups 5] [--progress] [--startup-only] [--start-at-once N]`: N identities × G groups in this one process, as
// `acp-group run` runs them, against `acp-group server --tls` in a process of its own, with ten
// people (bench/fleet-people.ts, a third process) posting 5 messages a second. Prints start-up
// time and the longest event-loop stall meanwhile, how many profiles got published, RSS and JS
// heap after GC per identity and per identity-group, idle CPU per identity, event-loop p99 under
// traffic and the mention latency, then restarts the network: time until every identity is back
// and the mention latency in the 30 s right after and the 30 s after those. Asserts nothing.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { openLiveSession, START_AT_ONCE } from "../src/cli/live-session.ts";
import { createCliBackend } from "../src/cli/live.ts";
import { loadConfigFile } from "../src/config/load.ts";
import { createJsonLogger, silentLogger } from "../src/log.ts";
import { createHttpClient, createIdentity } from "../src/network/index.ts";
import { startIdentity } from "../src/runtime/identity.ts";
import { processSignInPace } from "../src/network/sign-in-pace.ts";
import { createFileStateStore } from "../src/state/file-store.ts";
import { ask } from "./child.ts";

type Fmt = (n: number, digits?: number) => string;
const gc = (globalThis as { gc?: () => void }).gc;
const root = fileURLToPath(new URL("..", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) => (xs.length === 0 ? Number.NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!);
const mb = (bytes: number) => bytes / 1024 / 1024;

function argOf(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name}: expected a whole number ≥ 1`);
  return v;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** `acp-group server --tls` in its own process; resolves with its printed access point and CA once it listens. */
function startServer(args: string[]): Promise<{ child: ChildProcess; accessPoint: string; caFile: string }> {
  const child = spawn(process.execPath, [join(root, "bin/acp-group.mjs"), "server", ...args], { stdio: ["ignore", "pipe", "ignore"] });
  // Never left behind, whatever ends the bench.
  process.once("exit", () => child.kill());
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const ap = /access point: (\S+)/.exec(out)?.[1];
      const ca = /ca: (\S+)/.exec(out)?.[1];
      if (ap && ca && out.includes("sdk domain:")) resolve({ child, accessPoint: ap, caFile: ca });
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before listening:\n${out}`)));
  });
}

/** SIGTERM, and SIGKILL after 5 s: a server still closing its sockets is a network that went away all the same. */
const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });

export async function benchFleet(fmt: Fmt): Promise<void> {
  const N = argOf("n", 100);
  const G = argOf("groups", 5);
  const GROUPS = Math.max(1, Math.round((N * G) / 10));
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-fleet-"));
  const people = Array.from({ length: 10 }, (_, i) => `person${i}.acp.local`);
  const groupOf = (i: number, k: number) => `g${(i * G + k) % GROUPS}`;
  const members: Record<string, string[]> = {};
  const identities: Record<string, unknown> = {};
  for (let i = 0; i < N; i++) {
    const groups: Record<string, object> = {};
    for (let k = 0; k < Math.min(G, GROUPS); k++) {
      groups[groupOf(i, k)] = {};
      (members[groupOf(i, k)] ??= []).push(`f${i}.acp.local`);
    }
    identities[`f${i}`] = { aid: `f${i}.acp.local`, groups };
  }
  // Replies go out at once (no human-like delay): the figures are the system's, not a deliberate pause.
  const raw = { humans: people, groups: { "*": { delay: { enabled: false } } }, identities };
  const serverConfig = join(dir, "server.json");
  writeFileSync(serverConfig, JSON.stringify(raw));
  const port = await freePort();
  const serverArgs = ["--tls", "--config", serverConfig, "--state-dir", join(dir, "server"), "--port", String(port), "--max-agents-per-source", String(N + 20)];
  let server = await startServer(serverArgs);
  console.log(`fleet: ${N} identities × ${G} groups (${GROUPS} groups of ~10 agents, 10 people) against acp-group server --tls (pid ${server.child.pid}) · node ${process.execArgv.join(" ")} (as \`acp-group run\` starts on this machine) · ${load()}`);

  try {
    // Keys and certificates first (not timed): what `acp-group id create` does for each.
    const stateDir = join(dir, "fleet");
    const http = createHttpClient({ caFile: server.caFile });
    for (let i = 0; i < N; i += 16) {
      await Promise.all(
        Array.from({ length: Math.min(16, N - i) }, (_, k) =>
          createIdentity({ aid: `f${i + k}.acp.local`, stateDir, accessPointUrl: server.accessPoint, noPassphrase: true, tls: { caFile: server.caFile }, http }),
        ),
      );
    }
    http.close();
    const configFile = join(dir, "fleet.json");
    writeFileSync(configFile, JSON.stringify({ ...raw, stateDir, network: { caFile: server.caFile }, identities: Object.fromEntries(Object.entries(identities).map(([id, v]) => [id, { ...(v as object), accessPointUrl: server.accessPoint }])) }));

    gc?.();
    const baseline = process.memoryUsage();
    const loop = monitorEventLoopDelay({ resolution: TICK_MS });
    loop.enable();
    const t0 = performance.now();
    // CPU of the event-loop thread alone (signatures and file writes on libuv's pool count only in the process's):
    // less sensitive to what else runs on the box than wall time.
    const mainCpu0 = process.threadCpuUsage();
    const cpuStart0 = process.cpuUsage();
    const serverCpu0 = processCpuSeconds(server.child.pid);
    // As `acp-group run` does: the config loaded, the identities started in slices on one session.
    const config = loadConfigFile(configFile);
    // The config is read before any identity runs (nobody waits on the loop then): its time is
    // printed on its own, and the stalls that matter are those once identities start.
    const configMs = performance.now() - t0;
    const whileRunning = monitorEventLoopDelay({ resolution: TICK_MS });
    whileRunning.enable();
    // `--log FILE`: the fleet's warnings and errors as JSON lines (why an identity is not back).
    const logAt = process.argv.indexOf("--log");
    const logger = logAt >= 0 ? createJsonLogger({ level: "warn", write: (line) => appendFileSync(process.argv[logAt + 1]!, line + "\n") }) : silentLogger;
    const store = createFileStateStore({ dir: stateDir, logger: silentLogger });
    const { backend } = createCliBackend({ config, logger: silentLogger, store, out: () => {}, showPrompts: false });
    // How long each identity takes from its start to `ready` (what holds its start-up slot).
    const readyMs: number[] = [];
    const startOne: typeof startIdentity = (params) => {
      const at = performance.now();
      const r = startIdentity(params);
      r.ready.then(() => readyMs.push(performance.now() - at), () => {});
      return r;
    };
    // `--start-at-once N`: identities part-way through start-up at once (default START_AT_ONCE), to size it.
    const atOnceAt = process.argv.indexOf("--start-at-once");
    const startAtOnce = atOnceAt >= 0 ? argOf("start-at-once", START_AT_ONCE) : undefined;
    const session = openLiveSession({ io: { out: () => {}, err: () => {} }, startOne, startAtOnce, afterStop: async () => void (await backend.close?.()), onStopFailed: () => {} });
    const startCpu0 = process.threadCpuUsage();
    const running = session.running;
    const progress: string[] = [];
    // From the first start: identities start as earlier ones come online (START_AT_ONCE).
    const sample = setInterval(() => progress.push(`${fmt((performance.now() - t0) / 1000, 1)}s:${running.filter((r) => r.connection!.status === "open").length}/${running.length} (${processSignInPace.width} at once)`), 1000);
    await session.startIdentities(Object.keys(config.identities), () => ({ config, backend, logger, store }));
    const startedS = (performance.now() - t0) / 1000;
    const startedCpu = cpuSeconds(process.threadCpuUsage(startCpu0));
    await Promise.all(running.map((r) => r.ready));
    clearInterval(sample);
    if (process.argv.includes("--progress")) {
      console.log(`  online over time: ${progress.join(" ")} · every identity started (sign-ins under way) at ${fmt(startedS, 1)} s, ${fmt(startedCpu, 1)} s of loop CPU until then · one identity's start to ready: p50 ${fmt(quantile(readyMs, 0.5) / 1000, 1)} s, p99 ${fmt(quantile(readyMs, 0.99) / 1000, 1)} s, max ${fmt(Math.max(...readyMs) / 1000, 1)} s`);
      // Where to cut a --cpu-prof of this process (its clock starts with the process).
      console.log(`  start-up window: ${fmt(t0 / 1000, 1)}–${fmt(performance.now() / 1000, 1)} s of this process`);
    }
    const startupS = (performance.now() - t0) / 1000;
    const startStallMs = lateMs(loop.max);
    const runningStallMs = lateMs(whileRunning.max);
    whileRunning.disable();
    const startMainCpu = cpuSeconds(process.threadCpuUsage(mainCpu0));
    const startCpu = cpuSeconds(process.cpuUsage(cpuStart0));
    const serverCpu = processCpuSeconds(server.child.pid) - serverCpu0;
    await Promise.race([Promise.all(running.map((r) => r.profilePublished)), sleep(30_000)]);
    const published = running.filter((r) => r.profileState === "published").length;
    console.log(`start-up: all ${N} online in ${fmt(startupS, 1)} s, longest event-loop stall ${fmt(runningStallMs)} ms once identities run (${fmt(startStallMs)} ms counting the config read, ${fmt(configMs)} ms), CPU ${fmt(startMainCpu, 1)} s on the event loop (${fmt(startCpu, 1)} s in the process, ${fmt(serverCpu, 1)} s in the network's) · profiles published ${published}/${N} · ${load()}`);

    await sleep(5000);
    gc?.();
    const m = process.memoryUsage();
    const rss = m.rss - baseline.rss;
    const heap = m.heapUsed - baseline.heapUsed;
    console.log(
      `memory after GC: RSS ${fmt(mb(m.rss))} MB (+${fmt(mb(rss))} MB: ${fmt(rss / N / 1024)} KB per identity, ${fmt(rss / (N * G) / 1024)} KB per identity-group) · ` +
        `JS heap ${fmt(mb(m.heapUsed))} MB (+${fmt(mb(heap))} MB: ${fmt(heap / N / 1024)} KB per identity, ${fmt(heap / (N * G) / 1024)} KB per identity-group)`,
    );

    if (process.argv.includes("--startup-only")) {
      await session.stop("bench done");
      session.release();
      return;
    }
    const cpu0 = process.cpuUsage();
    const idleMs = 30_000;
    await sleep(idleMs);
    const cpu = process.cpuUsage(cpu0);
    console.log(`idle: ${fmt((cpu.user + cpu.system) / 1000 / N / (idleMs / 60_000), 2)} ms CPU per identity per minute`);

    const crowd = fork(fileURLToPath(new URL("./fleet-people.ts", import.meta.url)), [], {
      env: { ...process.env, FLEET_PEOPLE: JSON.stringify({ accessPointUrl: server.accessPoint, caFile: server.caFile, keyDir: join(dir, "server", "local-network"), people, groups: members }) },
    });
    process.once("exit", () => crowd.kill());
    crowd.on("error", (err) => console.log(`people: ${err.message}`));
    await ask(crowd, undefined, (msg) => msg.ready === true);
    loop.reset();
    const trafficMainCpu0 = process.threadCpuUsage();
    crowd.send({ cmd: "traffic", rate: 5 } as unknown as string);
    await sleep(30_000);
    const trafficMainCpu = cpuSeconds(process.threadCpuUsage(trafficMainCpu0));
    // Where to cut a --cpu-prof of this process (its clock starts with the process).
    if (process.argv.includes("--progress")) console.log(`  traffic window: ${fmt(performance.now() / 1000 - 30, 1)}–${fmt(performance.now() / 1000, 1)} s of this process`);
    crowd.send({ cmd: "quiet" } as unknown as string);
    const trafficP99 = lateMs(loop.percentile(99));
    const trafficMax = lateMs(loop.max);
    const trafficRawP99 = loop.percentile(99) / 1e6;
    await sleep(3000);
    const traffic = await ask<{ answered: Array<{ ms: number }>; unanswered: number[]; refused: number[] }>(crowd, { cmd: "report" }, (msg) => Array.isArray(msg.answered));
    const ms = traffic.answered.map((a) => a.ms);
    console.log(
      `traffic (10 people, 5 msg/s, 30 s): event-loop delay p99 ${fmt(trafficP99, 1)} ms (max ${fmt(trafficMax)}; histogram p99 ${fmt(trafficRawP99, 1)} ms with its ${TICK_MS} ms tick), ${fmt((trafficMainCpu / 30) * 100)} % of a core on the event loop · mentions answered ${ms.length}/${ms.length + traffic.unanswered.length} (${traffic.refused.length} more refused by the network), p50 ${fmt(quantile(ms, 0.5))} ms, p99 ${fmt(quantile(ms, 0.99))} ms · ${load()}`,
    );

    // The network restarts: every socket drops, every identity signs in again.
    await stopChild(server.child);
    const down = performance.now();
    server = await startServer(serverArgs);
    const upAt = performance.now();
    // The longest stall while they come back: the reconnect storm's own turns.
    const comingBack = monitorEventLoopDelay({ resolution: TICK_MS });
    comingBack.enable();
    crowd.send({ cmd: "traffic", rate: 5 } as unknown as string);
    const allBack = () => running.every((r) => [...r.connections.values()].every((c) => c.status === "open"));
    while (!allBack() && performance.now() - upAt < 120_000) await sleep(100);
    const backS = (performance.now() - upAt) / 1000;
    comingBack.disable();
    const out = running.filter((r) => ![...r.connections.values()].every((c) => c.status === "open"));
    if (out.length > 0) console.log(`  not back: ${out.length}, e.g. ${out.slice(0, 5).map((r) => `${r.aid} (${[...r.connections.values()].map((c) => c.status).join(",")})`).join(", ")}`);
    console.log(`network restart: down ${fmt((upAt - down) / 1000, 1)} s; ${allBack() ? "all" : "NOT all"} ${N} identities back ${fmt(backS, 1)} s after it listened again, longest event-loop stall meanwhile ${fmt(lateMs(comingBack.max))} ms · ${load()}`);
    await sleep(Math.max(0, upAt + 60_000 - performance.now()));
    crowd.send({ cmd: "quiet" } as unknown as string);
    await sleep(3000);
    const after = await ask<{ answered: Array<{ postedAt: number; ms: number }>; unanswered: number[]; refused: number[] }>(crowd, { cmd: "report" }, (msg) => Array.isArray(msg.answered));
    const wallUp = Date.now() - (performance.now() - upAt);
    for (const [label, from, to] of [["0–30 s after", 0, 30_000], ["30–60 s after", 30_000, 60_000]] as const) {
      const inWindow = after.answered.filter((a) => a.postedAt - wallUp >= from && a.postedAt - wallUp < to).map((a) => a.ms);
      const lost = after.unanswered.filter((at) => at - wallUp >= from && at - wallUp < to).length;
      const notTaken = after.refused.filter((at) => at - wallUp >= from && at - wallUp < to).length;
      console.log(`mentions ${label}: answered ${inWindow.length}/${inWindow.length + lost} (${notTaken} more refused by the network, never delivered), p50 ${fmt(quantile(inWindow, 0.5))} ms, p99 ${fmt(quantile(inWindow, 0.99))} ms`);
    }
    crowd.send({ cmd: "stop" } as unknown as string);
    await new Promise((r) => crowd.once("exit", r));
    await session.stop("bench done");
    session.release();
  } finally {
    await stopChild(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * monitorEventLoopDelay records each whole interval between its timer's runs, tick included: an
 * idle loop shows p50 10 ms, p99 11.6 ms at a 10 ms resolution (Node 24). The delay is what the
 * loop adds past the tick.
 */
const TICK_MS = 10;
const lateMs = (ns: number): number => Math.max(0, ns / 1e6 - TICK_MS);

const cpuSeconds = (u: { user: number; system: number }): number => (u.user + u.system) / 1e6;

/**
 * CPU seconds another process has used (its user and system time from /proc, in Linux's 100 Hz
 * ticks): the local network shares the machine's cores with the fleet. NaN where /proc is not.
 */
function processCpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The 1-minute load average: the box is shared, every figure says what else ran. */
const load = (): string => `load ${loadavg()[0]!.toFixed(2)}`;
