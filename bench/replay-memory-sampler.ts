// The sampler of `BENCH_REPLAY_SAMPLE=FILE` (bench/replay-memory-child.ts): a replay is synchronous
// for seconds at a time (a timer would not fire), but it reads and writes files all along (the
// log, its spilled records, the page's buckets), so `fs.readSync` and `fs.writeSync` are wrapped
// (the ES module bindings synced to them) to look at RSS at most every 50 ms. At each new high, and
// every 10 s whatever the RSS (`tick`: the trend between highs), one JSON line: seconds since the
// start, RSS, RssAnon (what malloc and V8 took, not file pages), ArrayBuffers, V8's own malloc and
// its external memory, each V8 heap space's used and total size, and the stack's frames in src/
// (where). RssAnon rising while the heap spaces and ArrayBuffers stay put is memory outside V8.
import fs, { appendFileSync, readFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";

const EVERY_MS = 50;
/** Also a sample this often, high or not (marked `tick`): the trend between highs. */
const TICK_MS = 10_000;
// Not `performance.now()`: the replay's fake clock replaces it.
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const MB = 1024 * 1024;
const mb = (n: number) => Math.round((n / MB) * 10) / 10;

function rssAnonMb(): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN;
}

/** Wraps the sync file calls to sample memory at each new RSS high, into `file` (appended, JSON lines). */
export function sampleOnFileCalls(file: string, label: string): void {
  const started = nowMs();
  let last = 0;
  let high = 0;
  let lastTick = 0;
  let sampling = false;
  appendFileSync(file, `${JSON.stringify({ run: label })}\n`);
  const look = () => {
    const now = nowMs();
    if (sampling || now - last < EVERY_MS) return;
    last = now;
    const rss = process.memoryUsage.rss();
    const tick = now - lastTick >= TICK_MS;
    if (rss <= high && !tick) return;
    if (tick) lastTick = now;
    high = Math.max(high, rss);
    sampling = true;
    try {
      const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name.replace(/_space$/, ""), [mb(s.space_used_size), mb(s.space_size)]]));
      const where = (new Error().stack ?? "")
        .split("\n")
        .filter((f) => f.includes("/src/"))
        .slice(0, 6)
        .map((f) => f.trim().replace(/^at /, "").replace(/\(?file:\/\/\S*\/src\//, "").replace(/\)$/, ""));
      const heap = getHeapStatistics();
      const sample = {
        s: Math.round((now - started) / 100) / 10,
        ...(tick ? { tick } : {}),
        rss: mb(rss),
        anon: rssAnonMb(),
        ab: mb(process.memoryUsage().arrayBuffers),
        malloced: mb(heap.malloced_memory),
        external: mb(heap.external_memory),
        spaces,
        where,
      };
      appendFileSync(file, `${JSON.stringify(sample)}\n`);
    } finally {
      sampling = false;
    }
  };
  const readSync = fs.readSync;
  const writeSync = fs.writeSync;
  fs.readSync = ((...a: Parameters<typeof readSync>) => {
    look();
    return readSync(...a);
  }) as typeof readSync;
  fs.writeSync = ((...a: Parameters<typeof writeSync>) => {
    look();
    return (writeSync as (...b: unknown[]) => number)(...a);
  }) as typeof writeSync;
  syncBuiltinESMExports();
}
