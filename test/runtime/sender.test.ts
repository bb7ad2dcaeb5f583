// The runtime's group sender over a real group connection (the real group service on the
// in-memory loopback network): the history check a maybe-stored reply goes through before it is
// sent again, and its warning when the history since is longer than it reads.
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupSender } from "../../src/runtime/sender.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { createGroupService } from "../../src/server/group-service.ts";
import { createLoopback } from "../support/loopback.ts";

const AGENT = "agent.acp.local";
const BOB = "bob.acp.local";

let conn: GroupConnection | undefined;
afterEach(async () => {
  await conn?.close();
  conn = undefined;
});

describe("createGroupSender (real group service, loopback session)", () => {
  it("finds a reply the service stored; a text not there is undefined; past 10 pages it says so in the log", async () => {
    const service = createGroupService({ domain: "acp.local", groups: { g1: { members: { [AGENT]: {}, [BOB]: {} } } }, rateLimit: null });
    const net = createLoopback([service]);
    conn = createGroupConnection({ channel: net.link(AGENT).channel("group.acp.local"), aid: AGENT, groups: ["g1"], getCursor: () => 0, onMessages: () => {}, logger: createMemoryLogger(), heartbeatMs: 0 });
    await conn.start();
    const logger = createMemoryLogger();
    const c = conn;
    const sender = createGroupSender({ connection: () => c, groupId: "g1", selfAid: AGENT, logger });
    service.post({ groupId: "g1", sender: BOB, content: "status?" });
    const sent = await sender.sendMessage({ groupId: "g1", content: "All green." });
    expect(await sender.findSent!({ groupId: "g1", content: "All green.", afterMsgId: 1 })).toEqual({ msgId: sent.msgId, timestamp: sent.timestamp });
    expect(await sender.findSent!({ groupId: "g1", content: "All red.", afterMsgId: 1 })).toBeUndefined();
    expect(logger.entries.filter((e) => e.event === "runtime.sent-check-incomplete")).toEqual([]);
    for (let i = 0; i < 520; i++) service.post({ groupId: "g1", sender: BOB, content: `m${i}` });
    expect(await sender.findSent!({ groupId: "g1", content: "All red.", afterMsgId: 1 })).toBeUndefined();
    expect(logger.entries.filter((e) => e.event === "runtime.sent-check-incomplete").map((e) => e.fields)).toEqual([{ group: "g1", afterMsgId: 1, pagesRead: 10 }]);
  });
});
