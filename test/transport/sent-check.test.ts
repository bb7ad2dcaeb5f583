// Looking a maybe-stored send up in the group's history, against the real group service over the
// in-memory loopback network: found after the newest id known before the send, paged, bounded,
// and an error (never "not found") when the history cannot be read.
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { findSentMessage } from "../../src/transport/sent-check.ts";
import { createGroupService, type GroupService } from "../../src/server/group-service.ts";
import { createLoopback } from "../support/loopback.ts";

const AGENT = "agent.acp.local";
const BOB = "bob.acp.local";
const SERVICE = "group.acp.local";

let conn: GroupConnection | undefined;
afterEach(async () => {
  await conn?.close();
  conn = undefined;
});

async function setup(): Promise<{ service: GroupService; conn: GroupConnection }> {
  const service = createGroupService({ domain: "acp.local", groups: { g1: { members: { [AGENT]: {}, [BOB]: {} } } }, rateLimit: null });
  const net = createLoopback([service]);
  conn = createGroupConnection({
    channel: net.link(AGENT).channel(SERVICE),
    aid: AGENT,
    groups: ["g1"],
    getCursor: () => 0,
    onMessages: () => {},
    logger: createMemoryLogger(),
    heartbeatMs: 0,
    reconnect: { baseMs: 40, maxMs: 200, jitter: 0 },
  });
  await conn.start();
  return { service, conn };
}

describe("findSentMessage (real group service, loopback session)", () => {
  it("finds our stored message after the given id, across pages; not our text or not ours is not found", async () => {
    const { service, conn } = await setup();
    for (let i = 1; i <= 3; i++) service.post({ groupId: "g1", sender: BOB, content: `m${i}` });
    for (let i = 4; i <= 8; i++) service.post({ groupId: "g1", sender: BOB, content: `m${i}` });
    // Bob says the same words first: only our own message counts.
    service.post({ groupId: "g1", sender: BOB, content: "All green." });
    const sent = await conn.sendMessage({ groupId: "g1", content: "All green." });
    expect(sent.msgId).toBe("10");
    service.post({ groupId: "g1", sender: BOB, content: "after" });

    expect(await findSentMessage(conn, { groupId: "g1", selfAid: AGENT, content: "All green.", afterMsgId: 3, pageSize: 2 })).toEqual({ found: true, msgId: "10", timestamp: sent.timestamp });
    // Sender ids compare case-insensitively.
    expect(await findSentMessage(conn, { groupId: "g1", selfAid: "Agent.ACP.local", content: "All green.", afterMsgId: 3 })).toMatchObject({ found: true, msgId: "10" });
    expect(await findSentMessage(conn, { groupId: "g1", selfAid: AGENT, content: "All green!", afterMsgId: 3, pageSize: 2 })).toEqual({ found: false, pagesRead: 4, complete: true });
    // Stored before the id we know of: not this send.
    expect(await findSentMessage(conn, { groupId: "g1", selfAid: AGENT, content: "All green.", afterMsgId: 10 })).toEqual({ found: false, pagesRead: 1, complete: true });
  });

  it("reads at most maxPages and says the search was incomplete", async () => {
    const { service, conn } = await setup();
    for (let i = 1; i <= 30; i++) service.post({ groupId: "g1", sender: BOB, content: `m${i}` });
    expect(await findSentMessage(conn, { groupId: "g1", selfAid: AGENT, content: "mine", afterMsgId: 0, pageSize: 5, maxPages: 3 })).toEqual({ found: false, pagesRead: 3, complete: false });
  });

  it("rejects when the history cannot be read (no session), never answers not-found", async () => {
    const { conn } = await setup();
    await conn.close();
    await expect(findSentMessage(conn, { groupId: "g1", selfAid: AGENT, content: "x", afterMsgId: 0 })).rejects.toThrow();
  });
});
