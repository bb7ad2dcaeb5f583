import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGroupServer, type GroupServer, type GroupServerOptions } from "../../src/server/group-server.ts";
import { createMemoryHistoryStore } from "../../src/server/history-store.ts";
import { rawClient, upgradeStatus, waitFor } from "../transport/helpers.ts";

const ALICE = "alice.agentcp.io";
const BOB = "bob.agentcp.io";
const CAROL = "carol.agentcp.io";
const groups: GroupServerOptions["groups"] = {
  g1: { name: "Tea room", members: { [ALICE]: { token: "a-secret" }, [BOB]: {}, [CAROL]: { human: true } } },
  g2: { members: { [BOB]: {} } },
};
const auth = (aid: string, token?: string) => ({ "x-acp-aid": aid, ...(token ? { authorization: `Bearer ${token}` } : {}) });

let server: GroupServer | undefined;
const clients: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

async function connect(aid: string, token?: string) {
  const c = await rawClient(server!.url, auth(aid, token));
  clients.push(c);
  return c;
}

describe("startGroupServer", () => {
  it("refuses an upgrade without a member aid or with a wrong token (HTTP 401)", async () => {
    server = await startGroupServer({ groups });
    expect(await upgradeStatus(server.url, {})).toBe(401);
    expect(await upgradeStatus(server.url, auth("mallory.agentcp.io"))).toBe(401);
    expect(await upgradeStatus(server.url, auth(ALICE))).toBe(401);
    expect(await upgradeStatus(server.url, auth(ALICE, "wrong"))).toBe(401);
    expect(server.counters().rejectedConnections).toBe(4);
    expect(server.clientCount()).toBe(0);
  });

  it("answers with the protocol's result codes", async () => {
    server = await startGroupServer({ groups });
    const alice = await connect(ALICE, "a-secret");
    const codes = async (action: string, group?: string, params?: unknown) => (await alice.request(action, group, params)).code;
    expect(await codes("heartbeat")).toBe(0);
    expect(await codes("register_online")).toBe(0);
    expect(await codes("pull_messages", "nope")).toBe(1001);
    expect(await codes("pull_messages", "g2")).toBe(1006);
    expect(await codes("pull_messages")).toBe(1009);
    expect(await codes("pull_messages", "g1", { after_msg_id: -1 })).toBe(1009);
    expect(await codes("pull_messages", "g1", { limit: 0 })).toBe(1009);
    expect(await codes("send_message", "g1", { content: "" })).toBe(1009);
    expect(await codes("send_message", "g1", { content: "x", metadata: "m" })).toBe(1009);
    expect(await codes("send_message", "g1", "not-an-object")).toBe(1009);
    expect(await codes("ack_messages", "g1", { msg_id: "7" })).toBe(1009);
    expect(await codes("join_group", "g1")).toBe(1099);
    expect(await codes("dance")).toBe(1099);
    const r = await alice.request("pull_messages", "nope");
    expect(r).toEqual({ action: "pull_messages", request_id: r.request_id, code: 1001, group_id: "nope", data: null, error: "group not found" });
  });

  it("stores sends with increasing msg ids and pushes them to every member, sender included", async () => {
    let t = 1_767_600_000_000;
    server = await startGroupServer({ groups, now: () => t });
    const alice = await connect(ALICE, "a-secret");
    const bob = await connect(BOB);
    const seen: string[] = [];
    server.onMessage((m) => seen.push(`${m.msgId}:${m.sender}`));
    const r1 = await alice.request("send_message", "g1", { content: "hello", metadata: { reply_to: 3 } });
    t += 5;
    const r2 = await bob.request("send_message", "g1", { content: "hi alice" });
    expect(r1.data).toEqual({ msg_id: 1, timestamp: 1_767_600_000_000 });
    expect(r2.data).toEqual({ msg_id: 2, timestamp: 1_767_600_000_005 });
    await waitFor(() => alice.frames.length === 4 && bob.frames.length === 4, "pushes");
    expect(alice.frames).toEqual(bob.frames);
    expect(alice.frames[0]).toEqual({
      action: "message_push",
      group_id: "g1",
      data: { msg_id: 1, sender: ALICE, content: "hello", content_type: "text", timestamp: 1_767_600_000_000, metadata: { reply_to: 3 } },
    });
    expect(alice.frames[1]).toEqual({
      action: "group_notify",
      group_id: "g1",
      event: "new_message",
      data: { latest_msg_id: 1, sender: ALICE, preview: "hello" },
      timestamp: 1_767_600_000_000,
    });
    expect(seen).toEqual([`1:${ALICE}`, `2:${BOB}`]);
  });

  it("can push batches only, or notify only", async () => {
    server = await startGroupServer({ groups, delivery: { push: "batch", notify: false } });
    const bob = await connect(BOB);
    server.post({ groupId: "g1", sender: CAROL, content: "hey" });
    await waitFor(() => bob.frames.length === 1, "batch push");
    expect(bob.frames[0]).toMatchObject({ action: "message_batch_push", group_id: "g1", data: { start_msg_id: 1, latest_msg_id: 1, count: 1 } });
    await server.close();
    server = await startGroupServer({ groups, delivery: { push: "none" } });
    const bob2 = await connect(BOB);
    server.post({ groupId: "g1", sender: CAROL, content: "hey" });
    await waitFor(() => bob2.frames.length === 1, "notify");
    expect(bob2.frames[0]).toMatchObject({ action: "group_notify", event: "new_message" });
  });

  it("pages pulls with has_more and keeps one ack cursor per member", async () => {
    server = await startGroupServer({ groups, maxPullLimit: 3 });
    for (let i = 1; i <= 7; i++) server.post({ groupId: "g1", sender: CAROL, content: `m${i}` });
    const bob = await connect(BOB);
    const page = async (after: number, limit?: number) => {
      const r = await bob.request("pull_messages", "g1", { after_msg_id: after, ...(limit ? { limit } : {}) });
      const d = r.data as { messages: Array<{ msg_id: number }>; has_more: boolean; latest_msg_id: number };
      return [d.messages.map((m) => m.msg_id), d.has_more, d.latest_msg_id];
    };
    expect(await page(0, 2)).toEqual([[1, 2], true, 7]);
    expect(await page(2, 50)).toEqual([[3, 4, 5], true, 7]);
    expect(await page(5)).toEqual([[6, 7], false, 7]);
    expect(await page(7)).toEqual([[], false, 7]);
    expect((await bob.request("ack_messages", "g1", { msg_id: 4 })).code).toBe(0);
    // after_msg_id 0 resumes from the member's server-side cursor.
    expect(await page(0)).toEqual([[5, 6, 7], false, 7]);
    // Acks never move a cursor back or past the latest message.
    await bob.request("ack_messages", "g1", { msg_id: 2 });
    await bob.request("ack_messages", "g1", { msg_id: 99 });
    const cursor = await bob.request("get_cursor", "g1");
    expect(cursor.data).toEqual({
      msg_cursor: { start_msg_id: 1, current_msg_id: 7, latest_msg_id: 7, unread_count: 0 },
      event_cursor: { start_event_id: 0, current_event_id: 0, latest_event_id: 0, unread_count: 0 },
    });
    const carolCursor = await (await connect(CAROL)).request("get_cursor", "g1");
    expect(carolCursor.data).toMatchObject({ msg_cursor: { current_msg_id: 0, unread_count: 7 } });
  });

  it("rate-limits sends per member with 1010 and a retry hint", async () => {
    let t = 0;
    server = await startGroupServer({ groups, rateLimit: { messages: 2, perMs: 1000 }, now: () => t });
    const bob = await connect(BOB);
    const alice = await connect(ALICE, "a-secret");
    const send = async (c: typeof bob) => {
      const r = await c.request("send_message", "g1", { content: "x" });
      return [r.code, r.data];
    };
    expect(await send(bob)).toEqual([0, { msg_id: 1, timestamp: 0 }]);
    t = 400;
    expect(await send(bob)).toEqual([0, { msg_id: 2, timestamp: 400 }]);
    t = 500;
    expect(await send(bob)).toEqual([1010, { retry_after_ms: 500 }]);
    expect(await send(alice)).toEqual([0, { msg_id: 3, timestamp: 500 }]);
    t = 1000;
    expect(await send(bob)).toEqual([0, { msg_id: 4, timestamp: 1000 }]);
    expect(server.history("g1").map((m) => m.sender)).toEqual([BOB, BOB, ALICE, BOB]);
  });

  it("answers group info, members and rules", async () => {
    server = await startGroupServer({ groups });
    const bob = await connect(BOB);
    expect((await bob.request("get_group_info", "g1")).data).toMatchObject({ group_id: "g1", name: "Tea room", member_count: 3 });
    expect((await bob.request("get_members", "g1")).data).toEqual({
      members: [
        { agent_id: ALICE, role: "member", human: false },
        { agent_id: BOB, role: "member", human: false },
        { agent_id: CAROL, role: "member", human: true },
      ],
    });
    expect((await bob.request("get_rules", "g1")).data).toEqual({ max_members: 3, max_message_size: 10000 });
  });

  it("drops malformed and oversize frames and keeps serving the socket", async () => {
    server = await startGroupServer({ groups, maxFrameBytes: 1024 });
    const bob = await connect(BOB);
    bob.ws.send("not json");
    bob.ws.send(JSON.stringify({ action: "heartbeat" }));
    bob.ws.send(JSON.stringify({ action: "x", request_id: "big", pad: "x".repeat(2048) }));
    expect((await bob.request("heartbeat")).code).toBe(0);
    expect(server.counters()).toMatchObject({ malformedFrames: 2, oversizeFrames: 1 });
    expect(bob.frames).toEqual([]);
  });

  it("keeps history and msg ids across a kill and restart on the same port with the same store", async () => {
    const history = createMemoryHistoryStore();
    server = await startGroupServer({ groups, history });
    const port = server.port;
    server.post({ groupId: "g1", sender: CAROL, content: "before" });
    const bob = await connect(BOB);
    await bob.request("ack_messages", "g1", { msg_id: 1 });
    const closed = new Promise<void>((resolve) => bob.ws.once("close", () => resolve()));
    await server.kill();
    await closed;
    expect(server.clientCount()).toBe(0);
    server = await startGroupServer({ groups, history, port });
    expect(server.port).toBe(port);
    expect(server.post({ groupId: "g1", sender: CAROL, content: "after" }).msgId).toBe("2");
    const bob2 = await connect(BOB);
    expect(((await bob2.request("get_cursor", "g1")).data as { msg_cursor: unknown }).msg_cursor).toMatchObject({ current_msg_id: 1, unread_count: 1 });
  });

  it("persists history and cursors to a JSON-lines file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-server-"));
    try {
      const historyFile = join(dir, "nested", "history.jsonl");
      server = await startGroupServer({ groups, historyFile });
      server.post({ groupId: "g1", sender: CAROL, content: "one", metadata: { k: 1 } });
      server.post({ groupId: "g1", sender: CAROL, content: "two" });
      await (await connect(BOB)).request("ack_messages", "g1", { msg_id: 2 });
      await server.close();
      expect(readFileSync(historyFile, "utf8").trim().split("\n")).toHaveLength(3);
      server = await startGroupServer({ groups, historyFile });
      expect(server.history("g1").map((m) => [m.msgId, m.content, m.metadata])).toEqual([["1", "one", { k: 1 }], ["2", "two", null]]);
      expect(server.post({ groupId: "g1", sender: CAROL, content: "three" }).msgId).toBe("3");
      expect(((await (await connect(BOB)).request("get_cursor", "g1")).data as { msg_cursor: unknown }).msg_cursor).toMatchObject({ current_msg_id: 2 });
    } finally {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("close() says goodbye to every client and frees the port", async () => {
    server = await startGroupServer({ groups });
    const bob = await connect(BOB);
    const code = new Promise<number>((resolve) => bob.ws.once("close", (c) => resolve(c)));
    await server.close();
    expect(await code).toBe(1001);
    expect(server.clientCount()).toBe(0);
    const again = await startGroupServer({ groups, port: server.port });
    await again.close();
  });

  it("validates its options and post() arguments", async () => {
    await expect(startGroupServer({ groups, rateLimit: { messages: 0, perMs: 10 } })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    server = await startGroupServer({ groups });
    expect(() => server!.post({ groupId: "nope", sender: BOB, content: "x" })).toThrow(expect.objectContaining({ code: "GROUP_NOT_FOUND" }));
    expect(() => server!.post({ groupId: "g1", sender: BOB, content: "" })).toThrow(expect.objectContaining({ code: "INVALID_MESSAGE" }));
  });
});
