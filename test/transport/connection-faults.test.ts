// The client against a scripted group service that misbehaves on purpose (over the loopback network).
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection, type GroupConnectionParams } from "../../src/transport/connection.ts";
import { createLoopback, type Loopback } from "../support/loopback.ts";
import { FAKE_TIMERS_WITH_REAL_IO, ioSettle, scriptedService, waitFor, wireMessage, type Frame, type Reply } from "./helpers.ts";

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
  conn = createGroupConnection({
    channel: net.link("agent.agentcp.io").channel("group.agentcp.io"),
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
  return { conn, server, fed, events, logger };
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
  it("a request with no answer rejects with REQUEST_TIMEOUT after requestTimeoutMs; the connection stays open", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    const t = await setup((req) => (req.action === "get_group_info" ? "ignore" : undefined));
    let outcome: unknown = "pending";
    void t.conn.request("get_group_info", { groupId: "g1" }).then(
      () => (outcome = "resolved"),
      (err: { code: string }) => (outcome = err.code),
    );
    await waitFor(() => t.server.requests.some((r) => r.action === "get_group_info"), "request on the wire");
    // T+9999: still waiting; T+10000: timed out.
    await vi.advanceTimersByTimeAsync(9_999);
    expect(outcome).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBe("REQUEST_TIMEOUT");
    expect(t.conn.counters().requestTimeouts).toBe(1);
    expect(t.conn.status).toBe("open");
    await expect(t.conn.request("get_rules", { groupId: "g1" })).resolves.toEqual({});
  });

  it("the group heartbeat runs every heartbeatMs; a failed one is logged and counted and drops nothing", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    let silent = false;
    const t = await setup((req) => (req.action === "heartbeat" && silent ? "ignore" : undefined), {
      heartbeatMs: 180_000,
      requestTimeoutMs: 30_000,
    });
    const beats = () => t.server.requests.filter((r) => r.action === "heartbeat").length;
    // T+179.999s: none yet; T+180s: first heartbeat, answered, re-armed.
    await vi.advanceTimersByTimeAsync(179_999);
    await ioSettle();
    expect(beats()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    await waitFor(() => beats() === 1, "first heartbeat");
    // …and the registration renewed after it (a service may forget it yet answer heartbeats).
    const registers = () => t.server.requests.filter((r) => r.action === "register_online").length;
    await waitFor(() => registers() === 2, "renewed after the answered heartbeat");
    await ioSettle();
    silent = true;
    // T+360s: second heartbeat, unanswered; T+390s: it times out → logged, nothing dropped.
    await vi.advanceTimersByTimeAsync(180_000);
    await waitFor(() => beats() === 2, "second heartbeat");
    await vi.advanceTimersByTimeAsync(30_000);
    await ioSettle();
    expect(t.conn.counters()).toMatchObject({ heartbeatFailures: 1, reconnects: 0 });
    expect(t.conn.status).toBe("open");
    expect(t.logger.entries.some((e) => e.event === "transport.heartbeat-failed")).toBe(true);
    // T+570s (T+390s + 180s): the slot registers again, in case the service let the registration
    // lapse, and pulls whatever it may not have pushed meanwhile.
    silent = false;
    const pulls = () => t.server.requests.filter((r) => r.action === "pull_messages").length;
    const pullsBefore = pulls();
    await vi.advanceTimersByTimeAsync(180_000);
    await waitFor(() => registers() === 3, "register again");
    await waitFor(() => pulls() === pullsBefore + 1, "catch-up pull");
    expect(beats()).toBe(2);
    expect(t.conn.status).toBe("open");
    // T+750s: heartbeats again.
    await vi.advanceTimersByTimeAsync(180_000);
    await waitFor(() => beats() === 3, "third heartbeat");
  });

  it("a register_online with no answer is retried on the next heartbeat; requests time out after 30 s by default", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    let registers = 0;
    const server = scriptedService("group.agentcp.io", (req) => (req.action === "register_online" && ++registers === 1 ? "ignore" : undefined));
    net = createLoopback([server.agent]);
    conn = createGroupConnection({
      channel: net.link("agent.agentcp.io").channel("group.agentcp.io"),
      aid: "agent.agentcp.io",
      groups: ["g1"],
      getCursor: () => 0,
      onMessages: () => {},
      heartbeatMs: 60_000,
    });
    const started = conn.start();
    await waitFor(() => registers === 1, "first register");
    // T+29.999s: still waiting for the answer; T+30s: timed out, the pull goes ahead.
    await vi.advanceTimersByTimeAsync(29_999);
    await ioSettle();
    expect(server.requests.some((r) => r.action === "pull_messages")).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await started;
    expect(conn.counters()).toMatchObject({ registerFailures: 1, requestTimeouts: 1 });
    // T+60s: the heartbeat slot registers again instead of beating.
    await vi.advanceTimersByTimeAsync(30_000);
    await waitFor(() => registers === 2, "register retried");
    await ioSettle();
    expect(server.requests.filter((r) => r.action === "heartbeat")).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(60_000);
    await waitFor(() => server.requests.some((r) => r.action === "heartbeat"), "then heartbeats");
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
    await ioSettle();
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
