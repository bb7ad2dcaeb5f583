// The whole path users run, over real sockets on 127.0.0.1 and real crypto: the local network
// (access point, message service, group service), identities issued by its CA and signed in with
// their keys, sessions with group.acp.local, the runtime on top. A socket drop, an expired token
// and a restart must each lose nothing and dispatch nothing twice. Real time, bounded waits.
import { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { startDevNetwork, type DevNetwork } from "../../src/runtime/dev-network.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createHttpClient, signInToNetwork } from "../../src/network/index.ts";
import type { GroupDefinition } from "../../src/server/group-service.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { RuntimeError, startIdentity } from "../../src/runtime/identity.ts";
import type { AgentBackend } from "../../src/types.ts";
import {
  AGENTS,
  GENEROUS_BUDGET,
  GROUP,
  HUMAN,
  dispatchedIds,
  lobbyConfig,
  settle,
  startRecorded,
  useRuntimeFixture,
  waitFor,
  type AgentName,
  type RecordedIdentity,
} from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("network");
const FAST = { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };
// Redial at once after a drop: the network's own backoff is tested in test/network.
const QUICK = { backoff: { baseMs: 20, maxMs: 100 }, stableMs: 0 };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

interface Lobby {
  dev: DevNetwork;
  stateDir: string;
  human: GroupConnection;
  say(text: string): Promise<void>;
  start(name: AgentName, backend?: AgentBackend): Promise<RecordedIdentity>;
  close(): Promise<void>;
}

async function lobby(agents: readonly AgentName[], opts: { tokenTtlMs?: number } = {}): Promise<Lobby> {
  const stateDir = fx.stateDir();
  const members: GroupDefinition["members"] = { [HUMAN]: { human: true } };
  for (const a of agents) members[AGENTS[a].aid] = {};
  const dev = await startDevNetwork({ stateDir, groups: { [GROUP]: { members, inviteCode: "lobby-code" } }, rateLimit: null, ...opts });
  fx.server = dev.service;
  const config = lobbyConfig({ stateDir, agents, lobby: FAST });
  const humanAgent = dev.connect(await dev.identity(HUMAN), undefined, QUICK);
  const human = createGroupConnection({ channel: humanAgent.channel(dev.service.aid), aid: HUMAN, groups: [GROUP], getCursor: () => 0, onMessages: () => {} });
  await human.start();
  return {
    dev,
    stateDir,
    human,
    async say(text) {
      await human.sendMessage({ groupId: GROUP, content: text });
    },
    async start(name, backend = createScriptedBackend({ mode: "silent" })) {
      const identity = await dev.identity(AGENTS[name].aid);
      const r = fx.track(startRecorded({ config, identityId: name, backend, connect: ({ logger }) => dev.connect(identity, logger, QUICK) }));
      await r.ready;
      return r;
    },
    async close() {
      await Promise.all(fx.running.map((r) => r.close()));
      await human.close();
      await humanAgent.close();
      await dev.close();
    },
  };
}

const accepted = (r: RecordedIdentity) => r.events.flatMap((e) => (e.type === "accepted" ? [e.message.msgId] : []));

describe("the runtime on the local network (real sockets, real keys)", () => {
  it("signs in, opens the session with group.acp.local, and a mention gets one reply from the agent named", async () => {
    const l = await lobby(["alice", "bob"]);
    try {
      const alice = await l.start("alice", createScriptedBackend({ mode: "mention", replyText: "Loud and clear." }));
      const bob = await l.start("bob", createScriptedBackend({ mode: "mention", replyText: "Bob here." }));
      expect(l.dev.service.onlineAids(GROUP)).toEqual([AGENTS.alice.aid, AGENTS.bob.aid, HUMAN].sort());
      expect(alice.connection!.peer).toBe("group.acp.local");
      await l.say("Alice, can you hear me?");
      await waitFor(() => l.dev.service.history(GROUP).length === 2, "alice's reply");
      await settle(l.dev.service, [alice, bob]);
      expect(l.dev.service.history(GROUP).map((m) => [m.msgId, m.sender, m.content])).toEqual([
        ["1", HUMAN, "Alice, can you hear me?"],
        ["2", AGENTS.alice.aid, "Loud and clear."],
      ]);
      expect(bob.decisions.every((d) => d.outcome.kind !== "sent")).toBe(true);
      // Two identities in one process: one socket each.
      expect(l.dev.net.connectedAids().sort()).toEqual([AGENTS.alice.aid, AGENTS.bob.aid, HUMAN].sort());
    } finally {
      await l.close();
    }
  });

  it("a key the network did not issue: that identity's ready fails with IDENTITY_REJECTED naming it; the other keeps running", async () => {
    const l = await lobby(["alice", "bob"]);
    const elsewhere = await startDevNetwork({ stateDir: fx.stateDir("elsewhere"), groups: {} });
    try {
      const foreign = await elsewhere.identity(AGENTS.alice.aid);
      const config = lobbyConfig({ stateDir: l.stateDir, agents: ["alice", "bob"], lobby: FAST });
      const alice = fx.track(
        startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "silent" }), connect: ({ logger }) => l.dev.connect(foreign, logger, QUICK) }),
      );
      await expect(alice.ready).rejects.toMatchObject({ code: "IDENTITY_REJECTED", aid: AGENTS.alice.aid });
      const bob = await l.start("bob", createScriptedBackend({ mode: "mention", replyText: "Bob here." }));
      await l.say("Bob, still with us?");
      await waitFor(() => l.dev.service.history(GROUP).length === 2, "bob's reply");
      expect(l.dev.service.history(GROUP)[1]).toMatchObject({ sender: AGENTS.bob.aid, content: "Bob here." });
      expect(bob.connection!.status).toBe("open");
      expect(l.dev.service.onlineAids(GROUP)).not.toContain(AGENTS.alice.aid);
    } finally {
      await l.close();
      await elsewhere.close();
    }
  });

  it("without an injected link the runtime signs in from the config; a missing key is one RuntimeError naming the aid", async () => {
    const l = await lobby(["alice"]);
    try {
      // The identity as a user configures it: aid, its access point URL, the local CA to trust.
      const identity = await l.dev.identity(AGENTS.alice.aid);
      const config = lobbyConfig({ stateDir: `${l.stateDir}/local-network`, agents: ["alice"], lobby: FAST });
      const configured = { ...config, network: { ...config.network, caFile: l.dev.net.caFile } };
      configured.identities.alice = { ...configured.identities.alice!, accessPointUrl: l.dev.net.localUrl };
      const alice = fx.track(startIdentity({ config: configured, identityId: "alice", backend: createScriptedBackend({ mode: "silent" }), connection: { heartbeatMs: 0 } }) as RecordedIdentity);
      await alice.ready;
      expect(identity.dir).toContain("local-network");
      expect(l.dev.service.onlineAids(GROUP)).toContain(AGENTS.alice.aid);

      const missing = { ...configured, stateDir: fx.stateDir("empty") };
      let thrown: unknown;
      try {
        startIdentity({ config: missing, identityId: "alice", backend: createScriptedBackend({ mode: "silent" }) });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(RuntimeError);
      expect(thrown).toMatchObject({ code: "NO_NETWORK", identityId: "alice" });
      expect(String((thrown as Error).message)).toContain(AGENTS.alice.aid);
    } finally {
      await l.close();
    }
  });

  it("a dropped socket: a new session, every message delivered and dispatched exactly once", async () => {
    const l = await lobby(["alice"]);
    try {
      const alice = await l.start("alice");
      for (let i = 1; i <= 5; i++) await l.say(`note ${i}`);
      await waitFor(() => accepted(alice).length === 5, "first five");
      const sessions = l.dev.net.counters().sessionsCreated;
      // The human keeps talking while Alice's socket is cut without a close frame.
      const talking = (async () => {
        for (let i = 6; i <= 15; i++) {
          await l.say(`note ${i}`);
          if (i === 7) l.dev.net.dropSockets(AGENTS.alice.aid);
        }
      })();
      await talking;
      await waitFor(() => accepted(alice).length === 15, "all fifteen", 8000);
      await settle(l.dev.service, [alice]);
      expect(accepted(alice)).toEqual(range(1, 15));
      expect(dispatchedIds(alice).map(Number).sort((a, b) => a - b).map(String)).toEqual(range(1, 15));
      expect(alice.connection!.counters().reconnects).toBeGreaterThanOrEqual(1);
      expect(l.dev.net.counters().sessionsCreated).toBeGreaterThan(sessions);
      expect(l.dev.service.onlineAids(GROUP)).toContain(AGENTS.alice.aid);
    } finally {
      await l.close();
    }
  });

  it("a token that expires mid-run: signs in again, and nothing is lost or fed twice", async () => {
    const l = await lobby(["alice"]);
    try {
      const alice = await l.start("alice");
      await l.say("before");
      await waitFor(() => accepted(alice).length === 1, "before");
      l.dev.net.expireTokens(AGENTS.alice.aid);
      await l.say("while signing in again");
      await waitFor(() => alice.connection!.status === "open" && accepted(alice).length === 2, "after re-sign-in", 8000);
      await l.say("after");
      await waitFor(() => accepted(alice).length === 3, "after");
      expect(accepted(alice)).toEqual(["1", "2", "3"]);
      expect(alice.connection!.counters().reconnects).toBeGreaterThanOrEqual(1);
    } finally {
      await l.close();
    }
  });

  it("a restart on the same state dir resumes from the cursor: what came while away once, nothing twice", async () => {
    const l = await lobby(["alice"]);
    try {
      const first = await l.start("alice", createScriptedBackend({ mode: "mention", replyText: "Here." }));
      await l.say("Alice, you there?");
      await waitFor(() => l.dev.service.history(GROUP).length === 2, "first reply");
      await settle(l.dev.service, [first]);
      await first.close();
      expect(l.dev.service.onlineAids(GROUP)).not.toContain(AGENTS.alice.aid);
      await l.say("while you were away");
      await l.say("Alice, back?");
      const second = await l.start("alice", createScriptedBackend({ mode: "mention", replyText: "Back." }));
      await waitFor(() => l.dev.service.history(GROUP).length === 5, "second reply");
      await settle(l.dev.service, [second]);
      expect(accepted(second)).toEqual(["3", "4"]);
      expect(l.dev.service.history(GROUP).filter((m) => m.sender === AGENTS.alice.aid).map((m) => m.content)).toEqual(["Here.", "Back."]);
    } finally {
      await l.close();
    }
  });

  it("the message service refuses a bare group frame and a session_message outside a session; the group service never sees them", async () => {
    const l = await lobby(["alice"]);
    try {
      const identity = await l.dev.identity(AGENTS.alice.aid);
      const signed = await signInToNetwork({ accessPointUrl: l.dev.net.localUrl, identity, http: createHttpClient({ ca: l.dev.net.caPem }) });
      const url = `${signed.messageServer.replace(/^http/, "ws")}/session?agent_id=${encodeURIComponent(identity.aid)}&signature=${encodeURIComponent(signed.messageToken)}`;
      const ws = new WebSocket(url, { ca: l.dev.net.caPem });
      const frames: Array<{ cmd?: string; data?: { message?: string } }> = [];
      ws.on("message", (d) => frames.push(JSON.parse(String(d))));
      await new Promise<void>((resolve, reject) => {
        ws.once("open", () => resolve());
        ws.once("error", reject);
      });
      const requests = l.dev.service.counters().requests;
      ws.send(JSON.stringify({ action: "send_message", request_id: "bare-1", group_id: GROUP, params: { content: "sneaky" } }));
      ws.send(JSON.stringify({
        cmd: "session_message",
        data: { message_id: "1", session_id: "no-such-session", ref_msg_id: "", sender: identity.aid, receiver: "group.acp.local", message: "{}", timestamp: "1" },
      }));
      await waitFor(() => frames.filter((f) => f.cmd === "error").length === 2, "two refusals");
      ws.close();
      expect(l.dev.service.counters().requests).toBe(requests);
      expect(l.dev.service.history(GROUP)).toEqual([]);
      expect(l.dev.net.counters().refusedFrames).toBeGreaterThanOrEqual(2);
    } finally {
      await l.close();
    }
  });

  it("joining by link: use_invite_code over the session makes a new identity a member who can post", async () => {
    const l = await lobby(["alice"]);
    try {
      const dave = l.dev.connect(await l.dev.identity("dave.acp.local"), undefined, QUICK);
      const conn = createGroupConnection({ channel: dave.channel(l.dev.service.aid), aid: "dave.acp.local", groups: [], getCursor: () => 0, onMessages: () => {} });
      await conn.start();
      await expect(conn.request("pull_messages", { groupId: GROUP })).rejects.toMatchObject({ context: { resultCode: 1006 } });
      expect(l.dev.service.joinLink(GROUP)).toBe("https://group.acp.local/lobby?code=lobby-code");
      await expect(conn.request("use_invite_code", { groupId: GROUP, params: { code: "lobby-code" } })).resolves.toEqual({ group_id: GROUP, status: "joined" });
      const mine = (await conn.request("list_my_groups")) as { groups: Array<{ group_id: string }> };
      expect(mine.groups.map((g) => g.group_id)).toEqual([GROUP]);
      await expect(conn.request("send_message", { groupId: GROUP, params: { content: "hi all, dave here" } })).resolves.toMatchObject({ msg_id: 1 });
      expect(l.dev.service.history(GROUP).map((m) => [m.sender, m.content])).toEqual([["dave.acp.local", "hi all, dave here"]]);
      await conn.close();
      await dave.close();
    } finally {
      await l.close();
    }
  });
});
