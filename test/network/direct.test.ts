// Direct messages on the network layer, over real sockets on the local network: the service
// forwards an invite to the invitee, whose agent accepts with join_session_req (only then does the
// inviter hear invite_agent_ack 200); text travels in the SDK's URL-encoded block list both ways;
// an agent writes to a peer on the peer's session, or opens one. An SDK-shaped client (hand-written
// from the SDK's source) plays the person; our network agent plays the agent.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, NetworkError, type NetworkAgent } from "../../src/network/index.ts";
import type { DirectMessage } from "../../src/network/direct-link.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { createHttpClient, signIn } from "../../src/network/index.ts";
import { connectSdkMember, type SdkMember } from "../support/sdk-member.ts";
import { echoAgent, loopbackLookup, tempDir, waitFor } from "./support.ts";

const D = "acp.local";

describe("direct messages between agents and people (real sockets, TLS, the local network)", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  const agents: NetworkAgent[] = [];
  const members: SdkMember[] = [];
  beforeEach(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: D, stateDir: `${tmp.dir}/net`, tls: true, serviceAgents: [echoAgent(`group.${D}`)], inviteJoinTimeoutMs: 400 });
  });
  afterEach(async () => {
    for (const m of members.splice(0)) m.close();
    for (const a of agents.splice(0)) await a.close();
    await net.close();
    tmp.cleanup();
  });
  const connect = async (aid: string) => {
    const identity = await createIdentity({ aid, stateDir: `${tmp.dir}/state`, accessPointUrl: net.localUrl, noPassphrase: true, tls: { ca: net.caPem } });
    const agent = connectAgent({ identity, accessPointUrl: net.localUrl, tls: { ca: net.caPem }, backoff: { baseMs: 50, maxMs: 200 }, stableMs: 0, logger: createMemoryLogger() });
    agents.push(agent);
    await agent.ready;
    return agent;
  };
  const inbox = (agent: NetworkAgent) => {
    const got: DirectMessage[] = [];
    agent.onDirect((m) => got.push(m));
    return got;
  };
  const person = async (aid: string, to: string) => {
    const m = await connectSdkMember({ base: `https://acp3.${net.sdkDomain}`, aid, caPem: net.caPem, lookup: loopbackLookup, groupService: to });
    members.push(m);
    return m;
  };

  it("a person on the SDK's sequence DMs dave: the invite reaches dave, dave joins, the SDK hears 200, the text arrives decoded, and dave's answer comes back in that session", async () => {
    const dave = await connect(`dave.${D}`);
    const got = inbox(dave);
    const owner = await person(`owner.${D}`, `dave.${D}`);
    // The SDK's send goes only after its invite came back 200: dave joined the session first.
    expect(Number(owner.invited.data.status_code)).toBe(200);
    owner.say("Dave, can you hear me?");
    const m = await waitFor(() => got[0], "dave reads the DM");
    expect(m).toMatchObject({ peer: `owner.${D}`, sessionId: owner.sessionId, text: "Dave, can you hear me?" });
    expect(m.messageId).toMatch(/^\d+$/);
    expect(Number.isFinite(m.at) && m.at > 0).toBe(true);
    await dave.sendDirect({ peer: `owner.${D}`, text: "Loud and clear — 100% (ünïcode ✓)", sessionId: m.sessionId });
    expect(await waitFor(() => owner.answers()[0], "the owner reads dave's answer")).toBe("Loud and clear — 100% (ünïcode ✓)");
    // On the wire it is the SDK's block list, URL-encoded.
    const frame = owner.frames.find((f) => f.cmd === "session_message" && f.data.sender === `dave.${D}`)!;
    const blocks = JSON.parse(decodeURIComponent(frame.data.message as string)) as Array<Record<string, unknown>>;
    expect(blocks).toEqual([{ type: "content", status: "success", timestamp: expect.stringMatching(/^\d+$/), content: "Loud and clear — 100% (ünïcode ✓)" }]);
    expect(dave.counters().directMessages).toBe(1);
  });

  it("plain text and a lone % arrive as written (the SDK's reader falls back to the raw string)", async () => {
    const dave = await connect(`dave.${D}`);
    const got = inbox(dave);
    const erin = await connect(`erin.${D}`);
    // Erin's agent opens a session and writes; then a raw frame with plain text on the same session.
    const { sessionId } = await erin.sendDirect({ peer: `dave.${D}`, text: "first" });
    await waitFor(() => got.length === 1, "first");
    const raw = await rawSocket(`erin2.${D}`);
    raw.send("create_session_req", { request_id: "c1" });
    const created = await raw.next("create_session_ack");
    raw.send("invite_agent_req", { request_id: "i1", session_id: created.session_id, acceptor_id: `dave.${D}`, invite_code: created.identifying_code, inviter_id: `erin2.${D}` });
    expect((await raw.next("invite_agent_ack")).status_code).toBe(200);
    raw.send("session_message", { message_id: "1", session_id: created.session_id, sender: `erin2.${D}`, receiver: `dave.${D}`, message: "50% off, plain" });
    raw.send("session_message", { message_id: "2", session_id: created.session_id, sender: `erin2.${D}`, receiver: `dave.${D}`, message: JSON.stringify({ content: "an object" }) });
    await waitFor(() => got.length === 3, "two more");
    expect(got.map((g) => [g.peer, g.text])).toEqual([
      [`erin.${D}`, "first"],
      [`erin2.${D}`, "50% off, plain"],
      [`erin2.${D}`, "an object"],
    ]);
    expect(got[0]!.sessionId).toBe(sessionId);
    raw.close();
  });

  it("an agent writes first: its session with the peer is opened once and reused; the peer answers on it; after a reconnect a fresh one is opened", async () => {
    const alice = await connect(`alice.${D}`);
    const bob = await connect(`bob.${D}`);
    const toAlice = inbox(alice);
    const toBob = inbox(bob);
    const created = net.counters().sessionsCreated;
    const [a, b] = await Promise.all([alice.sendDirect({ peer: `bob.${D}`, text: "one" }), alice.sendDirect({ peer: `bob.${D}`, text: "two" })]);
    expect(a.sessionId).toBe(b.sessionId);
    await waitFor(() => toBob.length === 2, "bob reads both");
    expect(toBob.map((m) => m.text)).toEqual(["one", "two"]);
    await bob.sendDirect({ peer: `alice.${D}`, text: "back", sessionId: toBob[0]!.sessionId });
    await waitFor(() => toAlice[0], "alice reads bob");
    expect(toAlice[0]!.sessionId).toBe(a.sessionId);
    expect(net.counters().sessionsCreated - created).toBe(1);
    // Alice's socket drops: her sessions end with it; the next send opens a new one.
    net.dropSockets(`alice.${D}`);
    await waitFor(() => alice.status !== "open", "alice down");
    await expect(alice.sendDirect({ peer: `bob.${D}`, text: "while down" })).rejects.toMatchObject({ code: "NOT_CONNECTED" });
    await waitFor(() => alice.status === "open", "alice back");
    const again = await alice.sendDirect({ peer: `bob.${D}`, text: "after" });
    expect(again.sessionId).not.toBe(a.sessionId);
    await waitFor(() => toBob.length === 3, "bob reads the third");
    expect(toBob[2]).toMatchObject({ text: "after", sessionId: again.sessionId });
  });

  it("an invitee that never joins: the inviter hears 408 and sendDirect rejects (nothing is written into a session nobody joined)", async () => {
    const alice = await connect(`alice.${D}`);
    const silent = await rawSocket(`mute.${D}`);
    const err = await alice.sendDirect({ peer: `mute.${D}`, text: "hello?" }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe("BAD_REPLY");
    expect((err as NetworkError).message).toContain("invite_agent_ack 408");
    // The invite did reach it, as the real service forwards it.
    expect(silent.frames.some((f) => f.cmd === "invite_agent_req" && f.data.inviter_id === `alice.${D}`)).toBe(true);
    expect(silent.frames.some((f) => f.cmd === "session_message")).toBe(false);
    silent.close();
  });

  it("an agent that is not online cannot be invited (404 from the service)", async () => {
    const alice = await connect(`alice.${D}`);
    await expect(alice.sendDirect({ peer: `nobody.${D}`, text: "hi" })).rejects.toThrow(/invite_agent_ack 404/);
  });

  /** A bare socket of a signed-in aid that answers nothing on its own (no auto-join). */
  async function rawSocket(aid: string) {
    const identity = await createIdentity({ aid, stateDir: `${tmp.dir}/raw`, accessPointUrl: net.localUrl, noPassphrase: true, tls: { ca: net.caPem } });
    const http = createHttpClient({ ca: net.caPem });
    const token = await signIn({ url: `${net.localUrl}/api/message/sign_in`, identity, http });
    const ws = new WebSocket(`${net.localUrl.replace("https", "wss")}/api/message/session?agent_id=${aid}&signature=${token}`, { ca: net.caPem });
    const frames: Array<{ cmd: string; data: Record<string, unknown> }> = [];
    ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once("open", r));
    return {
      frames,
      send: (cmd: string, data: Record<string, unknown>) => ws.send(JSON.stringify({ cmd, data })),
      next: async (cmd: string) => (await waitFor(() => frames.find((f) => f.cmd === cmd), cmd)).data,
      close: () => {
        ws.close();
        http.close();
      },
    };
  }
});
