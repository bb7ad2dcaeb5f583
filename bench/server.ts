// `npm run bench -- server`: the local network's message service under 100, then 300 sockets that
// flood pull requests and never read (slow readers), in a child process so its memory is its own.
// Prints the server's peak memory (and per slow socket) and a well-behaved member's request
// latency (p50/p99) during each flood. Bounded: a fixed flood time, loopback only, the children
// are stopped at the end. BENCH_FLOODERS=N runs one round of N.
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHttpClient, createIdentity, signIn } from "../src/network/index.ts";
import { openRawSession, type RawSession } from "./raw-session.ts";
import { ask } from "./child.ts";

const ROUNDS = process.env.BENCH_FLOODERS ? [Number(process.env.BENCH_FLOODERS)] : [100, 300];
const progress = (what: string) => process.env.BENCH_DEBUG && console.error(`[${new Date().toISOString()}] ${what}`);
const FLOOD_MS = 8000;
const MB = 1024 * 1024;

type Stats = { rss: number; heapUsed: number; external: number; requests: number; counters: Record<string, number> };

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;

export async function benchServer(fmt: (n: number, digits?: number) => string): Promise<void> {
  for (const [i, flooders] of ROUNDS.entries()) await benchRound(fmt, flooders, i === 0);
  await benchSignInFlood(fmt);
}

/**
 * A member signing in (both steps at the message service) every 50 ms for 6 s while another
 * process on the same address keeps 16 × 50 first sign-in steps in flight (half naming the
 * member's aid): the member's sign-in latency and refusals beside what the flood got.
 */
