// Figures for state saves under load and for a runtime group's memory as a whole. Prints, asserts nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { DEFAULT_GROUP_SETTINGS } from "../src/config/load.ts";
import { closeGroupClientForIdentity, initGroupClientForIdentity, type GroupClient } from "../src/group/group-client.ts";
import { createLazyGroupMonitor } from "../src/monitor/lazy-monitor.ts";
import type { GroupMonitor } from "../src/monitor/monitor.ts";
import { createFileStateStore } from "../src/state/file-store.ts";
import { createSaveScheduler } from "../src/state/save-scheduler.ts";
import { GroupFeed } from "../src/transport/group-feed.ts";
import { silentLogger } from "../src/log.ts";
import type { IdentityConfig, PersistedGroupState } from "../src/types.ts";

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

function busyState(g: number, tick: number): PersistedGroupState {
  const t = 1_767_600_000_000 + tick * 20;
  return {
    version: 1,
    cursor: tick * 3 + g,
    lastSelfSpeakAt: t - 5000,
    replyHashes: Array.from({ length: 10 }, (_, i) => `${(g * 31 + i).toString(16).padStart(16, "0")}`),
    replyTexts: Array.from({ length: 10 }, (_, i) => `reply ${i} of group ${g}: the build is green again`),
    budgetEvents: Array.from({ length: 30 }, (_, i) => [t - i * 60_000, 900 + i, 0] as [number, number, number]),
    agentChain: tick % 4,
  };
}

/**
 * 1,000 busy groups for `seconds`: every 20 ms each group takes a message (a save within 1 s) and
 * 1 in 150 ends a dispatch (a save at once) — the runtime's pattern. `mode` "async" is the save
 * scheduler over fs/promises; "sync" is the previous debounced synchronous write, for comparison;
 * "none" runs the same loop without saving (what the machine alone costs).
 */
async function saveLoad(mode: "async" | "sync" | "none", seconds: number): Promise<{ p99: number; max: number; mean: number; writes: number }> {
  const GROUPS = 1000;
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-saves-"));
  const store = createFileStateStore({ dir });
  let tick = 0;
  let writes = 0;
  const scheduler = createSaveScheduler({
    save: async (key) => {
      writes++;
      await store.saveGroupAsync!("bench", key, busyState(Number(key.slice(1)), tick));
    },
  });
  const syncTimers = new Map<string, ReturnType<typeof setTimeout>>();
  const syncSave = (key: string) => {
    clearTimeout(syncTimers.get(key));
    syncTimers.delete(key);
    writes++;
    store.saveGroup("bench", key, busyState(Number(key.slice(1)), tick));
  };
  const request = (key: string, delay: number) => {
    if (mode === "none") return;
    if (mode === "async") return scheduler.request(key, delay);
    if (delay === 0) return syncSave(key);
    if (!syncTimers.has(key)) syncTimers.set(key, setTimeout(() => syncSave(key), delay));
  };
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // Wall-clock bound: with synchronous saves a tick can take far longer than its 20 ms.
  const started = Date.now();
  await new Promise<void>((resolve) => {
    const interval = setInterval(() => {
      tick++;
      for (let g = 0; g < GROUPS; g++) request(`g${g}`, (g + tick) % 150 === 0 ? 0 : 1000);
      if (Date.now() - started >= seconds * 1000) {
        clearInterval(interval);
        resolve();
      }
    }, 20);
  });
  h.disable();
  for (const t of syncTimers.values()) clearTimeout(t);
  await scheduler.flush();
  rmSync(dir, { recursive: true, force: true });
  return { p99: h.percentile(99) / 1e6, max: h.max / 1e6, mean: h.mean / 1e6, writes: writes / ((Date.now() - started) / 1000) };
}

export async function benchSaves(): Promise<void> {
  const seconds = 5;
  const a = await saveLoad("async", seconds);
  console.log(`saves: 1,000 busy groups for ${seconds} s (a message every 20 ms each, a dispatch end every 3 s each)`);
  console.log(`  async, coalesced: event-loop delay p99 ${fmt(a.p99, 1)} ms, mean ${fmt(a.mean, 1)} ms, max ${fmt(a.max, 1)} ms, ${fmt(a.writes)} writes/s   (target p99 ≤ 10 ms)`);
  const n = await saveLoad("none", seconds);
  console.log(`  the same loop without saves (this machine's own loop delay): p99 ${fmt(n.p99, 1)} ms, max ${fmt(n.max, 1)} ms`);
  const s = await saveLoad("sync", seconds);
  console.log(`  previous synchronous saves, same load: p99 ${fmt(s.p99, 1)} ms, max ${fmt(s.max, 1)} ms, ${fmt(s.writes)} writes/s`);
}

/** Bytes per idle runtime group: group client + monitor + transport feed, as the runtime builds them. */
export async function benchRuntimeGroupMemory(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return console.log("runtime memory: skipped (run with --expose-gc)");
  const N = 5000;
  const identity: IdentityConfig = { aid: "alice.agentcp.io", name: "Alice", aliases: ["ali"], owner: "owner.agentcp.io", enabled: true, groups: [] } as unknown as IdentityConfig;
  const backend = { name: "none", generate: async () => ({ text: "" }) };
  const sender = { sendMessage: async () => ({ msgId: "1", timestamp: 1 }) };
  const counters = { handlerErrors: 0, pullFailures: 0, messagesFed: 0, heldOverflows: 0, gapResyncs: 0, pageShrinks: 0, droppedOversize: 0 };
  const groups: Array<{ client: GroupClient; monitor: GroupMonitor; feed: GroupFeed }> = [];
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < N; i++) {
    const groupId = `idle-${i}`;
    const monitor = createLazyGroupMonitor({ identityId: "alice", identity, groupId, settings: DEFAULT_GROUP_SETTINGS, humans: [], backend, sender, logger: silentLogger });
    const client = initGroupClientForIdentity({ identityId: "alice", groupId, identity, settings: DEFAULT_GROUP_SETTINGS, dispatch: monitor.handle, logger: silentLogger });
    const feed = new GroupFeed({
      groupId,
      onMessages: (g, m) => client.feedBufferGate(m),
      pull: async () => ({ messages: [], hasMore: false, latestMsgId: 0 }) as never,
      ack: () => {},
      retryDelay: () => 1000,
      counters,
      logger: silentLogger,
      pageSize: 50,
      maxHeld: 500,
    });
    groups.push({ client, monitor, feed });
  }
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  console.log(`runtime memory: ${fmt(N)} idle runtime groups of one identity (client + monitor + feed)`);
  console.log(`  ${fmt((after - before) / N)} bytes per idle runtime group   (target ≤ 4,096)`);
  // The same groups once used: one message held in each, and each monitor built (as by a dispatch).
  for (const [i, g] of groups.entries()) {
    g.client.feedBufferGate([{ msgId: "1", groupId: `idle-${i}`, sender: "bob.agentcp.io", content: "the build broke again after the merge", contentType: "text", timestamp: 1_767_600_000_000, metadata: null }]);
    g.monitor.snapshot();
  }
  gc();
  gc();
  const used = process.memoryUsage().heapUsed;
  console.log(`  ${fmt((used - before) / N)} bytes per runtime group holding one message, its monitor built`);
  for (const g of groups) {
    g.monitor.close();
    await closeGroupClientForIdentity(g.client);
  }
}
