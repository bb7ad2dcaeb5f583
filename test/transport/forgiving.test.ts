// Where a real group service may differ from ours, the transport is as forgiving as the official
// SDK: a push that carries a non-empty request_id is still a push (the SDK answers pending requests
// first and hands anything else to its push handlers); message ids that increase but skip numbers
// cost one confirming pull, not a pull per push. The real group service over a loopback session.
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { createGroupService, type GroupService, type GroupServiceOptions } from "../../src/server/group-service.ts";
import { createLoopback, type Loopback } from "../support/loopback.ts";
import { waitFor } from "./helpers.ts";

const AGENT = "agent.acp.local";
const BOB = "bob.acp.local";
const SERVICE = "group.acp.local";
const groups: GroupServiceOptions["groups"] = { g1: { members: { [AGENT]: {}, [BOB]: {} } } };

let service: GroupService | undefined;
let net: Loopback | undefined;
let conn: GroupConnection | undefined;
afterEach(async () => {
  await conn?.close();
  conn = undefined;
});

function connect(options: Partial<GroupServiceOptions> = {}) {
  service = createGroupService({ domain: "acp.local", groups, ...options });
  net = createLoopback([service]);
  const fed: string[] = [];
  const logger = createMemoryLogger();
  const link = net.link(AGENT);
  const channel = link.channel(SERVICE);
  conn = createGroupConnection({ channel, aid: AGENT, groups: ["g1"], getCursor: () => 0, onMessages: (_g, ms) => void fed.push(...ms.map((m) => m.msgId)), logger, heartbeatMs: 0 });
  const pulls = () => link.channels.get(SERVICE)!.sent.filter((p) => (JSON.parse(p) as { action: string }).action === "pull_messages").length;
  return { conn, fed, logger, channel, pulls };
}

describe("as forgiving as the official SDK", () => {
  it("a message_push / message_batch_push carrying a non-empty request_id is handled as a push, not dropped as an unmatched response", async () => {
    const t = connect({ delivery: { push: "none" } });
    await t.conn.start();
    const wire = (id: number) => ({ msg_id: id, sender: BOB, content: `m${id}`, content_type: "text", timestamp: 1000 + id, metadata: null });
    service!.post({ groupId: "g1", sender: BOB, content: "m1" });
    service!.post({ groupId: "g1", sender: BOB, content: "m2" });
    t.channel.inject(JSON.stringify({ action: "message_push", request_id: "srv-push-1", code: 0, group_id: "g1", data: wire(1) }));
    await waitFor(() => t.fed.length === 1, "the pushed message");
    t.channel.inject(JSON.stringify({ action: "message_batch_push", request_id: "srv-push-2", group_id: "g1", data: { messages: [wire(2)], start_msg_id: 2, count: 1, latest_msg_id: 2 } }));
    await waitFor(() => t.fed.length === 2, "the batch-pushed message");
    expect(t.fed).toEqual(["1", "2"]);
    expect(t.conn.counters().unmatchedResponses).toBe(0);
  });

  it("ids that increase but are not consecutive (1, 4, 7 …): one confirming pull, then no pull per push", async () => {
    const t = connect({ msgIdStep: 3 });
    await t.conn.start();
    const before = t.pulls();
    for (let i = 0; i < 6; i++) {
      service!.post({ groupId: "g1", sender: BOB, content: `m${i}` });
      await waitFor(() => t.fed.length === i + 1, `message ${i}`);
    }
    expect(t.fed).toEqual(["1", "4", "7", "10", "13", "16"]);
    // The first jump (1 → 4) is checked once by a pull that finds nothing in between; then the
    // feed knows this group's ids are sparse.
    expect(t.pulls() - before).toBeLessThanOrEqual(1);
    // A real gap is still noticed through the service's own range: nothing is lost.
    expect(t.conn.counters().gapResyncs).toBeLessThanOrEqual(1);
  });
});

describe("a lapsed online registration", () => {
  it("the service forgets us but keeps answering heartbeats: the next heartbeat slot renews it and new messages arrive (the missed one too)", async () => {
    service = createGroupService({ domain: "acp.local", groups });
    net = createLoopback([service]);
    const fed: string[] = [];
    // A short heartbeat, in real time: the loopback session is real I/O.
    conn = createGroupConnection({ channel: net.link(AGENT).channel(SERVICE), aid: AGENT, groups: ["g1"], getCursor: () => 0, onMessages: (_g, ms) => void fed.push(...ms.map((m) => m.msgId)), logger: createMemoryLogger(), heartbeatMs: 100 });
    await conn.start();
    service!.post({ groupId: "g1", sender: BOB, content: "m1" });
    await waitFor(() => fed.length === 1, "m1 pushed");
    service!.forgetOnline(AGENT);
    expect(service!.onlineAids("g1")).toEqual([]);
    service!.post({ groupId: "g1", sender: BOB, content: "m2 (not pushed: we are forgotten)" });
    // Heartbeats alone would keep answering 0 and never bring us back.
    await waitFor(() => service!.onlineAids("g1").includes(AGENT), "registered again", 3000);
    service!.post({ groupId: "g1", sender: BOB, content: "m3" });
    await waitFor(() => fed.length === 3, "m2 and m3", 3000);
    expect(fed).toEqual(["1", "2", "3"]);
  });
});
