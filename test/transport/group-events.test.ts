// The group service's event log through the group connection, against the real group service on
// the loopback network: each event (sent twice over, as `group_event` and `new_event`) reaches
// onEvent once, by its event_type, in order; what was logged while the session was down is
// pulled after the reconnect; what was logged before the first session is not replayed; and the
// events read are acked, so the service's event cursor follows.
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupService, type GroupService } from "../../src/server/group-service.ts";
import { createGroupConnection, type GroupConnection, type GroupEvent } from "../../src/transport/connection.ts";
import { createLoopback, type Loopback } from "../support/loopback.ts";
import { rawClient, waitFor } from "./helpers.ts";

const ALICE = "alice.acp.local";
const SERVICE = "group.acp.local";

let service: GroupService;
let net: Loopback;
let conn: GroupConnection | undefined;
afterEach(async () => {
  await conn?.close();
  conn = undefined;
});

function setup() {
  service = createGroupService({ domain: "acp.local", groups: { g1: { members: { [ALICE]: {} }, inviteCode: "c1" } }, rateLimit: null });
  net = createLoopback([service]);
  const events: Array<{ groupId: string } & GroupEvent> = [];
  const logger = createMemoryLogger();
  const channel = net.link(ALICE).channel(SERVICE);
  conn = createGroupConnection({
    channel,
    aid: ALICE,
    groups: ["g1"],
    getCursor: () => 0,
    onMessages: () => {},
    onEvent: (groupId, event) => events.push({ groupId, ...event }),
    logger,
    heartbeatMs: 0,
  });
  return { conn, events, logger, channel };
}

const summary = (events: readonly GroupEvent[]) => events.map((e) => `${e.eventId} ${e.event} ${e.target ?? ""}`.trim());

describe("the service's event log through the connection", () => {
  it("a join reaches onEvent once as member_joined (group_event and new_event both came), with its id, actor and target; the service's event cursor follows", async () => {
    const t = setup();
    await t.conn.start();
    service.addMember("g1", "dave.acp.local");
    await waitFor(() => t.events.length === 1, "the event");
    expect(t.events).toEqual([
      { groupId: "g1", event: "member_joined", eventId: 1, actor: "dave.acp.local", target: "dave.acp.local", data: { agent_id: "dave.acp.local", role: "member" }, timestamp: expect.any(Number) },
    ]);
    // A member joining by the invite code (over its own session) is the next one.
    const erin = await rawClient(net, "erin.acp.local", SERVICE);
    expect((await erin.request("use_invite_code", "g1", { code: "c1" })).code).toBe(0);
    await waitFor(() => t.events.length === 2, "the second event");
    expect(summary(t.events)).toEqual(["1 member_joined dave.acp.local", "2 member_joined erin.acp.local"]);
    // Acked: the service's event cursor for alice reaches 2 (the acks go out after each event).
    const current = async () => ((await t.conn.request("get_cursor", { groupId: "g1" })) as { event_cursor: { current_event_id: number } }).event_cursor.current_event_id;
    let seen = await current();
    for (let i = 0; i < 20 && seen !== 2; i++) seen = await current();
    expect(seen).toBe(2);
    erin.close();
  });

  it("events logged while the session was down are pulled after the reconnect, in order, each once; those before the first session are not replayed", async () => {
    const t = setup();
    service.addMember("g1", "old.acp.local");
    await t.conn.start();
    expect(t.events).toEqual([]);
    net.drop(ALICE, { reconnect: false });
    await waitFor(() => t.conn.status === "reconnecting", "down");
    service.addMember("g1", "erin.acp.local");
    service.addMember("g1", "finn.acp.local");
    net.restore(ALICE);
    await waitFor(() => t.events.length === 2, "the missed events");
    service.addMember("g1", "gus.acp.local");
    await waitFor(() => t.events.length === 3, "a live one after");
    expect(summary(t.events)).toEqual(["2 member_joined erin.acp.local", "3 member_joined finn.acp.local", "4 member_joined gus.acp.local"]);
  });

  it("a group_event past a gap is pulled in order; a malformed one is counted and dropped", async () => {
    const t = setup();
    await t.conn.start();
    service.addMember("g1", "dave.acp.local");
    await waitFor(() => t.events.length === 1, "event 1");
    const channel = t.channel;
    channel.inject(JSON.stringify({ action: "group_notify", group_id: "g1", event: "group_event", data: { event_type: "member_joined" } }));
    await waitFor(() => t.conn.counters().malformedFrames === 1, "the malformed one counted");
    // Events 2 and 3 are logged while the service does not tell alice (it forgot her registration);
    // then only event 3 reaches her: 2 is pulled first.
    service.forgetOnline(ALICE);
    service.addMember("g1", "erin.acp.local");
    service.addMember("g1", "finn.acp.local");
    channel.inject(JSON.stringify({ action: "group_notify", group_id: "g1", event: "group_event", data: service.events("g1")[2] }));
    await waitFor(() => t.events.length === 3, "both");
    expect(summary(t.events)).toEqual(["1 member_joined dave.acp.local", "2 member_joined erin.acp.local", "3 member_joined finn.acp.local"]);
    expect(t.logger.entries.filter((e) => e.event === "transport.frame-dropped").map((e) => e.fields.detail)).toEqual(["group_event data.event_id: expected a non-negative integer, got undefined"]);
  });
});
