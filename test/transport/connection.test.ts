import { afterEach, describe, expect, it, vi } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { GroupMessage } from "../../src/types.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection, type GroupConnectionParams } from "../../src/transport/connection.ts";
import { startGroupServer, type GroupServer, type GroupServerOptions } from "../../src/server/group-server.ts";
import { createMemoryHistoryStore } from "../../src/server/history-store.ts";
import { FAKE_TIMERS_WITH_REAL_IO, ioSettle, waitFor } from "./helpers.ts";

const AGENT = "agent.agentcp.io";
const BOB = "bob.agentcp.io";
const groups: GroupServerOptions["groups"] = {
  g1: { members: { [AGENT]: { token: "s3cret" }, [BOB]: {} } },
  g2: { members: { [AGENT]: { token: "s3cret" }, [BOB]: {} } },
};

let server: GroupServer | undefined;
let conn: GroupConnection | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await conn?.close();
  await server?.close();
  conn = undefined;
  server = undefined;
});

function connect(url: string, overrides: Partial<GroupConnectionParams> = {}) {
  const fed: Record<string, string[]> = { g1: [], g2: [] };
  const batches: GroupMessage[][] = [];
  const logger = createMemoryLogger();
  conn = createGroupConnection({
    url,
    aid: AGENT,
    token: "s3cret",
    groups: ["g1"],
    getCursor: () => 0,
    onMessages: (groupId, messages) => {
      batches.push(messages);
      fed[groupId]!.push(...messages.map((m) => m.msgId));
    },
    logger,
    heartbeatMs: 0,
    reconnect: { baseMs: 40, maxMs: 200, jitter: 0 },
    ...overrides,
  });
  return { conn, fed, batches, logger };
}

