// The session with group.<ap>: create_session_req, then invite_agent_req, and group traffic once
// invite_agent_ack came (as evol does) — but a network that never sends that ack must not stall
// us (15 s, then a retry, for ever): after `inviteAckWaitMs` the session is used anyway, with a
// warning. A service that invites us into a session of its own is accepted, and its frames there
// are routed by sender. Real sockets, the local network with its `omitInviteAck` switch and its
// service-side `invite`.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, type NetworkAgent } from "../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { echoAgent, tempDir, waitFor } from "./support.ts";

describe("sessions as a real network may build them", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let group: ReturnType<typeof echoAgent>;
  const agents: NetworkAgent[] = [];
  beforeEach(async () => {
    tmp = tempDir();
    group = echoAgent("group.acp.local");
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, serviceAgents: [group] });
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.close();
    await net.close();
    tmp.cleanup();
  });

  it("the session comes up without the ack after the bounded wait and carries payloads; the missing ack is logged, not retried", async () => {
    net.quirks.omitInviteAck = true;
    const identity = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    const logger = createMemoryLogger();
    // The default ack timeout (15 s) is far longer than this test may wait.
    const agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, logger, ackTimeoutMs: 1500, inviteAckWaitMs: 300 });
    agents.push(agent);
    const ch = agent.channel("group.acp.local");
    const got: string[] = [];
    ch.on("message", (m) => got.push(m.payload));
    await waitFor(() => ch.status === "up", "the session up without invite_agent_ack", 3000);
    expect(ch.send("ping")).toBe(true);
    await waitFor(() => got.length === 1, "the echo", 1000);
    expect(got).toEqual(["echo:ping"]);
    await waitFor(() => logger.entries.some((e) => e.event === "network.invite-ack-missing"), "the missing ack logged", 4000);
    // Still the same session: no teardown, no retry.
    expect(ch.status).toBe("up");
    expect(net.counters().sessionsCreated).toBe(1);
    expect(logger.entries.filter((e) => e.event === "network.session-failed")).toEqual([]);
  });

  it("an invite_agent_req from the group service is accepted, and its frames on that other session are routed by sender", async () => {
    const identity = await createIdentity({ aid: "bob.acp.local", stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, logger });
    agents.push(agent);
    const ch = agent.channel("group.acp.local");
    const got: string[] = [];
    ch.on("message", (m) => got.push(m.payload));
    await waitFor(() => ch.status === "up", "the session we opened");
    // The service opens a session of its own with us, as a real network's service may.
    const other = group.host().invite!({ to: "bob.acp.local" });
    expect(other).toBeDefined();
    expect(other).not.toBe(ch.sessionId);
    await waitFor(() => logger.entries.some((e) => e.event === "network.invite-accepted" && e.fields.sessionId === other), "the invite accepted");
    expect(group.host().send({ sessionId: other!, to: "bob.acp.local", payload: '{"action":"message_push","group_id":"lobby"}' })).toBe(true);
    await waitFor(() => got.length === 1, "the frame on the other session delivered");
    expect(got).toEqual(['{"action":"message_push","group_id":"lobby"}']);
    expect(agent.counters()).toMatchObject({ staleMessages: 0, otherSessionMessages: 1 });
  });
});
