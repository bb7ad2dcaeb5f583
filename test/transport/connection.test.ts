// The group connection over a PeerChannel against the real group service, joined by the
// in-memory loopback network (test/support/loopback.ts): sessions that drop and come back, the
// service restarted on the same history, pushes, pulls, sends and acks.
import { afterEach, describe, expect, it, vi } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { GroupMessage } from "../../src/types.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection, type GroupConnectionParams } from "../../src/transport/connection.ts";
import { createGroupService, type GroupService, type GroupServiceOptions } from "../../src/server/group-service.ts";
import { createMemoryHistoryStore } from "../../src/server/history-store.ts";
import { createLoopback, type Loopback } from "../support/loopback.ts";
import { FAKE_TIMERS_WITH_REAL_IO, drain, waitFor } from "./helpers.ts";

const AGENT = "agent.acp.local";
const BOB = "bob.acp.local";
const SERVICE = "group.acp.local";
const groups: GroupServiceOptions["groups"] = {
  g1: { members: { [AGENT]: {}, [BOB]: {} } },
  g2: { members: { [AGENT]: {}, [BOB]: {} } },
};

let service: GroupService | undefined;
let net: Loopback | undefined;
let conn: GroupConnection | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await conn?.close();
  conn = undefined;
  service = undefined;
  net = undefined;
});

function serve(options: Partial<GroupServiceOptions> = {}) {
  service = createGroupService({ domain: "acp.local", groups, ...options });
  net = createLoopback([service]);
  return service;
}

