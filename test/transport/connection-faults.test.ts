// The client against a scripted group service that misbehaves on purpose (over the loopback network).
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection, type GroupConnectionParams } from "../../src/transport/connection.ts";
import { createLoopback, type Loopback } from "../support/loopback.ts";
import { FAKE_TIMERS_WITH_REAL_IO, drain, scriptedService, waitFor, wireMessage, type Frame, type Reply } from "./helpers.ts";

let conn: GroupConnection | undefined;
let net: Loopback | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await conn?.close();
  conn = undefined;
  net = undefined;
});

async function setup(reply?: (req: Frame) => Reply | undefined, overrides: Partial<GroupConnectionParams> = {}) {
  const server = scriptedService("group.agentcp.io", reply);
  net = createLoopback([server.agent]);
  const fed: string[] = [];
  const events: unknown[] = [];
  const logger = createMemoryLogger();
  const channel = net.link("agent.agentcp.io").channel("group.agentcp.io");
  conn = createGroupConnection({
    channel,
    aid: "agent.agentcp.io",
    groups: ["g1"],
    getCursor: () => 0,
    onMessages: (_g, messages) => void fed.push(...messages.map((m) => m.msgId)),
    onEvent: (groupId, event) => events.push({ groupId, ...event }),
    logger,
    heartbeatMs: 0,
    requestTimeoutMs: 10_000,
    reconnect: { baseMs: 100, maxMs: 1000, jitter: 0 },
    ...overrides,
  });
  await conn.start();
  return { conn, server, fed, events, logger, channel };
}

describe("malformed frames from the server", () => {
  it("are counted, logged and dropped; the connection stays up and keeps working", async () => {
    const t = await setup(undefined, { maxFrameBytes: 64 * 1024 });
    const push = (data: unknown) => JSON.stringify({ action: "message_push", group_id: "g1", data });
    const junk: string[] = [
      "not json {",                                                              // malformed 1
      "[1,2,3]",                                                                 // malformed 2
      "42",                                                                      // malformed 3
      JSON.stringify({ action: 42, group_id: "g1" }),                            // malformed 4
      push({ ...wireMessage(1), msg_id: "abc" }),                                // malformed 5
      push({ ...wireMessage(1), content: 5 }),                                   // malformed 6
      push({ ...wireMessage(1), metadata: "oops" }),                             // malformed 7
      JSON.stringify({ action: "group_notify", group_id: "g1", event: "new_message", data: {} }), // malformed 8
      JSON.stringify({ action: "message_batch_push", group_id: "g1", data: { messages: 3 } }),  // malformed 9
      "\u00ff\u00fe\u0000\u0001",                                             // malformed 10 (binary garbage)
      JSON.stringify({ action: "teleport", group_id: "g1", data: {} }),          // unknown action
      JSON.stringify({ action: "message_push", group_id: "g1", data: { ...wireMessage(1), content: "x".repeat(70_000) } }), // oversize
      JSON.stringify({ action: "pull_messages", request_id: "never-sent", code: 0, data: {} }), // unmatched response
      push(wireMessage(1)).replace('"g1"', '"g9"'),                              // a group we did not join
      JSON.stringify({ action: "message_batch_push", group_id: "g1", data: { messages: [wireMessage(1), { msg_id: 2 }, wireMessage(2, "two")] } }),
    ];
    for (const frame of junk) t.server.send(frame);
    t.server.send(JSON.stringify({ action: "group_notify", group_id: "g1", event: "member_joined", data: { actor: "carol.agentcp.io" }, timestamp: 5 }));
    t.server.send(push(wireMessage(3)));
    await waitFor(() => t.fed.length === 3, "valid messages after the junk");
    expect(t.fed).toEqual(["1", "2", "3"]);
    expect(t.conn.counters()).toMatchObject({
      malformedFrames: 10,
      malformedMessages: 1,
      unknownActions: 1,
      oversizeFrames: 1,
      unmatchedResponses: 1,
      unknownGroups: 1,
      reconnects: 0,
    });
    expect(t.conn.status).toBe("open");
    expect(t.events).toEqual([{ groupId: "g1", event: "member_joined", data: { actor: "carol.agentcp.io" }, timestamp: 5 }]);
    expect(t.logger.entries.filter((e) => e.event === "transport.frame-dropped").length).toBeGreaterThanOrEqual(13);
    // Still a working connection: a request round-trips.
    await expect(t.conn.request("get_group_info", { groupId: "g1" })).resolves.toEqual({});
  });

  it("a malformed response fails only its own request with BAD_RESPONSE", async () => {
    const t = await setup((req) =>
      req.action === "get_members" ? JSON.stringify({ action: "get_members", request_id: req.request_id, code: "zero" }) : undefined,
    );
    await expect(t.conn.request("get_members", { groupId: "g1" })).rejects.toMatchObject({ code: "BAD_RESPONSE", context: { action: "get_members" } });
    expect(t.conn.counters().malformedFrames).toBe(1);
    await expect(t.conn.request("get_rules", { groupId: "g1" })).resolves.toEqual({});
  });

  it("a handler that throws on an event does not break the connection", async () => {
    const t = await setup(undefined, {
      onEvent: () => {
        throw new Error("event handler exploded");
      },
    });
    t.server.send(JSON.stringify({ action: "group_notify", group_id: "g1", event: "member_left", data: {} }));
    t.server.send(JSON.stringify({ action: "message_push", group_id: "g1", data: wireMessage(1) }));
    await waitFor(() => t.fed.length === 1, "message after the throwing event");
    expect(t.logger.entries.some((e) => e.event === "transport.event-handler-failed")).toBe(true);
  });
});

