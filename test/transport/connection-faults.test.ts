// The client against a scripted server that misbehaves on purpose.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection, type GroupConnectionParams } from "../../src/transport/connection.ts";
import { FAKE_TIMERS_WITH_REAL_IO, ioSettle, startScriptedServer, waitFor, wireMessage, type Frame, type Reply } from "./helpers.ts";

let server: Awaited<ReturnType<typeof startScriptedServer>> | undefined;
let conn: GroupConnection | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await conn?.close();
  await server?.close();
  conn = undefined;
  server = undefined;
});

async function setup(reply?: (req: Frame) => Reply | undefined, overrides: Partial<GroupConnectionParams> = {}) {
  server = await startScriptedServer(reply);
  const fed: string[] = [];
  const events: unknown[] = [];
  const logger = createMemoryLogger();
  conn = createGroupConnection({
    url: server.url,
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
    const junk: Array<string | Buffer> = [
      "not json {",                                                              // malformed 1
      "[1,2,3]",                                                                 // malformed 2
      "42",                                                                      // malformed 3
      JSON.stringify({ action: 42, group_id: "g1" }),                            // malformed 4
      push({ ...wireMessage(1), msg_id: "abc" }),                                // malformed 5
      push({ ...wireMessage(1), content: 5 }),                                   // malformed 6
      push({ ...wireMessage(1), metadata: "oops" }),                             // malformed 7
      JSON.stringify({ action: "group_notify", group_id: "g1", event: "new_message", data: {} }), // malformed 8
      JSON.stringify({ action: "message_batch_push", group_id: "g1", data: { messages: 3 } }),  // malformed 9
      Buffer.from([0xff, 0xfe, 0x00, 0x01]),                                     // malformed 10 (binary garbage)
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

  it("an unanswered heartbeat drops the socket and the client redials after the backoff", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    let silent = false;
    const t = await setup((req) => (req.action === "heartbeat" && silent ? "ignore" : undefined), {
      heartbeatMs: 1000,
      requestTimeoutMs: 500,
    });
    // T+1000: heartbeat answered; re-armed.
    await vi.advanceTimersByTimeAsync(1000);
    await waitFor(() => t.server.requests.filter((r) => r.action === "heartbeat").length === 1, "first heartbeat");
    await ioSettle();
    silent = true;
    // T+2000: second heartbeat, unanswered; T+2500: timeout → socket dropped → redial at T+2600.
    await vi.advanceTimersByTimeAsync(1000);
    await waitFor(() => t.server.requests.filter((r) => r.action === "heartbeat").length === 2, "second heartbeat");
    await vi.advanceTimersByTimeAsync(500);
    await waitFor(() => t.conn.status === "reconnecting", "socket dropped");
    expect(t.conn.counters()).toMatchObject({ heartbeatFailures: 1, reconnects: 1 });
    await vi.advanceTimersByTimeAsync(99);
    await ioSettle();
    expect(t.conn.status).toBe("reconnecting");
    await vi.advanceTimersByTimeAsync(1);
    await waitFor(() => t.conn.status === "open", "reconnected");
    expect(t.server.requests.filter((r) => r.action === "register_online")).toHaveLength(2);
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
