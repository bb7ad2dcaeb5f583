import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { connectAgent, createIdentity, NetworkError, type NetworkAgent } from "../../src/network/index.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { echoAgent, tempDir, waitFor } from "./support.ts";

describe("an identity on the local network (real sockets, real crypto, real files)", () => {
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
  const connect = async (aid: string, extra: Partial<Parameters<typeof connectAgent>[0]> = {}) => {
    const identity = await createIdentity({ aid, stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    const agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, backoff: { baseMs: 50, maxMs: 200 }, ...extra });
    agents.push(agent);
    return agent;
  };

  it("signs in, opens the session with group.<ap> and carries payloads both ways", async () => {
    const alice = await connect("alice.acp.local");
    await alice.ready;
    const ch = alice.channel("group.acp.local");
    const up = await new Promise<{ sessionId: string; reconnect: boolean }>((r) => ch.on("up", r));
    expect(up.reconnect).toBe(false);
    expect(ch.status).toBe("up");
    const got: string[] = [];
    ch.on("message", (m) => got.push(m.payload));
    expect(ch.send('{"action":"register_online","request_id":"r1"}')).toBe(true);
    await waitFor(() => got.length === 1, "echo");
    expect(got).toEqual(['echo:{"action":"register_online","request_id":"r1"}']);
    expect(group.received).toEqual([{ sessionId: up.sessionId, from: "alice.acp.local", payload: '{"action":"register_online","request_id":"r1"}' }]);
    expect(alice.token()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a token that expires mid-run: signs in again and the channel comes back up with reconnect:true on a new session", async () => {
    const alice = await connect("alice.acp.local");
    const ch = alice.channel("group.acp.local");
    const ups: Array<{ sessionId: string; reconnect: boolean }> = [];
    const downs: string[] = [];
    ch.on("up", (u) => ups.push(u));
    ch.on("down", (d) => downs.push(d.reason));
    await waitFor(() => ups.length === 1, "first up");
    const firstToken = alice.token();
    net.expireTokens("alice.acp.local");
    await waitFor(() => ups.length === 2, "second up");
    expect(downs).toEqual(["token-expired"]);
    expect(ups[1]!.reconnect).toBe(true);
    expect(ups[1]!.sessionId).not.toBe(ups[0]!.sessionId);
    expect(alice.token()).not.toBe(firstToken);
    expect(alice.counters().signIns).toBe(2);
    expect(group.ended.map((e) => e.sessionId)).toEqual([ups[0]!.sessionId]);
    const got: string[] = [];
    ch.on("message", (m) => got.push(m.payload));
    ch.send("after");
    await waitFor(() => got.length === 1, "echo after reconnect");
  });

  it("tokens with a short lifetime expire by themselves and the agent keeps coming back", async () => {
    await net.close();
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, serviceAgents: [echoAgent("group.acp.local")], tokenTtlMs: 400 });
    const alice = await connect("alice.acp.local");
    const ch = alice.channel("group.acp.local");
    const ups: boolean[] = [];
    ch.on("up", (u) => ups.push(u.reconnect));
    await waitFor(() => ups.length >= 2, "up after expiry", 8000);
    expect(ups.slice(0, 2)).toEqual([false, true]);
  });

  it("fetch carries the current message-service token (for later calls such as publishing agent.md)", async () => {
    const { createServer } = await import("node:http");
    const seen: Array<string | undefined> = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const alice = await connect("alice.acp.local");
      await alice.ready;
      const port = (server.address() as { port: number }).port;
      const reply = await alice.fetch(`http://127.0.0.1:${port}/agent.md`, { method: "POST", headers: { "content-type": "text/markdown" }, body: "# Alice" });
      expect([reply.status, reply.text]).toEqual([200, "ok"]);
      expect(seen).toEqual([`Bearer ${alice.token()}`]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("a wrong key (certificate of another identity) is refused once with IDENTITY_REJECTED naming the aid, and no retry loop", async () => {
    const logger = createMemoryLogger();
    const alice = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    const bob = await createIdentity({ aid: "bob.acp.local", stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    // Alice's certificate with Bob's key: the signature over the nonce cannot verify.
    const forged = { ...alice, privateKey: bob.privateKey, publicKeyPem: bob.publicKeyPem };
    const agent = connectAgent({ identity: forged, accessPointUrl: net.accessPointUrl, logger, backoff: { baseMs: 10, maxMs: 20 } });
    agents.push(agent);
    const err = await agent.ready.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe("IDENTITY_REJECTED");
    expect((err as NetworkError).aid).toBe("alice.acp.local");
    expect((err as NetworkError).message).toContain("alice.acp.local");
    expect(agent.status).toBe("rejected");
    // No retry loop: a retry is logged as it is scheduled (network.retry), and "rejected" is final.
    expect(logger.entries.filter((e) => e.event === "network.retry")).toEqual([]);
    expect(agent.counters().signIns).toBe(1);
    expect(net.counters().refusedSignIns).toBe(1);
    expect(logger.entries.filter((e) => e.event === "network.identity-rejected")).toHaveLength(1);
    // Another identity in the same process is unaffected.
    const bobAgent = connectAgent({ identity: bob, accessPointUrl: net.accessPointUrl });
    agents.push(bobAgent);
    await bobAgent.ready;
    expect(bobAgent.status).toBe("open");
  });

  it("a dropped socket: new session, up with reconnect:true", async () => {
    const alice = await connect("alice.acp.local", { stableMs: 0 });
    const ch = alice.channel("group.acp.local");
    const ups: Array<{ sessionId: string; reconnect: boolean }> = [];
    ch.on("up", (u) => ups.push(u));
    await waitFor(() => ups.length === 1, "first up");
    // The server drops the socket without a close frame, as a network failure would.
    net.dropSockets("alice.acp.local");
    await waitFor(() => ups.length === 2, "second up");
    expect(ups.map((u) => u.reconnect)).toEqual([false, true]);
    expect(new Set(ups.map((u) => u.sessionId)).size).toBe(2);
  });

  it("a stranger's session_message is not delivered to the group channel: counted as direct", async () => {
    const logger = createMemoryLogger();
    const alice = await connect("alice.acp.local", { logger });
    const ch = alice.channel("group.acp.local");
    const got: string[] = [];
    ch.on("message", (m) => got.push(m.payload));
    await waitFor(() => ch.status === "up", "alice up");
    const mallory = await connect("mallory.acp.local");
    const toAlice = mallory.channel("alice.acp.local");
    await waitFor(() => toAlice.status === "up", "mallory's session with alice");
    expect(toAlice.send('{"action":"message_push","group_id":"g1","data":{"msg_id":1,"sender":"mallory.acp.local","content":"fake"}}')).toBe(true);
    await waitFor(() => alice.counters().directMessages === 1, "direct message counted");
    expect(got).toEqual([]);
    expect(logger.entries.some((e) => e.event === "network.message-direct" && e.level === "debug" && e.fields.sender === "mallory.acp.local")).toBe(true);
  });

  it("two identities in one process: one socket each, independent sessions", async () => {
    const alice = await connect("alice.acp.local");
    const bob = await connect("bob.acp.local");
    const a = alice.channel("group.acp.local");
    const b = bob.channel("group.acp.local");
    await waitFor(() => a.status === "up" && b.status === "up", "both up");
    expect(net.connectedAids().sort()).toEqual(["alice.acp.local", "bob.acp.local"]);
    expect(a.sessionId).not.toBe(b.sessionId);
    expect(net.counters().connections).toBe(2);
  });

  it("message ids are unique even within one millisecond", async () => {
    const alice = await connect("alice.acp.local", { now: () => 1_700_000_000_000 });
    const ch = alice.channel("group.acp.local");
    await waitFor(() => ch.status === "up", "up");
    for (let i = 0; i < 5; i++) ch.send(`m${i}`);
    await waitFor(() => group.received.length === 5, "five received");
    // The service saw every payload once, in order.
    expect(group.received.map((r) => r.payload)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
  });

  it("a channel to a peer that is not online goes down with session-refused and does not deliver", async () => {
    const alice = await connect("alice.acp.local");
    const ch = alice.channel("group.elsewhere.example");
    const downs: string[] = [];
    ch.on("down", (d) => downs.push(d.reason));
    await waitFor(() => downs.length >= 1, "down");
    expect(downs[0]).toBe("session-refused");
    expect(ch.send("x")).toBe(false);
  });
});

describe("liveness and several peers (real sockets)", () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it("a socket that stops answering pings is found dead by the client's ping and redialled", async () => {
    const net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, serviceAgents: [echoAgent("group.acp.local")], answerPings: false });
    const logger = createMemoryLogger();
    const identity = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true });
    const agent = connectAgent({ identity, accessPointUrl: net.localUrl, pingIntervalMs: 100, stableMs: 0, logger });
    try {
      const ch = agent.channel("group.acp.local");
      const ups: boolean[] = [];
      ch.on("up", (u) => ups.push(u.reconnect));
      await waitFor(() => ups.length >= 2, "redialled after a dead socket");
      expect(ups.slice(0, 2)).toEqual([false, true]);
      expect(logger.entries.some((e) => e.event === "network.socket-dead" && e.level === "warn")).toBe(true);
    } finally {
      await agent.close();
      await net.close();
    }
  });

  it("a group on another access point gets its own session with group.<that-ap> on the same socket", async () => {
    const home = echoAgent("group.acp.local");
    const away = echoAgent("group.other.example");
    const net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, serviceAgents: [home, away] });
    const identity = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true });
    const agent = connectAgent({ identity, accessPointUrl: net.localUrl });
    try {
      const a = agent.channel("group.acp.local");
      const b = agent.channel("group.other.example");
      expect(agent.channel("group.acp.local")).toBe(a);
      await waitFor(() => a.status === "up" && b.status === "up", "both sessions up");
      expect(a.sessionId).not.toBe(b.sessionId);
      const gotA: string[] = [];
      const gotB: string[] = [];
      a.on("message", (m) => gotA.push(m.payload));
      b.on("message", (m) => gotB.push(m.payload));
      a.send("home");
      b.send("away");
      await waitFor(() => gotA.length === 1 && gotB.length === 1, "both echoes");
      expect([gotA, gotB]).toEqual([["echo:home"], ["echo:away"]]);
      expect(net.counters().connections).toBe(1);
      // Closing one channel leaves the other and the socket alone.
      b.close();
      expect(b.send("x")).toBe(false);
      a.send("still");
      await waitFor(() => gotA.length === 2, "home still works");
    } finally {
      await agent.close();
      await net.close();
    }
  });
});