describe("timing", () => {
  it("a request with no answer rejects with REQUEST_TIMEOUT after requestTimeoutMs; with a push meanwhile the session is kept (slow, not silent)", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    const t = await setup((req) => (req.action === "get_group_info" ? "ignore" : undefined));
    let outcome: unknown = "pending";
    void t.conn.request("get_group_info", { groupId: "g1" }).then(
      () => (outcome = "resolved"),
      (err: { code: string }) => (outcome = err.code),
    );
    await waitFor(() => t.server.requests.some((r) => r.action === "get_group_info"), "request on the wire");
    // T+5s: the service pushes something, so it is there.
    await vi.advanceTimersByTimeAsync(5_000);
    t.server.send(JSON.stringify({ action: "message_batch_push", group_id: "g1", data: { messages: [wireMessage(1)], start_msg_id: 1, latest_msg_id: 1, count: 1 } }));
    await waitFor(() => t.fed.length === 1, "the push fed");
    // T+9999: still waiting; T+10000: timed out.
    await vi.advanceTimersByTimeAsync(4_999);
    expect(outcome).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBe("REQUEST_TIMEOUT");
    expect(t.conn.counters()).toMatchObject({ requestTimeouts: 1, silentSessions: 0 });
    expect(t.conn.status).toBe("open");
    expect(t.channel.renewals).toEqual([]);
    await expect(t.conn.request("get_rules", { groupId: "g1" })).resolves.toEqual({});
  });

  it("a session that answers nothing and pushes nothing for a request timeout is rebuilt: T+10 s the request times out → a new session registers, pulls, serves", async () => {
    vi.useFakeTimers({ ...FAKE_TIMERS_WITH_REAL_IO, now: 0 });
    let deaf = false;
    const t = await setup((req) => (deaf ? "ignore" : undefined));
    deaf = true;
    const failed = t.conn.request("get_group_info", { groupId: "g1" }).catch((err: { code: string }) => err.code);
    await waitFor(() => t.server.requests.some((r) => r.action === "get_group_info"), "request on the wire");
    const before = t.server.requests.length;
    await vi.advanceTimersByTimeAsync(9_999);
    await drain();
    expect(t.channel.renewals).toEqual([]);
    deaf = false;
    await vi.advanceTimersByTimeAsync(1);
    expect(await failed).toBe("REQUEST_TIMEOUT");
    expect(t.channel.renewals).toEqual(["silent"]);
    await waitFor(() => t.conn.status === "open", "open on the new session");
    expect(t.server.requests.slice(before).map((r) => r.action)).toEqual(["register_online", "get_cursor", "pull_messages"]);
    expect(t.conn.counters()).toMatchObject({ silentSessions: 1, reconnects: 1 });
    expect(t.logger.entries.filter((e) => e.event === "transport.session-silent").map((e) => e.fields.action)).toEqual(["get_group_info"]);
    await expect(t.conn.request("get_rules", { groupId: "g1" })).resolves.toEqual({});
  });

  it("every heartbeat slot beats, then renews the registration; an error answer to a repeat register_online or to a heartbeat is logged and the next slot beats regardless", async () => {
    vi.useFakeTimers({ ...FAKE_TIMERS_WITH_REAL_IO, now: 0 });
    const wire: string[] = [];
    let registers = 0;
    let beats = 0;
    const t = await setup(
      (req) => {
        wire.push(`T+${Date.now() / 1000}s ${String(req.action)}`);
        // The service answers a repeat register_online with an error, and its second heartbeat too.
        if (req.action === "register_online") return ++registers === 1 ? undefined : { code: 1009, error: "already online" };
        if (req.action === "heartbeat") return ++beats === 2 ? { code: 1002, error: "no" } : undefined;
        return undefined;
      },
      { heartbeatMs: 180_000, requestTimeoutMs: 30_000 },
    );
    for (const slot of [180_000, 360_000, 540_000]) {
      await vi.advanceTimersByTimeAsync(slot - Date.now());
      await waitFor(() => wire.filter((l) => l.endsWith("register_online")).length === slot / 180_000 + 1, `the slot at T+${slot / 1000}s`);
    }
    expect(wire).toEqual([
      "T+0s register_online",
      "T+0s get_cursor",
      "T+0s pull_messages",
      "T+180s heartbeat",
      "T+180s register_online",
      "T+360s heartbeat",
      "T+360s register_online",
      "T+540s heartbeat",
      "T+540s register_online",
    ]);
    expect(t.conn.counters()).toMatchObject({ heartbeatFailures: 1, registerFailures: 3, reconnects: 0, silentSessions: 0 });
    expect(t.conn.status).toBe("open");
    expect(t.logger.entries.filter((e) => e.event === "transport.register-refused")).toHaveLength(3);
    expect(t.logger.entries.filter((e) => e.event === "transport.heartbeat-failed")).toHaveLength(1);
  });

  it("a heartbeat the service answers with an error, then a register_online it accepts: the registration had lapsed, so the group is pulled again", async () => {
    vi.useFakeTimers({ ...FAKE_TIMERS_WITH_REAL_IO, now: 0 });
    let beats = 0;
    const t = await setup((req) => (req.action === "heartbeat" && ++beats === 1 ? { code: 1006, error: "not online" } : undefined), {
      heartbeatMs: 180_000,
      requestTimeoutMs: 30_000,
    });
    const pulls = () => t.server.requests.filter((r) => r.action === "pull_messages").length;
    expect(pulls()).toBe(1);
    await vi.advanceTimersByTimeAsync(180_000);
    await waitFor(() => pulls() === 2, "the catch-up pull after registering again");
    expect(t.server.requests.slice(3).map((r) => r.action)).toEqual(["heartbeat", "register_online", "pull_messages"]);
  });

  it("a register_online with no answer while the service is there (it pushes) is asked again within seconds: T+0, timed out T+10 s, again T+11 s → registered", async () => {
    vi.useFakeTimers({ ...FAKE_TIMERS_WITH_REAL_IO, now: 0 });
    const registerTimes: number[] = [];
    const server = scriptedService("group.agentcp.io", (req) => {
      if (req.action !== "register_online") return undefined;
      registerTimes.push(Date.now());
      return registerTimes.length === 1 ? "ignore" : undefined;
    });
    net = createLoopback([server.agent]);
    const channel = net.link("agent.agentcp.io").channel("group.agentcp.io");
    const fed: string[] = [];
    conn = createGroupConnection({
      channel,
      aid: "agent.agentcp.io",
      groups: ["g1"],
      getCursor: () => 0,
      onMessages: (_g, messages) => void fed.push(...messages.map((m) => m.msgId)),
      heartbeatMs: 180_000,
      random: () => 0,
    });
    const started = conn.start();
    await waitFor(() => registerTimes.length === 1, "first register");
    // T+5s: a push shows the service is there (the register frame alone was lost).
    await vi.advanceTimersByTimeAsync(5_000);
    server.send(JSON.stringify({ action: "group_notify", group_id: "g1", event: "new_message", data: { latest_msg_id: 0 } }));
    await drain();
    // T+9.999s: still waiting; T+10s: timed out, the pull goes ahead unregistered.
    await vi.advanceTimersByTimeAsync(4_999);
    await drain();
    expect(server.requests.some((r) => r.action === "pull_messages")).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await started;
    expect(conn.counters()).toMatchObject({ registerFailures: 1, requestTimeouts: 1, silentSessions: 0 });
    // T+10.999s: not yet; T+11s: asked again (backoff 1 s), answered.
    await vi.advanceTimersByTimeAsync(999);
    await drain();
    expect(registerTimes).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    await waitFor(() => registerTimes.length === 2, "register retried");
    expect(registerTimes).toEqual([0, 11_000]);
    // Registered again after a spell without: the group is pulled in case a push was missed.
    await waitFor(() => server.requests.filter((r) => r.action === "pull_messages").length === 2, "catch-up pull");
    expect(channel.renewals).toEqual([]);
    expect(server.requests.filter((r) => r.action === "heartbeat")).toHaveLength(0);
  });

  it("retries a 1010 without a hint on exponential backoff: T+0, T+100, T+300", async () => {
    vi.useFakeTimers({ ...FAKE_TIMERS_WITH_REAL_IO, now: 0 });
    const sendTimes: number[] = [];
    const t = await setup(
      (req) => {
        if (req.action !== "send_message") return undefined;
        sendTimes.push(Date.now());
        return sendTimes.length < 3 ? { code: 1010, data: null } : { data: { msg_id: 9, timestamp: Date.now() } };
      },
      { sendRetry: { maxAttempts: 5, baseMs: 100, maxMs: 1000, jitter: 0 } },
    );
    const sent = t.conn.sendMessage({ groupId: "g1", content: "hi" });
    await waitFor(() => sendTimes.length === 1, "first try");
    await vi.advanceTimersByTimeAsync(100);
    await waitFor(() => sendTimes.length === 2, "second try");
    await vi.advanceTimersByTimeAsync(199);
    await drain();
    expect(sendTimes).toEqual([0, 100]);
    await vi.advanceTimersByTimeAsync(1);
    await expect(sent).resolves.toEqual({ msgId: "9", timestamp: 300 });
    expect(sendTimes).toEqual([0, 100, 300]);
  });

  it("gives up with RATE_LIMITED after maxAttempts, and fails other codes at once", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    const t = await setup(
      (req) => (req.action === "send_message" ? { code: (req.params as { content: string }).content === "ban" ? 1007 : 1010 } : undefined),
      { sendRetry: { maxAttempts: 3, baseMs: 10, maxMs: 10, jitter: 0 } },
    );
    const limited = t.conn.sendMessage({ groupId: "g1", content: "x" }).catch((e: unknown) => e);
    await waitFor(() => t.conn.counters().rateLimitedRetries === 1, "first 1010");
    await vi.advanceTimersByTimeAsync(10);
    await waitFor(() => t.conn.counters().rateLimitedRetries === 2, "second 1010");
    await vi.advanceTimersByTimeAsync(10);
    expect(await limited).toMatchObject({ code: "RATE_LIMITED", context: { attempts: 3, resultCode: 1010 } });
    await expect(t.conn.sendMessage({ groupId: "g1", content: "ban" })).rejects.toMatchObject({ code: "REQUEST_FAILED", context: { resultCode: 1007 } });
  });
});
