// The group service `group.<domain>` as a ServiceAgent, spoken to over loopback sessions: the
// protocol's result codes, pushes only to sessions registered online (batched per receiver and
// group), pulls, acks, cursors, rate limits, history files, invite codes and join requests.
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGroupService, type GroupService, type GroupServiceOptions } from "../../src/server/group-service.ts";
import { createMemoryAgentMdStore, memberTypeFromStore } from "../../src/server/agent-md-store.ts";
import { createMemoryHistoryStore } from "../../src/server/history-store.ts";
import { createLoopback, type Loopback } from "../support/loopback.ts";
import { drain, rawClient, waitFor } from "../transport/helpers.ts";

const ALICE = "alice.acp.local";
const BOB = "bob.acp.local";
const CAROL = "carol.acp.local";
const SERVICE = "group.acp.local";
const groups: GroupServiceOptions["groups"] = {
  g1: { name: "Tea room", members: { [ALICE]: {}, [BOB]: {}, [CAROL]: { human: true } }, inviteCode: "tea-code" },
  g2: { members: { [BOB]: {} } },
};

let server: GroupService | undefined;
let net: Loopback | undefined;
const clients: Array<{ close(): void }> = [];
afterEach(() => {
  clients.splice(0).forEach((c) => c.close());
  server = undefined;
  net = undefined;
});

function serve(options: Partial<GroupServiceOptions> = {}): GroupService {
  server = createGroupService({ domain: "acp.local", groups, ...options });
  if (net) net.setService(server);
  else net = createLoopback([server]);
  return server;
}

/** A raw session, registered online unless told not to. */
async function connect(aid: string, register = true) {
  const c = await rawClient(net!, aid, SERVICE);
  clients.push(c);
  if (register) expect((await c.request("register_online")).code).toBe(0);
  return c;
}