async function benchSignInFlood(fmt: (n: number, digits?: number) => string): Promise<void> {
  const child = fork(fileURLToPath(new URL("./server-child.ts", import.meta.url)), [], {
    execArgv: ["--expose-gc"],
    env: { ...process.env, BENCH_MEMBERS: JSON.stringify(["member.acp.local"]) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-signin-"));
  let flood: ChildProcess | undefined;
  try {
    const { localUrl } = await new Promise<{ localUrl: string }>((resolve) => child.once("message", (m) => resolve(m as { localUrl: string })));
    const member = await createIdentity({ aid: "member.acp.local", stateDir: dir, accessPointUrl: localUrl, noPassphrase: true });
    flood = fork(fileURLToPath(new URL("./sign-in-flood-child.ts", import.meta.url)), [], {
      env: { ...process.env, BENCH_URL: localUrl, BENCH_MEMBER: member.aid },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve) => flood!.once("message", resolve));
    flood.send("go");
    await new Promise((r) => setTimeout(r, 500));
    const http = createHttpClient();
    const latencies: number[] = [];
    let refused = 0;
    const until = Date.now() + 6000;
    while (Date.now() < until) {
      const t0 = process.hrtime.bigint();
      try {
        await signIn({ url: `${localUrl}/api/message/sign_in`, identity: member, http });
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch {
        refused++;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    http.close();
    const { statuses } = await ask<{ statuses: Record<string, number> }>(flood, "stop", (m) => "statuses" in m);
    latencies.sort((a, b) => a - b);
    const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
    console.log(
      `server: a member signing in every 50 ms for 6 s while a process on its address floods first sign-in steps (${fmt(answered)} answered: ${Object.entries(statuses).map(([k, v]) => `${fmt(v)} × ${k}`).join(", ")}): ${latencies.length} sign-ins, ${refused} refused; p50 ${fmt(pct(latencies, 0.5), 1)} ms, p99 ${fmt(pct(latencies, 0.99), 1)} ms, max ${fmt(latencies.at(-1) ?? 0, 1)} ms   (target: none refused, p99 ≤ 1 s)`,
    );
  } finally {
    await Promise.race([ask(child, "stop", () => false), new Promise((r) => child.once("exit", r)), new Promise((r) => setTimeout(r, 3000))]);
    if (child.exitCode === null) child.kill();
    if (flood && flood.exitCode === null) flood.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchRound(fmt: (n: number, digits?: number) => string, FLOODERS: number, withBigFrames: boolean): Promise<void> {
  const BIG_AIDS = Array.from({ length: withBigFrames ? 8 : 0 }, (_, i) => `big${i}.acp.local`);
  const aids = [...Array.from({ length: FLOODERS }, (_, i) => `flood${i}.acp.local`), "good.acp.local", ...BIG_AIDS];
  const child = fork(fileURLToPath(new URL("./server-child.ts", import.meta.url)), [], {
    execArgv: ["--expose-gc"],
    env: { ...process.env, BENCH_MEMBERS: JSON.stringify(aids) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  child.setMaxListeners(0);
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-clients-"));
  const sessions: RawSession[] = [];
  let flood: ChildProcess | undefined;
  try {
    const { localUrl } = await new Promise<{ localUrl: string }>((resolve) => child.once("message", (m) => resolve(m as { localUrl: string })));
    progress("server up");
    const goodId = await createIdentity({ aid: "good.acp.local", stateDir: dir, accessPointUrl: localUrl, noPassphrase: true });
    const good = await openRawSession({ localUrl, identity: goodId, service: "group.acp.local" });
    sessions.push(good);
    flood = fork(fileURLToPath(new URL("./flood-child.ts", import.meta.url)), [], {
      env: { ...process.env, BENCH_URL: localUrl, BENCH_FLOOD_AIDS: JSON.stringify(aids.slice(0, FLOODERS)), BENCH_BIG_AIDS: JSON.stringify(BIG_AIDS) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve) => flood!.once("message", resolve));
    progress("sessions open");
    await ask(child, "gc", (m) => m.gc === true);
    const base = await ask<Stats>(child, "stats", (m) => "rss" in m);
    flood.send("go");
    let peak = base;
    const sampler = setInterval(() => {
      void ask<Stats>(child, "stats", (m) => "rss" in m).then((s) => {
        if (s.rss > peak.rss) peak = { ...s, heapUsed: Math.max(s.heapUsed, peak.heapUsed) };
        else peak = { ...peak, heapUsed: Math.max(s.heapUsed, peak.heapUsed) };
      });
    }, 250);
    progress("flooding");
    const latencies: number[] = [];
    const until = Date.now() + FLOOD_MS;
    let g = 0;
    let unanswered = 0;
    while (Date.now() < until) {
      const t0 = process.hrtime.bigint();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answered = await Promise.race([
        good.request({ action: "pull_messages", request_id: `g${++g}`, group_id: "bench", params: { after_msg_id: 45, limit: 5 } }).then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 5000))),
      ]);
      clearTimeout(timer);
      if (!answered) unanswered++;
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      await new Promise((r) => setTimeout(r, 10));
    }
    clearInterval(sampler);
    const end = await ask<Stats>(child, "stats", (m) => "rss" in m);
    // Then, the flood stopped, 8 sockets send one 60 MB frame each: refused from the header, never buffered whole.
    await ask(flood, "halt", (m) => m.halted === true);
    await ask(child, "gc", (m) => m.gc === true);
    const beforeBig = await ask<Stats>(child, "stats", (m) => "rss" in m);
    let bigPeak = beforeBig.rss;
    let bigHeap = beforeBig.heapUsed + beforeBig.external;
    const bigSampler = setInterval(
      () =>
        void ask<Stats>(child, "stats", (m) => "rss" in m).then((s) => {
          bigPeak = Math.max(bigPeak, s.rss);
          bigHeap = Math.max(bigHeap, s.heapUsed + s.external);
        }),
      100,
    );
    const { bigClosed } = await ask<{ bigClosed: number[] }>(flood, "big", (m) => "bigClosed" in m);
    clearInterval(bigSampler);
    const { sent } = await ask<{ sent: number }>(flood, "stop", (m) => "sent" in m);
    latencies.sort((a, b) => a - b);
    const c = end.counters;
    console.log(
      `server: ${FLOODERS} sockets flooding pull requests (~55 KB answers) without reading for ${FLOOD_MS / 1000} s: ${fmt(sent)} requests queued by them, ${fmt(end.requests)} served`,
    );
    console.log(
      `server: memory rss ${fmt(base.rss / MB)} MB idle → peak ${fmt(peak.rss / MB)} MB, heap peak ${fmt(peak.heapUsed / MB)} MB   (target: bounded, not growing with requests)`,
    );
    console.log(
      `server: ${FLOODERS} slow readers cost ${fmt((peak.rss - base.rss) / FLOODERS / 1024)} KB of rss each at the peak (${fmt(peak.rss / MB)} − ${fmt(base.rss / MB)} MB over ${FLOODERS})   (target: far below 1 MB)`,
    );
    if (withBigFrames) console.log(
      `server: 8 sockets × one 60 MB frame: rss ${fmt(beforeBig.rss / MB)} MB → peak ${fmt(bigPeak / MB)} MB, heap+buffers ${fmt((beforeBig.heapUsed + beforeBig.external) / MB)} → ${fmt(bigHeap / MB)} MB; close codes ${[...new Set(bigClosed)].join(", ")}   (target: refused from the header, not buffered)`,
    );
    console.log(`server: sockets paused ${c.pausedSockets}, closed as slow ${c.slowClosed}, closed as dead ${c.deadClosed}`);
    console.log(
      `server: ${FLOODERS} slow readers: ${fmt((peak.rss - base.rss) / FLOODERS / 1024)} KB of rss per socket, the good member's p99 ${fmt(pct(latencies, 0.99), 1)} ms   (targets: far below 1 MB; p99 ≤ 50 ms)`,
    );
    console.log(
      `server: well-behaved member's request latency during the flood of ${FLOODERS}: p50 ${fmt(pct(latencies, 0.5), 1)} ms, p99 ${fmt(pct(latencies, 0.99), 1)} ms, max ${fmt(latencies[latencies.length - 1]!, 1)} ms over ${latencies.length} requests, ${unanswered} unanswered in 5 s   (target p99 ≤ 50 ms)`,
    );
  } finally {
    for (const s of sessions) s.close();
    await Promise.race([ask(child, "stop", () => false), new Promise((r) => child.once("exit", r)), new Promise((r) => setTimeout(r, 3000))]);
    if (child.exitCode === null) child.kill();
    if (flood && flood.exitCode === null) flood.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