function connect(overrides: Partial<GroupConnectionParams> = {}) {
  const fed: Record<string, string[]> = { g1: [], g2: [] };
  const batches: GroupMessage[][] = [];
  const logger = createMemoryLogger();
  const link = net!.link(AGENT);
  const channel = link.channel(SERVICE);
  conn = createGroupConnection({
    channel,
    aid: AGENT,
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
  const sent = () => link.channels.get(SERVICE)!.sent.map((p) => JSON.parse(p) as { action: string; request_id: string; group_id?: string; params?: unknown });
  return { conn, fed, batches, logger, sent, channel };
}

const post = (groupId: string, from: number, to: number) => {
  for (let i = from; i <= to; i++) service!.post({ groupId, sender: BOB, content: `m${i}` });
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

describe("createGroupConnection over a session with the group service", () => {
  it("registers online before the first pull, starts after max(service cursor, saved cursor), streams batch pushes, sends and acks", async () => {
    serve();
    post("g1", 1, 5);
    const statuses: string[] = [];
    const t = connect({ getCursor: () => 2 });
    t.conn.on("status", ({ status }) => statuses.push(status));
    await t.conn.start();
    expect(statuses).toEqual(["connecting", "syncing", "open"]);
    expect(t.sent().slice(0, 3).map((f) => f.action)).toEqual(["register_online", "get_cursor", "pull_messages"]);
    expect(t.sent()[0]).not.toHaveProperty("group_id");
    expect(t.sent()[2]!.params).toEqual({ after_msg_id: 2, limit: 50 });
    expect(t.fed.g1).toEqual(["3", "4", "5"]);
    expect(t.batches[0]![0]).toEqual({
      msgId: "3", groupId: "g1", sender: BOB, content: "m3", contentType: "text", timestamp: t.batches[0]![0]!.timestamp, metadata: null,
    });
    expect(service!.onlineAids("g1")).toEqual([AGENT]);
    const sent = await t.conn.sendMessage({ groupId: "g1", content: "hello", metadata: { reply_to: "4" } });
    expect(sent.msgId).toBe("6");
    // Three posts in one turn reach us as one message_batch_push.
    post("g1", 7, 9);
    await waitFor(() => t.fed.g1!.includes("9"), "pushes");
    expect(t.fed.g1).toEqual(["3", "4", "5", "6", "7", "8", "9"]);
    expect(t.batches.at(-1)!.map((m) => m.msgId)).toEqual(["7", "8", "9"]);
    await waitFor(() => t.conn.lastFed("g1") === 9, "lastFed");
    const cursor = (await t.conn.request("get_cursor", { groupId: "g1" })) as { msg_cursor: { current_msg_id: number } };
    expect(cursor.msg_cursor.current_msg_id).toBe(9);
    // Request ids: `<aid>-<boot ms>-<random>-<seq>`, unique within the run.
    const ids = t.sent().map((f) => f.request_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^agent\.acp\.local-\d+-[0-9a-f]{4}-1$/);
  });

  it("request ids carry the boot time and a random part: a restart (same aid, seq from 1) never reuses one", async () => {
    serve();
    const first: string[] = [];
    for (const [now, random] of [[1_000, 0.5], [1_000, 0.25], [2_000, 0.5]] as const) {
      const t = connect({ now: () => now, random: () => random });
      await t.conn.start();
      first.push(t.sent()[0]!.request_id);
      await t.conn.close();
    }
    expect(first).toEqual(["agent.acp.local-1000-8000-1", "agent.acp.local-1000-4000-1", "agent.acp.local-2000-8000-1"]);
  });

  it("starts after the service's cursor when it is ahead of the saved one (a fresh state dir)", async () => {
    serve();
    post("g1", 1, 4);
    const history = service!.history("g1");
    expect(history).toHaveLength(4);
    const first = connect();
    await first.conn.start();
    await waitFor(() => first.conn.lastFed("g1") === 4, "first run fed");
    await waitFor(() => service!.counters().requests >= 4, "ack");
    await drain();
    await first.conn.close();
    post("g1", 5, 6);
    const second = connect({ getCursor: () => 0 });
    await second.conn.start();
    await waitFor(() => second.fed.g1!.length === 2, "only what is new");
    expect(second.fed.g1).toEqual(["5", "6"]);
  });

  it("a dropped session: down → reconnecting, a new session registers again and pulls what it missed, every message exactly once", async () => {
    serve();
    const t = connect();
    await t.conn.start();
    post("g1", 1, 10);
    await waitFor(() => t.fed.g1!.length === 10, "first ten");
    post("g1", 11, 15);
    // Mid-stream: the pushes above are in flight when the session drops.
    net!.drop(AGENT, { reconnect: false });
    expect(t.conn.status).toBe("reconnecting");
    post("g1", 16, 20);
    net!.restore(AGENT);
    await waitFor(() => t.conn.status === "open", "open again");
    post("g1", 21, 25);
    await waitFor(() => t.fed.g1!.length >= 25, "all 25");
    await drain();
    expect(t.fed.g1).toEqual(range(1, 25));
    expect(t.conn.counters().reconnects).toBe(1);
    expect(t.sent().filter((f) => f.action === "register_online")).toHaveLength(2);
    expect(t.logger.entries.filter((e) => e.event === "transport.session-up")).toHaveLength(2);
  });

  it("the group service restarted on the same history: a new session resumes from the cursor", async () => {
    const history = createMemoryHistoryStore();
    serve({ history });
    const t = connect();
    await t.conn.start();
    post("g1", 1, 3);
    await waitFor(() => t.fed.g1!.length === 3, "first three");
    const restarted = createGroupService({ domain: "acp.local", groups, history });
    restarted.post({ groupId: "g1", sender: BOB, content: "while away" });
    service = restarted;
    net!.setService(restarted);
    await waitFor(() => t.fed.g1!.length === 4, "after the restart");
    post("g1", 5, 5);
    await waitFor(() => t.fed.g1!.length === 5, "live again");
    expect(t.fed.g1).toEqual(range(1, 5));
  });

  it("keeps one group going while the other group's handler throws, then catches the failing one up", async () => {
    serve();
    let g1Broken = true;
    const fed: Record<string, string[]> = { g1: [], g2: [] };
    const t = connect({
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
    await drain();
    expect(fed).toEqual({ g1: ["1", "2", "3"], g2: ["1", "2", "3", "4"] });
    expect(t.conn.status).toBe("open");
    expect(t.logger.entries.some((e) => e.event === "transport.handler-failed" && e.fields.groupId === "g1")).toBe(true);
  });

  it("pulls on new_message when the service only notifies, and still takes the deprecated message_push", async () => {
    serve({ delivery: { push: "none", notify: true } });
    const t = connect();
    await t.conn.start();
    post("g1", 1, 4);
    await waitFor(() => t.fed.g1!.length === 4, "notified messages");
    await drain();
    expect(t.fed.g1).toEqual(range(1, 4));
    await t.conn.close();
    serve({ delivery: { push: "message" } });
    const u = connect();
    await u.conn.start();
    post("g1", 1, 2);
    await waitFor(() => u.fed.g1!.length === 2, "message_push");
    expect(u.conn.counters().gapResyncs).toBe(0);
  });

  it("a service that does not echo our sends: the next push after our own message is not a gap (no pull per push)", async () => {
    serve({ delivery: { echo: false } });
    const t = connect();
    await t.conn.start();
    const pullsBefore = t.sent().filter((f) => f.action === "pull_messages").length;
    for (let i = 0; i < 5; i++) {
      await t.conn.sendMessage({ groupId: "g1", content: `mine ${i}` });
      post("g1", 0, 0);
      await waitFor(() => t.conn.lastFed("g1") === 2 * (i + 1), `push after send ${i}`);
    }
    expect(t.conn.counters().gapResyncs).toBe(0);
    expect(t.sent().filter((f) => f.action === "pull_messages").length).toBe(pullsBefore);
    expect(t.fed.g1).toEqual(["2", "4", "6", "8", "10"]);
  });

  it("a batch push whose start_msg_id/count say it carried less than it covers triggers one pull", async () => {
    serve({ delivery: { push: "none" } });
    const t = connect();
    await t.conn.start();
    // Stored but never pushed (push "none"): only what the injected batches say.
    service!.post({ groupId: "g1", sender: BOB, content: "m1" });
    service!.post({ groupId: "g1", sender: BOB, content: "m2" });
    service!.post({ groupId: "g1", sender: BOB, content: "m3" });
    const wire = (id: number) => ({ msg_id: id, sender: BOB, content: `m${id}`, content_type: "text", timestamp: 1000 + id, metadata: null });
    const batch = (messages: unknown[], start: number, count: number, latest: number) =>
      JSON.stringify({ action: "message_batch_push", group_id: "g1", code: 0, data: { messages, start_msg_id: start, latest_msg_id: latest, count } });
    const pulls = () => t.sent().filter((f) => f.action === "pull_messages").length;
    const before = pulls();
    // Covers 1..3, carries only 1: the rest is pulled.
    t.channel.inject(batch([wire(1)], 1, 3, 3));
    await waitFor(() => t.fed.g1!.length === 3, "pulled the rest");
    expect(t.fed.g1).toEqual(["1", "2", "3"]);
    expect(pulls()).toBe(before + 1);
    expect(t.conn.counters().gapResyncs).toBe(1);
    // A complete batch needs no pull.
    service!.post({ groupId: "g1", sender: BOB, content: "m4" });
    t.channel.inject(batch([wire(4)], 4, 1, 4));
    await waitFor(() => t.fed.g1!.length === 4, "m4");
    expect(pulls()).toBe(before + 1);
  });

  it("retries a rate-limited send (1010) after the service's hint and then succeeds", async () => {
    vi.useFakeTimers({ ...FAKE_TIMERS_WITH_REAL_IO, now: 1_767_600_000_000 });
    serve({ rateLimit: { messages: 2, perMs: 1000 } });
    const t = connect({ sendRetry: { maxAttempts: 5, baseMs: 100, maxMs: 5000, jitter: 0 } });
    await t.conn.start();
    const sends = ["a", "b", "c"].map((content) => t.conn.sendMessage({ groupId: "g1", content }));
    // T+0: a and b stored; c refused with retry_after_ms 1000 → retried at T+1000, not at backoff's T+100.
    await waitFor(() => t.conn.counters().rateLimitedRetries === 1, "1010 seen");
    expect(service!.history("g1").map((m) => m.content)).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(999);
    await drain();
    expect(service!.history("g1").map((m) => m.content)).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(1);
    await waitFor(() => service!.history("g1").length === 3, "retried send");
    expect(await Promise.all(sends)).toEqual([
      { msgId: "1", timestamp: 1_767_600_000_000 },
      { msgId: "2", timestamp: 1_767_600_000_000 },
      { msgId: "3", timestamp: 1_767_600_001_000 },
    ]);
    expect(t.logger.entries.filter((e) => e.event === "transport.send-rate-limited").map((e) => e.fields.delayMs)).toEqual([1000]);
  });

  it("a non-member is answered 1006 (not a member) and nothing is fed", async () => {
    serve({ groups: { g1: { members: { [BOB]: {} } } } });
    const t = connect();
    const started = t.conn.start();
    await waitFor(() => t.conn.counters().pullFailures >= 1, "refused pull");
    expect(t.fed.g1).toEqual([]);
    await expect(t.conn.sendMessage({ groupId: "g1", content: "x" })).rejects.toMatchObject({ code: "REQUEST_FAILED", context: { resultCode: 1006 } });
    void started.catch(() => {});
  });

  it("a send while no session is up is NOT_CONNECTED (never reported as sent); refuses unknown groups and sends after close", async () => {
    serve();
    const t = connect({ requestTimeoutMs: 60 });
    await expect(t.conn.sendMessage({ groupId: "g1", content: "x" })).rejects.toMatchObject({ code: "NOT_CONNECTED" });
    await t.conn.start();
    await expect(t.conn.sendMessage({ groupId: "g2", content: "x" })).rejects.toMatchObject({ code: "UNKNOWN_GROUP" });
    net!.drop(AGENT, { reconnect: false });
    await expect(t.conn.sendMessage({ groupId: "g1", content: "lost?" })).rejects.toMatchObject({ code: "NOT_CONNECTED" });
    expect(service!.history("g1")).toEqual([]);
    net!.restore(AGENT);
    await waitFor(() => t.conn.status === "open", "back");
    await expect(t.conn.sendMessage({ groupId: "g1", content: "now" })).resolves.toMatchObject({ msgId: "1" });
    await t.conn.close();
    await expect(t.conn.sendMessage({ groupId: "g1", content: "x" })).rejects.toMatchObject({ code: "CLOSED" });
    await expect(t.conn.start()).resolves.toBeUndefined(); // the first start already resolved
  });

  it("close() sends unregister_online, closes the channel, and nothing is fed after", async () => {
    serve();
    const t = connect();
    await t.conn.start();
    expect(service!.onlineAids()).toEqual([AGENT]);
    await t.conn.close();
    expect(t.sent().at(-1)!.action).toBe("unregister_online");
    expect(t.conn.status).toBe("closed");
    expect(service!.onlineAids()).toEqual([]);
    post("g1", 1, 2);
    await drain();
    expect(t.fed.g1).toEqual([]);
  });

  it("close() while waiting for a session rejects a pending start()", async () => {
    serve();
    net!.filter = () => undefined;
    const t = connect();
    net!.drop(AGENT, { reconnect: false });
    const started = t.conn.start();
    await t.conn.close();
    await expect(started).rejects.toMatchObject({ code: "CLOSED" });
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
      online: [],
      reconnectingClosed: "closed",
    });
  });
});