const post = (groupId: string, from: number, to: number) => {
  for (let i = from; i <= to; i++) server!.post({ groupId, sender: BOB, content: `m${i}` });
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

describe("createGroupConnection against the local group server", () => {
  it("pulls after the persisted cursor, then streams pushes, sends, and acks what it accepted", async () => {
    server = await startGroupServer({ groups });
    post("g1", 1, 5);
    const statuses: string[] = [];
    const t = connect(server.url, { getCursor: () => 2 });
    t.conn.on("status", ({ status }) => statuses.push(status));
    await t.conn.start();
    expect(statuses).toEqual(["connecting", "syncing", "open"]);
    expect(t.fed.g1).toEqual(["3", "4", "5"]);
    expect(t.batches[0]![0]).toEqual({
      msgId: "3", groupId: "g1", sender: BOB, content: "m3", contentType: "text", timestamp: t.batches[0]![0]!.timestamp, metadata: null,
    });
    const sent = await t.conn.sendMessage({ groupId: "g1", content: "hello", metadata: { reply_to: "4" } });
    expect(sent.msgId).toBe("6");
    post("g1", 7, 7);
    await waitFor(() => t.fed.g1!.length === 5, "pushes");
    // Our own message comes back like everyone else's: the group client recognises it.
    expect(t.fed.g1).toEqual(["3", "4", "5", "6", "7"]);
    expect(t.batches.flat().find((m) => m.msgId === "6")).toMatchObject({ sender: AGENT, metadata: { reply_to: "4" } });
    await waitFor(() => t.conn.lastFed("g1") === 7, "lastFed");
    const cursor = (await t.conn.request("get_cursor", { groupId: "g1" })) as { msg_cursor: { current_msg_id: number } };
    expect(cursor.msg_cursor.current_msg_id).toBe(7);
  });

  it("survives a server killed mid-stream: reconnects, pulls what it missed, feeds every message exactly once", async () => {
    const history = createMemoryHistoryStore();
    server = await startGroupServer({ groups, history });
    const port = server.port;
    const t = connect(server.url);
    await t.conn.start();
    post("g1", 1, 10);
    await waitFor(() => t.fed.g1!.length === 10, "first ten");
    // Mid-stream: these pushes race the kill; whichever are lost must come back by pull.
    post("g1", 11, 15);
    await server.kill();
    await waitFor(() => t.conn.status === "reconnecting" || t.conn.status === "connecting", "reconnecting");
    server = await startGroupServer({ groups, history, port });
    expect(server.clientCount()).toBe(0);
    // Posted while the agent is away: only a pull can deliver these.
    post("g1", 16, 20);
    await waitFor(() => t.conn.status === "open", "open again");
    post("g1", 21, 25);
    await waitFor(() => t.fed.g1!.length >= 25, "all 25");
    await ioSettle(50);
    expect(t.fed.g1).toEqual(range(1, 25));
    expect(t.conn.counters().reconnects).toBeGreaterThanOrEqual(1);
    expect(t.logger.entries.filter((e) => e.event === "transport.connected")).toHaveLength(2);
  });

  it("keeps one group going while the other group's handler throws, then catches the failing one up", async () => {
    server = await startGroupServer({ groups });
    let g1Broken = true;
    const fed: Record<string, string[]> = { g1: [], g2: [] };
    const t = connect(server.url, {
      groups: ["g1", "g2"],
      onMessages: (groupId, messages) => {
        if (groupId === "g1" && g1Broken) throw new Error("g1 handler exploded");
        fed[groupId]!.push(...messages.map((m) => m.msgId));
      },
      reconnect: { baseMs: 20, maxMs: 40, jitter: 0 },
    });
    await t.conn.start();
    post("g1", 1, 3);
    post("g2", 1, 3);
    await waitFor(() => fed.g2!.length === 3 && t.conn.counters().handlerErrors >= 2, "g2 fed while g1 fails");
    expect(fed.g1).toEqual([]);
    expect(t.conn.groupStatus("g1")).toBe("retrying");
    expect(t.conn.groupStatus("g2")).toBe("live");
    expect(t.conn.lastFed("g1")).toBe(0);
    post("g2", 4, 4);
    await waitFor(() => fed.g2!.length === 4, "g2 still live");
    g1Broken = false;
    await waitFor(() => fed.g1!.length === 3, "g1 caught up");
    await ioSettle(50);
    expect(fed).toEqual({ g1: ["1", "2", "3"], g2: ["1", "2", "3", "4"] });
    expect(t.conn.status).toBe("open");
    expect(t.logger.entries.some((e) => e.event === "transport.handler-failed" && e.fields.groupId === "g1")).toBe(true);
  });

  it("pulls on new_message when the server only notifies", async () => {
    server = await startGroupServer({ groups, delivery: { push: "none", notify: true } });
    const t = connect(server.url);
    await t.conn.start();
    post("g1", 1, 4);
    await waitFor(() => t.fed.g1!.length === 4, "notified messages");
    await ioSettle(30);
    expect(t.fed.g1).toEqual(range(1, 4));
  });

  it("retries a rate-limited send (1010) after the server's hint and then succeeds", async () => {
    vi.useFakeTimers({ ...FAKE_TIMERS_WITH_REAL_IO, now: 1_767_600_000_000 });
    server = await startGroupServer({ groups, rateLimit: { messages: 2, perMs: 1000 } });
    const t = connect(server.url, { sendRetry: { maxAttempts: 5, baseMs: 100, maxMs: 5000, jitter: 0 } });
    await t.conn.start();
    const sends = ["a", "b", "c"].map((content) => t.conn.sendMessage({ groupId: "g1", content }));
    // T+0: a and b stored; c refused with retry_after_ms 1000 → retried at T+1000, not at backoff's T+100.
    await waitFor(() => t.conn.counters().rateLimitedRetries === 1, "1010 seen");
    expect(server.history("g1").map((m) => m.content)).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(999);
    await ioSettle();
    expect(server.history("g1").map((m) => m.content)).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(1);
    await waitFor(() => server!.history("g1").length === 3, "retried send");
    expect(await Promise.all(sends)).toEqual([
      { msgId: "1", timestamp: 1_767_600_000_000 },
      { msgId: "2", timestamp: 1_767_600_000_000 },
      { msgId: "3", timestamp: 1_767_600_001_000 },
    ]);
    expect(t.logger.entries.filter((e) => e.event === "transport.send-rate-limited").map((e) => e.fields.delayMs)).toEqual([1000]);
  });

  it("stops with AUTH_REJECTED when the server refuses the token", async () => {
    server = await startGroupServer({ groups });
    const t = connect(server.url, { token: "wrong" });
    await expect(t.conn.start()).rejects.toMatchObject({ code: "AUTH_REJECTED", context: { httpStatus: 401 } });
    expect(t.conn.status).toBe("closed");
    expect(t.conn.counters().reconnects).toBe(0);
  });

  it("refuses to send into a group it did not join, and after close", async () => {
    server = await startGroupServer({ groups });
    const t = connect(server.url);
    await expect(t.conn.sendMessage({ groupId: "g1", content: "x" })).rejects.toMatchObject({ code: "NOT_CONNECTED" });
    await t.conn.start();
    await expect(t.conn.sendMessage({ groupId: "g2", content: "x" })).rejects.toMatchObject({ code: "UNKNOWN_GROUP" });
    await t.conn.close();
    await expect(t.conn.sendMessage({ groupId: "g1", content: "x" })).rejects.toMatchObject({ code: "CLOSED" });
    await expect(t.conn.start()).resolves.toBeUndefined(); // the first start already resolved
  });

  it("close() ends the socket and every timer: the server sees zero clients, nothing is fed after", async () => {
    server = await startGroupServer({ groups });
    const t = connect(server.url, { heartbeatMs: 50 });
    await t.conn.start();
    expect(server.clientCount()).toBe(1);
    await t.conn.close();
    expect(t.conn.status).toBe("closed");
    await waitFor(() => server!.clientCount() === 0, "server sees the close");
    post("g1", 1, 2);
    await ioSettle(120);
    expect(t.fed.g1).toEqual([]);
    expect(server.counters().connections).toBe(1);
  });

  it("close() while reconnecting cancels the redial and rejects a pending start()", async () => {
    server = await startGroupServer({ groups });
    const port = server.port;
    await server.close();
    const t = connect(`ws://127.0.0.1:${port}`, { reconnect: { baseMs: 30, maxMs: 30, jitter: 0 } });
    const started = t.conn.start();
    await waitFor(() => t.conn.counters().reconnects >= 2, "redialing");
    await t.conn.close();
    await expect(started).rejects.toMatchObject({ code: "CLOSED" });
    const reconnects = t.conn.counters().reconnects;
    server = await startGroupServer({ groups, port });
    await ioSettle(100);
    expect(t.conn.counters().reconnects).toBe(reconnects);
    expect(server.clientCount()).toBe(0);
  });

  it("leaves nothing running after close(): a process using it exits on its own", () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    const node = existsSync(`${root}node_modules/.bin/node`) ? `${root}node_modules/.bin/node` : process.execPath;
    const fixture = fileURLToPath(new URL("./fixtures/close-exit.ts", import.meta.url));
    const run = spawnSync(node, [fixture], { cwd: root, encoding: "utf8", timeout: 15_000 });
    expect(run.error).toBeUndefined();
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout.trim().split("\n").at(-1)!)).toEqual({
      fed: ["1", "2", "3"],
      sent: "3",
      statusAfterClose: "closed",
      serverClients: 0,
      reconnectingClosed: "closed",
    });
  });
});
