// Saves never stall the event loop: asynchronous, at most one write in flight per file, the
// latest state wins, delayed requests coalesce, flush() waits for everything asked for.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createFileStateStore } from "../../src/state/file-store.ts";
import { createSaveScheduler } from "../../src/state/save-scheduler.ts";
import type { PersistedGroupState } from "../../src/types.ts";

/** A save whose completion the test controls; records the state it read when it started. */
function manualSave(read: () => number) {
  const started: Array<{ key: string; value: number; done: () => void }> = [];
  let running = 0;
  let maxRunning = 0;
  const save = (key: string) =>
    new Promise<void>((resolve) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      started.push({ key, value: read(), done: () => (running--, resolve()) });
    });
  return { save, started, maxRunning: () => maxRunning };
}

describe("createSaveScheduler (fake timers)", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("T+0..T+900ms ten delayed requests → one write at T+1s, reading the latest state", async () => {
    let state = 0;
    const m = manualSave(() => state);
    const s = createSaveScheduler({ save: m.save });
    for (let i = 1; i <= 10; i++) {
      state = i;
      s.request("g1", 1000);
      await vi.advanceTimersByTimeAsync(100);
    }
    // T+1000ms: the first request's delay is up.
    expect(m.started.map((w) => w.value)).toEqual([10]);
    m.started[0]!.done();
    await vi.advanceTimersByTimeAsync(5000);
    expect(m.started).toHaveLength(1);
  });

  it("requests during a write mark the key dirty: one more write after it, with the newest state, never two at once", async () => {
    let state = 1;
    const m = manualSave(() => state);
    const s = createSaveScheduler({ save: m.save });
    s.request("g1", 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(m.started.map((w) => w.value)).toEqual([1]);
    for (state = 2; state <= 5; state++) s.request("g1", 0);
    state = 5;
    await vi.advanceTimersByTimeAsync(0);
    expect(m.started).toHaveLength(1);
    m.started[0]!.done();
    await vi.advanceTimersByTimeAsync(0);
    expect(m.started.map((w) => w.value)).toEqual([1, 5]);
    m.started[1]!.done();
    await vi.advanceTimersByTimeAsync(0);
    expect(m.maxRunning()).toBe(1);
  });

  it("flush() writes a pending delayed save at once and resolves when it is done", async () => {
    const m = manualSave(() => 7);
    const s = createSaveScheduler({ save: m.save });
    s.request("g1", 1000);
    s.request("g2", 1000);
    let flushed = false;
    void s.flush().then(() => (flushed = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(m.started.map((w) => w.key).sort()).toEqual(["g1", "g2"]);
    expect(flushed).toBe(false);
    for (const w of m.started) w.done();
    await vi.advanceTimersByTimeAsync(0);
    expect(flushed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a failed write is logged with its cause and the next request writes again", async () => {
    const entries: Array<[string, string, Record<string, unknown> | undefined]> = [];
    let fail = true;
    const s = createSaveScheduler({
      save: async () => {
        if (fail) throw Object.assign(new Error("disk full"), { code: "ENOSPC" });
      },
      logger: { log: (level, event, fields) => entries.push([level, event, fields]) },
    });
    s.request("g1", 0);
    await s.flush();
    expect(entries.map(([l, e]) => [l, e])).toEqual([["warn", "state.save-failed"]]);
    expect(entries[0]![2]).toMatchObject({ key: "g1", error: "disk full", code: "ENOSPC" });
    fail = false;
    s.request("g1", 0);
    await s.flush();
    expect(entries).toHaveLength(1);
  });
});

describe("createSaveScheduler with the file store (real files)", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "acp-save-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("200 rapid saves of one group: the file ends with the last state, no temp file left, the caller never waited", async () => {
    const store = createFileStateStore({ dir });
    let cursor = 0;
    const state = (): PersistedGroupState => ({ version: 1, cursor, lastSelfSpeakAt: null, replyHashes: [], replyTexts: [], budgetEvents: [], agentChain: 0 });
    let writes = 0;
    const s = createSaveScheduler({ save: async (g) => (writes++, store.saveGroupAsync!("alice.agentcp.io", g, state())) });
    for (cursor = 1; cursor <= 200; cursor++) s.request("g1", 0);
    cursor = 200;
    // Nothing was written synchronously: the request only scheduled work.
    expect(readdirSync(dir)).toEqual([]);
    await s.flush();
    expect(writes).toBeLessThanOrEqual(2);
    expect(createFileStateStore({ dir }).loadGroup("alice.agentcp.io", "g1")).toMatchObject({ cursor: 200 });
    const files = readdirSync(join(dir, readdirSync(dir)[0]!));
    expect(files.filter((f) => f.includes(".tmp-"))).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]!, files[0]!), "utf8")).data.cursor).toBe(200);
  });
});

describe("createSaveScheduler: write slots", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("at most maxConcurrentWrites writes at once across keys; the rest follow in request order", async () => {
    const m = manualSave(() => 0);
    const s = createSaveScheduler({ save: m.save, maxConcurrentWrites: 2 });
    for (const k of ["a", "b", "c", "d"]) s.request(k, 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(m.started.map((w) => w.key)).toEqual(["a", "b"]);
    m.started[0]!.done();
    await vi.advanceTimersByTimeAsync(0);
    expect(m.started.map((w) => w.key)).toEqual(["a", "b", "c"]);
    const flushed = s.flush();
    for (const w of m.started.slice(1)) w.done();
    await vi.advanceTimersByTimeAsync(0);
    m.started[3]!.done();
    await flushed;
    expect(m.started.map((w) => w.key)).toEqual(["a", "b", "c", "d"]);
    expect(m.maxRunning()).toBe(2);
  });
});
