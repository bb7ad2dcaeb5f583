// UDP presence over real sockets on 127.0.0.1 against the local network: the access point names a
// heartbeat server, the agent signs in there and beats (513) until the server counts it online;
// an invite the service sends over presence (259) is answered (516) and joined over the message
// socket, and frames on that session reach the channel. A network without presence names no
// heartbeat server and the agent runs none — nothing else changes.
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, type NetworkAgent } from "../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { echoAgent, tempDir, waitFor } from "./support.ts";

const ALICE = "alice.acp.local";

describe("presence over UDP (local network, 127.0.0.1)", () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let net: LocalNetwork | undefined;
  const agents: NetworkAgent[] = [];
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.close();
    await net?.close();
    tmp?.cleanup();
    net = undefined;
  });

  async function start(presence: boolean) {
    tmp = tempDir();
    const group = echoAgent("group.acp.local");
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, serviceAgents: [group], presence });
    const identity = await createIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    return { group, identity };
  }

  it("signs in at the heartbeat server, beats over UDP until the server counts it online; an invite over presence is answered and joined over the socket", async () => {
    const { group, identity } = await start(true);
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity, accessPointUrl: net!.accessPointUrl, logger });
    agents.push(agent);
    const ch = agent.channel("group.acp.local");
    const got: string[] = [];
    ch.on("message", (m) => got.push(m.payload));
    await waitFor(() => ch.status === "up", "the session with the group service");
    await waitFor(() => net!.presence!.isOnline(ALICE), "online by UDP heartbeat");
    expect(agent.presenceStatus).toBe("online");
    expect(net!.presence!.counters()).toMatchObject({ refusedHeartbeats: 0 });
    expect(net!.presence!.counters().heartbeats).toBeGreaterThanOrEqual(1);

    // The group service invites alice into a session of its own, over presence (259).
    const sessionId = group.host().invite!({ to: ALICE, via: "presence" });
    expect(sessionId).toBeDefined();
    await waitFor(() => net!.presence!.counters().inviteAcks === 1, "the 516 answer");
    await waitFor(() => logger.entries.some((e) => e.event === "network.invite-accepted" && e.fields.sessionId === sessionId), "joined over the socket");
    expect(logger.entries.some((e) => e.event === "presence.invite" && e.fields.sessionId === sessionId)).toBe(true);
    expect(group.host().send({ sessionId: sessionId!, to: ALICE, payload: "over the invited session" })).toBe(true);
    await waitFor(() => got.includes("over the invited session"), "its frame reaches the channel");

    // Closing stops the beat (its timers and socket with it).
    await agent.close();
    expect(agent.presenceStatus).toBe("off");
  });

  it("a network without presence names no heartbeat server: the agent runs none, and its session works as before", async () => {
    const { identity } = await start(false);
    const agent = connectAgent({ identity, accessPointUrl: net!.accessPointUrl });
    agents.push(agent);
    const ch = agent.channel("group.acp.local");
    const got: string[] = [];
    ch.on("message", (m) => got.push(m.payload));
    await waitFor(() => ch.status === "up", "the session");
    expect(ch.send("ping")).toBe(true);
    await waitFor(() => got.length === 1, "the echo");
    expect(agent.presenceStatus).toBe("off");
    expect(net!.presence).toBeUndefined();
  });

  it("presence turned off on our side (network.presence: false) runs none against a network that serves it", async () => {
    const { identity } = await start(true);
    const agent = connectAgent({ identity, accessPointUrl: net!.accessPointUrl, presence: false });
    agents.push(agent);
    await agent.ready;
    await waitFor(() => agent.channel("group.acp.local").status === "up", "the session");
    expect(agent.presenceStatus).toBe("off");
    expect(net!.presence!.isOnline(ALICE)).toBe(false);
  });
});