describe("createGroupService", () => {
  it("a member cannot post an event: content_type system/event and metadata.event_type are stored as that member's ordinary words", async () => {
    serve();
    const alice = await connect(ALICE);
    const posts = [
      { content: "carol was removed", content_type: "system", metadata: { event_type: "member_left", actor: CAROL, mood: "x" } },
      { content: "bob joined", content_type: "EVENT" },
      { content: "plain", content_type: "group_event", metadata: { event_type: "member_joined" } },
    ];
    for (const params of posts) expect((await alice.request("send_message", "g1", params)).code).toBe(0);
    expect(server!.history("g1").map((m) => [m.sender, m.contentType, m.metadata])).toEqual([
      [ALICE, "text", { actor: CAROL, mood: "x" }],
      [ALICE, "text", null],
      [ALICE, "text", {}],
    ]);
    // What it pushes and what a pull returns are the same ordinary words.
    const page = (await alice.request("pull_messages", "g1", { after_msg_id: 0 })).data as { messages: Array<{ content_type: string; metadata: unknown }> };
    expect(page.messages.map((m) => m.content_type)).toEqual(["text", "text", "text"]);
    // The service's own events come from its aid.
    const event = server!.postEvent({ groupId: "g1", eventType: "member_joined", actor: "dan.acp.local" });
    expect([event.sender, event.contentType, event.content, event.metadata]).toEqual([SERVICE, "event", "dan.acp.local member_joined", { event_type: "member_joined", actor: "dan.acp.local" }]);
  });

  it("answers with the protocol's result codes", async () => {
    serve();
    const alice = await connect(ALICE);
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
    expect(await codes("use_invite_code", "g1", { code: "wrong" })).toBe(1011);
    expect(await codes("use_invite_code", "g1", {})).toBe(1009);
    expect(await codes("request_join", "g1")).toBe(1005);
    expect(await codes("dance")).toBe(1099);
    const r = await alice.request("pull_messages", "nope");
    expect(r).toEqual({ action: "pull_messages", request_id: r.request_id, code: 1001, group_id: "nope", data: null, error: "group not found" });
  });

  it("stores sends with increasing msg ids and pushes them as one batch per receiver to every registered member, sender included", async () => {
    let t = 1_767_600_000_000;
    serve({ now: () => t });
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    // Carol is a member but never registered online: the service pushes nothing to her.
    const carol = await connect(CAROL, false);
    const seen: string[] = [];
    server!.onStored((m) => seen.push(`${m.msgId}:${m.sender}`));
    const r1 = await alice.request("send_message", "g1", { content: "hello", metadata: { reply_to: 3 } });
    t += 5;
    const r2 = await bob.request("send_message", "g1", { content: "hi alice" });
    expect(r1.data).toEqual({ msg_id: 1, timestamp: 1_767_600_000_000 });
    expect(r2.data).toEqual({ msg_id: 2, timestamp: 1_767_600_000_005 });
    await waitFor(() => alice.frames.length === 2 && bob.frames.length === 2, "pushes");
    expect(alice.frames).toEqual(bob.frames);
    expect(alice.frames[0]).toEqual({
      action: "message_batch_push",
      group_id: "g1",
      code: 0,
      data: {
        messages: [{ msg_id: 1, sender: ALICE, content: "hello", content_type: "text", timestamp: 1_767_600_000_000, metadata: { reply_to: 3 } }],
        start_msg_id: 1,
        latest_msg_id: 1,
        count: 1,
      },
    });
    expect(seen).toEqual([`1:${ALICE}`, `2:${BOB}`]);
    // Three messages stored in one turn: one batch per receiver.
    for (const c of ["a", "b", "c"]) server!.post({ groupId: "g1", sender: CAROL, content: c });
    await waitFor(() => bob.frames.length === 3, "one batch");
    await drain();
    expect(bob.frames[2]).toMatchObject({ action: "message_batch_push", data: { start_msg_id: 3, latest_msg_id: 5, count: 3 } });
    expect(bob.frames).toHaveLength(3);
    expect(carol.frames).toEqual([]);
    expect(server!.onlineAids("g1")).toEqual([ALICE, BOB]);
  });

  it("unregister_online and a session's end stop the pushes to that session", async () => {
    serve();
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    expect((await alice.request("unregister_online")).code).toBe(0);
    net!.drop(BOB, { reconnect: false });
    expect(server!.onlineAids()).toEqual([]);
    server!.post({ groupId: "g1", sender: CAROL, content: "anyone?" });
    await drain();
    expect(alice.frames).toEqual([]);
    expect(bob.frames).toEqual([]);
  });

  it("a registration lives 5 minutes past its last register/heartbeat (server time): T+299s pushed, T+300.001s not", async () => {
    let t = 0;
    serve({ now: () => t });
    const bob = await connect(BOB); // registered at T+0
    const alice = await connect(ALICE);
    t = 200_000;
    expect((await alice.request("heartbeat")).code).toBe(0); // alice refreshed at T+200s
    t = 299_000;
    server!.post({ groupId: "g1", sender: CAROL, content: "still there?" });
    await waitFor(() => bob.frames.length === 1 && alice.frames.length === 1, "both pushed");
    t = 300_001;
    server!.post({ groupId: "g1", sender: CAROL, content: "anyone?" });
    await waitFor(() => alice.frames.length === 2, "alice pushed");
    await drain();
    expect(bob.frames).toHaveLength(1);
    expect(server!.onlineAids()).toEqual([ALICE]);
    // A heartbeat does not bring an expired registration back; register_online does.
    expect((await bob.request("heartbeat")).code).toBe(0);
    expect(server!.onlineAids()).toEqual([ALICE]);
    expect((await bob.request("register_online")).code).toBe(0);
    expect(server!.onlineAids()).toEqual([ALICE, BOB]);
  });

  it("can push the deprecated message_push, or notify only", async () => {
    serve({ delivery: { push: "message", notify: false } });
    const bob = await connect(BOB);
    server!.post({ groupId: "g1", sender: CAROL, content: "hey" });
    await waitFor(() => bob.frames.length === 1, "message push");
    expect(bob.frames[0]).toMatchObject({ action: "message_push", group_id: "g1", data: { msg_id: 1, content: "hey" } });
    serve({ delivery: { push: "none", notify: true } });
    const bob2 = await connect(BOB);
    server!.post({ groupId: "g1", sender: CAROL, content: "hey" });
    await waitFor(() => bob2.frames.length === 1, "notify");
    expect(bob2.frames[0]).toMatchObject({ action: "group_notify", event: "new_message", data: { latest_msg_id: 1 } });
  });

  it("pages pulls with has_more and keeps one ack cursor per member", async () => {
    serve({ maxPullLimit: 3 });
    for (let i = 1; i <= 7; i++) server!.post({ groupId: "g1", sender: CAROL, content: `m${i}` });
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
    serve({ rateLimit: { messages: 2, perMs: 1000 }, now: () => t });
    const bob = await connect(BOB);
    const alice = await connect(ALICE);
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
    expect(server!.history("g1").map((m) => m.sender)).toEqual([BOB, BOB, ALICE, BOB]);
  });

  it("answers group info, members and rules", async () => {
    serve();
    const bob = await connect(BOB);
    expect((await bob.request("get_group_info", "g1")).data).toMatchObject({ group_id: "g1", name: "Tea room", member_count: 3 });
    expect((await bob.request("get_members", "g1")).data).toEqual({
      members: [
        // Without a profile store only the definition's `human: true` is known; the rest stay unknown.
        { agent_id: ALICE, role: "member", type: "unknown" },
        { agent_id: BOB, role: "member", type: "unknown" },
        { agent_id: CAROL, role: "member", type: "human", agent_type: "human", human: true },
      ],
    });
    // get_rules also names the byte cap of content plus metadata (added with the cap).
    expect((await bob.request("get_rules", "g1")).data).toEqual({ max_members: 1000, max_message_size: 10000, max_message_bytes: 65536 });
  });

  it("drops malformed and oversize frames and keeps serving the session", async () => {
    serve({ maxFrameBytes: 1024 });
    const bob = await connect(BOB);
    bob.sendRaw("not json");
    bob.sendRaw(JSON.stringify({ action: "heartbeat" }));
    bob.sendRaw(JSON.stringify({ action: "x", request_id: "big", pad: "x".repeat(2048) }));
    expect((await bob.request("heartbeat")).code).toBe(0);
    expect(server!.counters()).toMatchObject({ malformedFrames: 2, oversizeFrames: 1 });
    expect(bob.frames).toEqual([]);
  });

  it("keeps history, msg ids and cursors across a restart with the same store", async () => {
    const history = createMemoryHistoryStore();
    serve({ history });
    server!.post({ groupId: "g1", sender: CAROL, content: "before" });
    const bob = await connect(BOB);
    await bob.request("ack_messages", "g1", { msg_id: 1 });
    serve({ history });
    expect(server!.onlineAids()).toEqual([]);
    expect(server!.post({ groupId: "g1", sender: CAROL, content: "after" }).msgId).toBe("2");
    const bob2 = await connect(BOB);
    expect(((await bob2.request("get_cursor", "g1")).data as { msg_cursor: unknown }).msg_cursor).toMatchObject({ current_msg_id: 1, unread_count: 1 });
  });

  it("persists history, cursors, invite codes and joins to a JSON-lines file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-server-"));
    try {
      const historyFile = join(dir, "nested", "history.jsonl");
      serve({ historyFile });
      server!.post({ groupId: "g1", sender: CAROL, content: "one", metadata: { k: 1 } });
      server!.post({ groupId: "g1", sender: CAROL, content: "two" });
      await (await connect(BOB)).request("ack_messages", "g1", { msg_id: 2 });
      const dave = await connect("dave.acp.local", false);
      expect((await dave.request("use_invite_code", "g1", { code: "tea-code" })).code).toBe(0);
      // Two invite codes (g1, g2), two messages, one cursor, one join and its event.
      expect(readFileSync(historyFile, "utf8").trim().split("\n")).toHaveLength(7);
      serve({ historyFile });
      expect(server!.history("g1").map((m) => [m.msgId, m.content, m.metadata])).toEqual([["1", "one", { k: 1 }], ["2", "two", null]]);
      expect(server!.post({ groupId: "g1", sender: CAROL, content: "three" }).msgId).toBe("3");
      expect(((await (await connect(BOB)).request("get_cursor", "g1")).data as { msg_cursor: unknown }).msg_cursor).toMatchObject({ current_msg_id: 2 });
      expect(server!.members("g1")).toContain("dave.acp.local");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("joining: an invite code makes a member (idempotent), request_join waits (1012 on repeat) unless the group is open, list_my_groups lists", async () => {
    serve({ groups: { ...groups, open: { members: {}, openJoin: true } } });
    const dave = await connect("dave.acp.local");
    const code = async (action: string, group?: string, params?: unknown) => (await dave.request(action, group, params)).code;
    expect(await code("pull_messages", "g1")).toBe(1006);
    expect(((await dave.request("list_my_groups")).data as { groups: unknown[] }).groups).toEqual([]);
    expect(server!.joinLink("g1")).toBe("https://group.acp.local/g1?code=tea-code");
    expect((await dave.request("use_invite_code", "g1", { code: "tea-code" })).data).toEqual({ group_id: "g1", status: "joined" });
    expect((await dave.request("use_invite_code", "g1", { code: "tea-code" })).data).toEqual({ group_id: "g1", status: "member" });
    expect(await code("pull_messages", "g1")).toBe(0);
    expect(((await dave.request("get_members", "g1")).data as { members: Array<{ agent_id: string }> }).members.map((m) => m.agent_id)).toContain("dave.acp.local");
    // Registered and now a member: pushes reach dave.
    server!.post({ groupId: "g1", sender: CAROL, content: "welcome" });
    // Joining announced itself first (the event log's new_event and group_event); then the push.
    expect(dave.frames.slice(0, 2)).toMatchObject([
      { action: "group_notify", group_id: "g1", event: "group_event", data: { event_id: 1, event_type: "member_joined", actor: "dave.acp.local" } },
      { action: "group_notify", group_id: "g1", event: "new_event", data: { latest_event_id: 1, event_type: "member_joined" } },
    ]);
    await waitFor(() => dave.frames.some((f) => f.action === "message_batch_push"), "push to the new member");
    expect((await dave.request("request_join", "g2", { message: "let me in" })).data).toEqual({ group_id: "g2", status: "pending" });
    expect(await code("request_join", "g2")).toBe(1012);
    expect(server!.pendingJoinRequests("g2")).toEqual(["dave.acp.local"]);
    expect((await dave.request("request_join", "open")).data).toEqual({ group_id: "open", status: "joined" });
    expect((await dave.request("list_my_groups")).data).toEqual({
      groups: [
        { group_id: "g1", name: "Tea room", member_count: 4 },
        { group_id: "open", name: "open", member_count: 1 },
      ],
      total: 2,
    });
    expect(server!.addMember("g2", "dave.acp.local")).toBe(true);
    expect(server!.pendingJoinRequests("g2")).toEqual([]);
  });

  it("member events as the official SDK reads them: new_event and group_event to the members online, pull_events after the cursor, ack_events, get_cursor's event_cursor; kept across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-events-"));
    try {
      const historyFile = join(dir, "history.jsonl");
      serve({ historyFile });
      const alice = await connect(ALICE);
      const dave = await connect("dave.acp.local");
      expect((await dave.request("use_invite_code", "g1", { code: "tea-code" })).code).toBe(0);
      await waitFor(() => alice.frames.length === 2, "alice told");
      expect(alice.frames).toEqual([
        {
          action: "group_notify",
          group_id: "g1",
          event: "group_event",
          data: { event_id: 1, event_type: "member_joined", actor: "dave.acp.local", target: "dave.acp.local", timestamp: expect.any(Number), data: { agent_id: "dave.acp.local", role: "member" } },
          timestamp: expect.any(Number),
        },
        { action: "group_notify", group_id: "g1", event: "new_event", data: { latest_event_id: 1, event_type: "member_joined", summary: "dave.acp.local joined" }, timestamp: expect.any(Number) },
      ]);
      expect(server!.addMember("g1", "erin.acp.local")).toBe(true);
      // Bob was offline: he catches up by pulling after his cursor, then acks.
      const bob = await connect(BOB);
      const cursor = async (c: typeof bob) => ((await c.request("get_cursor", "g1")).data as { event_cursor: unknown }).event_cursor;
      expect(await cursor(bob)).toEqual({ start_event_id: 1, current_event_id: 0, latest_event_id: 2, unread_count: 2 });
      const pulled = (await bob.request("pull_events", "g1", { after_event_id: 0, limit: 1 })).data as { events: Array<{ event_id: number; target: string }>; has_more: boolean; latest_event_id: number };
      expect([pulled.events.map((e) => [e.event_id, e.target]), pulled.has_more, pulled.latest_event_id]).toEqual([[[1, "dave.acp.local"]], true, 2]);
      expect((await bob.request("ack_events", "g1", { event_id: 1 })).code).toBe(0);
      expect(await cursor(bob)).toEqual({ start_event_id: 1, current_event_id: 1, latest_event_id: 2, unread_count: 1 });
      const rest = (await bob.request("pull_events", "g1", {})).data as { events: Array<{ event_id: number; target: string }>; has_more: boolean };
      expect([rest.events.map((e) => [e.event_id, e.target]), rest.has_more]).toEqual([[[2, "erin.acp.local"]], false]);
      expect((await bob.request("ack_events", "g1", { event_id: 99 })).code).toBe(0);
      expect(await cursor(bob)).toMatchObject({ current_event_id: 2, unread_count: 0 });
      expect((await bob.request("ack_events", "g1", { event_id: "x" })).code).toBe(1009);
      // A restarted service on the same file: the log, its ids and bob's cursor are kept.
      serve({ historyFile });
      const again = await connect(BOB);
      expect(await cursor(again)).toEqual({ start_event_id: 1, current_event_id: 2, latest_event_id: 2, unread_count: 0 });
      expect(server!.addMember("g1", "finn.acp.local")).toBe(true);
      expect(server!.events("g1").map((e) => [e.event_id, e.event_type, e.target])).toEqual([
        [1, "member_joined", "dave.acp.local"],
        [2, "member_joined", "erin.acp.local"],
        [3, "member_joined", "finn.acp.local"],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leave_group (the SDK's leaveGroup): a configured member leaves, the group hears member_left (the leaver too), pulls answer 1006, a restart keeps it out, the invite code brings it back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-leave-"));
    try {
      const historyFile = join(dir, "history.jsonl");
      serve({ historyFile });
      const alice = await connect(ALICE);
      const bob = await connect(BOB);
      expect(await bob.request("leave_group", "g1")).toMatchObject({ code: 0, data: { group_id: "g1", status: "left" } });
      expect(server!.members("g1")).toEqual([ALICE, CAROL]);
      for (const c of [alice, bob]) {
        await waitFor(() => c.frames.some((f) => f.event === "group_event"), "member_left told");
        expect(c.frames.find((f) => f.event === "group_event")).toMatchObject({ data: { event_type: "member_left", actor: BOB, target: BOB, data: { agent_id: BOB, reason: "left" } } });
      }
      expect((await bob.request("pull_messages", "g1")).code).toBe(1006);
      expect((await bob.request("leave_group", "g1")).code).toBe(1006);
      serve({ historyFile });
      expect(server!.members("g1")).toEqual([ALICE, CAROL]);
      const again = await connect(BOB);
      expect((await again.request("use_invite_code", "g1", { code: "tea-code" })).data).toEqual({ group_id: "g1", status: "joined" });
      expect(server!.members("g1")).toEqual([ALICE, BOB, CAROL]);
      expect(server!.events("g1").map((e) => [e.event_type, e.target])).toEqual([["member_left", BOB], ["member_joined", BOB]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("member types from stored agent.md: get_members carries each type, refresh_member_types answers 0 / 1024 / 1025", async () => {
    const store = createMemoryAgentMdStore();
    store.put(ALICE, `---\naid: ${ALICE}\nname: Alice\ntype: openclaw\n---\n# Alice\n`);
    store.put(BOB, "no front matter at all");
    serve({ memberProfile: (aid) => memberTypeFromStore(store, aid) });
    const bob = await connect(BOB);
    // agent_type (what the official SDK's UI reads): the type as the agent.md wrote it, or human.
    expect((await bob.request("get_members", "g1")).data).toEqual({
      members: [
        { agent_id: ALICE, role: "member", type: "agent", agent_type: "openclaw", human: false },
        { agent_id: BOB, role: "member", type: "unknown" },
        { agent_id: CAROL, role: "member", type: "human", agent_type: "human", human: true },
      ],
    });
    const refresh = (params?: unknown) => bob.request("refresh_member_types", "g1", params);
    expect(await refresh({ agent_id: ALICE })).toMatchObject({ code: 0, data: { members: [{ agent_id: ALICE, type: "agent", code: 0 }] } });
    expect(await refresh({ agent_id: BOB })).toMatchObject({ code: 1025, data: { members: [{ agent_id: BOB, type: "unknown", code: 1025 }] } });
    expect(await refresh({ agent_id: CAROL })).toMatchObject({ code: 1024 });
    expect((await refresh({ agent_id: "dave.acp.local" })).code).toBe(1006);
    expect(await refresh()).toMatchObject({ code: 0, data: { members: [{ agent_id: ALICE, code: 0 }, { agent_id: BOB, code: 1025 }, { agent_id: CAROL, code: 1024 }] } });
    // A member who publishes later is read on the next request.
    store.put(CAROL, `---\naid: ${CAROL}\ntype: human\n---\n# Carol\n`);
    expect((await refresh({ agent_id: CAROL })).code).toBe(0);
  });

  it("a member's own agent.md saying human does not make it a person in get_members: only the group's definition does", async () => {
    const store = createMemoryAgentMdStore();
    store.put(BOB, `---\naid: ${BOB}\nname: Bob\ntype: human\n---\n# Just a person\n`);
    store.put(CAROL, `---\naid: ${CAROL}\ntype: agent\n---\n# Carol\n`);
    serve({ memberProfile: (aid) => memberTypeFromStore(store, aid) });
    const alice = await connect(ALICE);
    expect((await alice.request("get_members", "g1")).data).toEqual({
      members: [
        { agent_id: ALICE, role: "member", type: "unknown" },
        // Bob's word is not enough to be shown as a person.
        { agent_id: BOB, role: "member", type: "unknown" },
        // Saying "agent" can only lower what a member gets, so it is passed on.
        { agent_id: CAROL, role: "member", type: "agent", agent_type: "agent", human: false },
      ],
    });
  });

  it("the operator's rule makes a person (isPerson: e.g. signed in through acp-group chat on a network that allows it); the member's own agent.md saying agent still wins", async () => {
    const store = createMemoryAgentMdStore();
    store.put(ALICE, `---\naid: ${ALICE}\ntype: agent\n---\n# Alice\n`);
    serve({ memberProfile: (aid) => memberTypeFromStore(store, aid), isPerson: (aid) => aid === BOB || aid === ALICE });
    const carol = await connect(CAROL);
    expect((await carol.request("get_members", "g1")).data).toEqual({
      members: [
        { agent_id: ALICE, role: "member", type: "agent", agent_type: "agent", human: false },
        { agent_id: BOB, role: "member", type: "human", agent_type: "human", human: true },
        { agent_id: CAROL, role: "member", type: "human", agent_type: "human", human: true },
      ],
    });
  });

  it("without a profile reader refresh_member_types is not implemented (1099)", async () => {
    serve();
    const bob = await connect(BOB);
    expect((await bob.request("refresh_member_types", "g1")).code).toBe(1099);
  });

  it("a random invite code is made once per group and kept in the history file", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-invite-"));
    try {
      const historyFile = join(dir, "history.jsonl");
      const first = createGroupService({ domain: "acp.local", groups: { g2: { members: {} } }, historyFile });
      const link = first.joinLink("g2");
      expect(link).toMatch(/^https:\/\/group\.acp\.local\/g2\?code=[A-Za-z0-9_-]{12}$/);
      expect(createGroupService({ domain: "acp.local", groups: { g2: { members: {} } }, historyFile }).joinLink("g2")).toBe(link);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("validates its options and post() arguments", () => {
    expect(() => createGroupService({ domain: "acp.local", groups, rateLimit: { messages: 0, perMs: 10 } })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => createGroupService({ domain: "not a domain", groups })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    serve();
    expect(() => server!.post({ groupId: "nope", sender: BOB, content: "x" })).toThrow(expect.objectContaining({ code: "GROUP_NOT_FOUND" }));
    expect(() => server!.post({ groupId: "g1", sender: BOB, content: "" })).toThrow(expect.objectContaining({ code: "INVALID_MESSAGE" }));
  });
});
