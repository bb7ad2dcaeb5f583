// agent.md and member types on the local network, over real sockets and real keys: each identity
// publishes its profile after sign-in (readable back over HTTP, republished only when it
// changed); a stranger agent nobody configured is known as an agent from its published profile
// (through get_members, also when it joins later), the loop guard stops an agent-only exchange
// with it, and so is one with a stranger whose own profile says human (its word makes no person:
// only the group's definition or our config do); a mention carried only in
// message metadata is a mention. The model is the deterministic scripted back-end (no LLM here).
import { describe, expect, it } from "vitest";
import { startDevNetwork, type DevNetwork } from "../../src/runtime/dev-network.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import type { MemberDirectory } from "../../src/members/member-types.ts";
import { createMemoryLogger } from "../../src/log.ts";
import type { NetworkAgent } from "../../src/network/index.ts";
import { parseAgentMd } from "../../src/profile/agent-md.ts";
import { describePublishedProfile } from "../../src/profile/profile-sync.ts";
import { publishAgentMd } from "../../src/profile/publish.ts";
import type { GroupDefinition } from "../../src/server/group-service.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import type { AgentBackend, ChannelConfig, GenerateRequest } from "../../src/types.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, HUMAN, lobbyConfig, settle, startRecorded, useRuntimeFixture, waitFor, type RecordedIdentity } from "../support/runtime-harness.ts";
import { reasonOf } from "../support/outcome.ts";

const fx = useRuntimeFixture("profiles");
const FAST = { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET, maxAgentChain: 2 };
const QUICK = { backoff: { baseMs: 20, maxMs: 100 }, stableMs: 0 };
const ZED = "zed.acp.local";
const DAVE = "dave.acp.local";
const ERIN = "erin.acp.local";

const profileText = (aid: string, type: "agent" | "human") => `---\naid: ${aid}\nname: ${aid.split(".")[0]}\ntype: ${type}\n---\n# ${aid.split(".")[0]}\n`;

/** A participant that is not one of our runtimes: signed in with its own key, its own session with the group service. */
interface Member {
  agent: NetworkAgent;
  conn: GroupConnection;
  publish(type: "agent" | "human"): Promise<void>;
  say(text: string, metadata?: Record<string, unknown>): Promise<void>;
}

async function member(dev: DevNetwork, aid: string, groups: readonly string[], opts: { publish?: "agent" | "human"; joinCode?: string } = {}): Promise<Member> {
  const agent = dev.connect(await dev.identity(aid), undefined, QUICK);
  await agent.ready;
  const publish = async (type: "agent" | "human") => {
    const r = await publishAgentMd({ aid, text: profileText(aid, type), token: agent.token()!, fetch: dev.profileFetch });
    expect(r).toMatchObject({ ok: true });
  };
  if (opts.publish) await publish(opts.publish);
  if (opts.joinCode) {
    // Joining by the group's link needs no membership yet: a connection with no groups asks.
    const joiner = createGroupConnection({ channel: agent.channel(dev.service.aid), aid, groups: [], closeChannel: false, getCursor: () => 0, onMessages: () => {} });
    await joiner.start();
    expect(await joiner.request("use_invite_code", { groupId: GROUP, params: { code: opts.joinCode } })).toEqual({ group_id: GROUP, status: "joined" });
    await joiner.close();
  }
  const conn = createGroupConnection({ channel: agent.channel(dev.service.aid), aid, groups, getCursor: () => 0, onMessages: () => {} });
  await conn.start();
  return {
    agent,
    conn,
    publish,
    async say(text, metadata) {
      await conn.sendMessage({ groupId: GROUP, content: text, ...(metadata ? { metadata } : {}) });
    },
  };
}

async function network(extraMembers: readonly string[], opts: { tls?: boolean } = {}): Promise<{ dev: DevNetwork; stateDir: string; close(): Promise<void> }> {
  const stateDir = fx.stateDir();
  const members: GroupDefinition["members"] = { [HUMAN]: { human: true }, [AGENTS.alice.aid]: {} };
  for (const m of extraMembers) members[m] = {};
  const dev = await startDevNetwork({ stateDir, groups: { [GROUP]: { members, inviteCode: "lobby-code" } }, rateLimit: null, ...opts });
  fx.server = dev.service;
  return {
    dev,
    stateDir,
    async close() {
      await Promise.all(fx.running.map((r) => r.close()));
      await dev.close();
    },
  };
}

function startAlice(dev: DevNetwork, config: ChannelConfig, backend: AgentBackend, logger = createMemoryLogger()): RecordedIdentity & { logger: ReturnType<typeof createMemoryLogger> } {
  const r = fx.track(
    startRecorded({
      config,
      identityId: "alice",
      backend,
      logger,
      profileFetch: dev.profileFetch,
      connect: ({ logger: l }) => {
        const agent = dev.connect(identityOf.get(dev)!, l, QUICK);
        return agent;
      },
    }),
  );
  return Object.assign(r, { logger });
}
/** Alice's identity per network, issued before she starts. */
const identityOf = new Map<DevNetwork, Awaited<ReturnType<DevNetwork["identity"]>>>();

/** The scripted back-end, recording every request it was given. */
function recording(mode: "always" | "mention"): AgentBackend & { requests: GenerateRequest[] } {
  const inner = createScriptedBackend({ mode, replyText: (r) => `answer number ${r.dispatchId} for you.` });
  const requests: GenerateRequest[] = [];
  return {
    name: inner.name,
    requests,
    generate(r) {
      requests.push(r);
      return inner.generate(r);
    },
  };
}

const events = (logger: ReturnType<typeof createMemoryLogger>, name: string) => logger.entries.filter((e) => e.event === name);

describe("agent.md on the local network (real sockets, real keys)", () => {
  it.each([false, true])("published after sign-in, read back over HTTP (tls %s), republished only when it changed", async (tls) => {
    const n = await network([], { tls });
    try {
      identityOf.set(n.dev, await n.dev.identity(AGENTS.alice.aid));
      const config = lobbyConfig({ stateDir: n.stateDir, agents: ["alice"], lobby: FAST });
      config.identities.alice!.profile = { publish: true, description: "Keeps the tea room tidy.", tags: ["tea", "tidy"] };
      const first = startAlice(n.dev, config, recording("mention"));
      await first.ready;
      await waitFor(() => events(first.logger, "profile.published").length === 1, "the first publish");

      // Anyone reads it back at https://<aid>/agent.md (here: the local server, the aid as Host).
      const res = await n.dev.profileFetch(`https://${AGENTS.alice.aid}/agent.md`, { method: "GET", headers: {} });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(parseAgentMd(text)).toMatchObject({ aid: AGENTS.alice.aid, name: "Alice", type: "agent", description: "Keeps the tea room tidy.", tags: ["tea", "tidy"] });
      expect(describePublishedProfile({ stateDir: n.stateDir, identityId: "alice", identity: config.identities.alice! })).toContain(text.trimEnd());
      // Publishing needs that aid's own message token: zed's is refused for alice's profile.
      const zed = await member(n.dev, ZED, []);
      expect(await publishAgentMd({ aid: AGENTS.alice.aid, text: profileText(AGENTS.alice.aid, "human"), token: zed.agent.token()!, fetch: n.dev.profileFetch })).toEqual({
        ok: false,
        reason: "http-status",
        status: 403,
      });
      await zed.conn.close();
      await zed.agent.close();

      // Same profile on the next start: nothing sent.
      await first.close();
      const second = startAlice(n.dev, config, recording("mention"));
      await second.ready;
      await waitFor(() => events(second.logger, "profile.unchanged").length === 1, "unchanged on restart");
      expect(events(second.logger, "profile.published")).toEqual([]);
      await second.close();

      // A changed description: published again, and the server serves the new text.
      config.identities.alice!.profile = { publish: true, description: "Now also waters the plants.", tags: ["tea"] };
      const third = startAlice(n.dev, config, recording("mention"));
      await third.ready;
      await waitFor(() => events(third.logger, "profile.published").length === 1, "republish after a change");
      expect(parseAgentMd(n.dev.net.agentMd.get(AGENTS.alice.aid)!).description).toBe("Now also waters the plants.");
    } finally {
      await n.close();
    }
  });

  it("stopped while its upload is being answered: close resolves after the publish and its state write, nothing lands after", async () => {
    const n = await network([]);
    try {
      identityOf.set(n.dev, await n.dev.identity(AGENTS.alice.aid));
      const config = lobbyConfig({ stateDir: n.stateDir, agents: ["alice"], lobby: FAST });
      let alice: RecordedIdentity | undefined;
      let closing: Promise<void> | undefined;
      let sent = false;
      let stopped!: () => void;
      const stopCalled = new Promise<void>((resolve) => (stopped = resolve));
      // The real profile host, whose answer to the upload was already on its way when the identity
      // was stopped: the stop begins as the upload is sent, and the answer arrives 200 ms later
      // whatever the abort (a response in flight). Then comes the state write that records it.
      const profileFetch: typeof n.dev.profileFetch = async (url, init) => {
        if (init.method !== "POST" || closing !== undefined || sent) return n.dev.profileFetch(url, init);
        sent = true;
        const { signal: _cut, ...uncut } = init;
        const answer = n.dev.profileFetch(url, uncut);
        queueMicrotask(() => {
          closing = alice!.close();
          stopped();
        });
        const res = await answer;
        await new Promise((resolve) => setTimeout(resolve, 200));
        return res;
      };
      alice = fx.track(
        startRecorded({ config, identityId: "alice", backend: recording("mention"), logger: createMemoryLogger(), profileFetch, connect: ({ logger: l }) => n.dev.connect(identityOf.get(n.dev)!, l, QUICK) }),
      );
      let publishOver = false;
      void alice.profilePublished.then(() => (publishOver = true));
      await stopCalled;
      await closing;
      // Seen failing before the fix: the identity's close resolved before the answer came, and the
      // state write ran after it (into a state folder a `--fresh` run had removed by then).
      expect(publishOver).toBe(true);
      expect(describePublishedProfile({ stateDir: n.stateDir, identityId: "alice", identity: config.identities.alice! })).toMatch(/^agent\.md published /);
    } finally {
      await n.close();
    }
  });

  it("a profile host that cannot be reached: a warn line, a retry planned, and the identity joins and answers anyway", async () => {
    const n = await network([]);
    try {
      identityOf.set(n.dev, await n.dev.identity(AGENTS.alice.aid));
      const config = lobbyConfig({ stateDir: n.stateDir, agents: ["alice"], lobby: FAST });
      const logger = createMemoryLogger();
      const alice = fx.track(
        startRecorded({
          config,
          identityId: "alice",
          backend: recording("mention"),
          logger,
          profileFetch: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:9")),
          connect: ({ logger: l }) => n.dev.connect(identityOf.get(n.dev)!, l, QUICK),
        }),
      );
      await alice.ready;
      await waitFor(() => events(logger, "profile.publish-failed").length === 1, "the warn line");
      expect(events(logger, "profile.publish-failed")[0]).toMatchObject({ level: "warn", fields: { aid: AGENTS.alice.aid, reason: "network" } });
      const you = await member(n.dev, HUMAN, [GROUP]);
      await you.say("Alice, are you there?");
      await waitFor(() => n.dev.service.history(GROUP).length === 2, "alice's answer");
      expect(n.dev.service.history(GROUP)[1]).toMatchObject({ sender: AGENTS.alice.aid });
      // Not given up: tried again after the first backoff step (2 s, half of it random).
      expect(events(logger, "profile.publish-retry")[0]).toMatchObject({ level: "info", fields: { aid: AGENTS.alice.aid, attempt: 1 } });
      expect(events(logger, "profile.publish-retry")[0]!.fields.retryInMs).toBeGreaterThanOrEqual(1000);
      expect(alice.profileState).toBe("pending");
      await you.conn.close();
      await you.agent.close();
    } finally {
      await n.close();
    }
  });

  it("a stranger agent is known as an agent from its profile with no config: the loop guard stops the agent-only exchange; a self-declared human does not reset it, a configured person does", async () => {
    const n = await network([DAVE]);
    try {
      identityOf.set(n.dev, await n.dev.identity(AGENTS.alice.aid));
      const dave = await member(n.dev, DAVE, [GROUP]);
      await dave.publish("human");
      // No `agents`, and `humans` names only the lobby's own human: zed and dave are strangers.
      const config = lobbyConfig({ stateDir: n.stateDir, agents: ["alice"], lobby: FAST });
      expect(config.agents).toEqual([]);
      const backend = recording("always");
      const alice = startAlice(n.dev, config, backend);
      await alice.ready;
      // dave's agent.md says human: the service does not pass that on as a person.
      expect(alice.memberTypes.typeOf(DAVE)).toEqual({ type: "unknown", source: "none" });
      // The same answer is the group's member list: `dave: …` addresses dave before dave speaks.
      const memberKeys = () => (alice.memberTypes as MemberDirectory).memberKeysOf(GROUP);
      expect(memberKeys()).toContain("dave");
      expect(memberKeys()).not.toContain("zed");

      // zed publishes `type: agent`, then joins by the invite code: member_joined → get_members again.
      const zed = await member(n.dev, ZED, [GROUP], { publish: "agent", joinCode: "lobby-code" });
      await waitFor(() => alice.memberTypes.typeOf(ZED).type === "agent", "zed known as an agent");
      expect(alice.memberTypes.typeOf(ZED)).toEqual({ type: "agent", source: "service" });
      expect(memberKeys()).toContain("zed");

      const fromAlice = () => n.dev.service.history(GROUP).filter((m) => m.sender === AGENTS.alice.aid).length;
      await zed.say("I think the kettle is broken.");
      await waitFor(() => fromAlice() === 1, "reply 1");
      await zed.say("Should we order a new kettle today?");
      await waitFor(() => fromAlice() === 2, "reply 2");
      await zed.say("Which brand would you pick for it?");
      await waitFor(() => alice.decisions.some((d) => reasonOf(d.outcome) === "bot-loop-guard"), "the loop guard");
      await settle(n.dev.service, [alice]);
      expect(fromAlice()).toBe(2);
      expect(backend.requests.at(-1)!.systemPrompt).toContain(`${ZED}: agent`);

      // A stranger whose own profile says human speaks: alice reads his agent.md, notes the claim,
      // and the chain holds — a bot could say the same.
      const guarded = () => alice.decisions.filter((d) => reasonOf(d.outcome) === "bot-loop-guard").length;
      const before = guarded();
      await dave.say("Dave here, what did you two decide?");
      await waitFor(() => guarded() > before, "the loop guard holds for dave");
      expect(alice.memberTypes.typeOf(DAVE)).toEqual({ type: "unknown", source: "profile", claim: "human" });
      expect(fromAlice()).toBe(2);
      // The lobby's person (configured, and human in the group's definition) resets it. Put to
      // alice by name: a question to the room would first be left to people (orphans).
      const you = await member(n.dev, HUMAN, [GROUP]);
      await you.say("Alice, what did you two decide?");
      await waitFor(() => fromAlice() === 3, "reply to the person");
      expect(backend.requests.at(-1)!.systemPrompt).toContain(`${HUMAN}: human`);
      await Promise.all([zed.conn.close(), dave.conn.close(), you.conn.close()]);
      await Promise.all([zed.agent.close(), dave.agent.close(), you.agent.close()]);
    } finally {
      await n.close();
    }
  });

  it("a sender nobody reported yet: its own agent.md is fetched when it speaks", async () => {
    const n = await network([ERIN]);
    try {
      identityOf.set(n.dev, await n.dev.identity(AGENTS.alice.aid));
      const config = lobbyConfig({ stateDir: n.stateDir, agents: ["alice"], lobby: FAST });
      const alice = startAlice(n.dev, config, recording("mention"));
      await alice.ready;
      expect(alice.memberTypes.typeOf(ERIN)).toEqual({ type: "unknown", source: "none" });
      // erin publishes after alice read the members, and no join announces it.
      const erin = await member(n.dev, ERIN, [GROUP]);
      await erin.publish("agent");
      await erin.say("Morning all.");
      await waitFor(() => alice.memberTypes.typeOf(ERIN).type === "agent", "erin's profile fetched");
      expect(alice.memberTypes.typeOf(ERIN)).toEqual({ type: "agent", source: "profile" });
      await erin.conn.close();
      await erin.agent.close();
    } finally {
      await n.close();
    }
  });

  it("a mention carried only in the message metadata is a mention", async () => {
    const n = await network([ZED]);
    try {
      identityOf.set(n.dev, await n.dev.identity(AGENTS.alice.aid));
      const config = lobbyConfig({ stateDir: n.stateDir, agents: ["alice"], lobby: FAST });
      const backend = recording("mention");
      const alice = startAlice(n.dev, config, backend);
      await alice.ready;
      const zed = await member(n.dev, ZED, [GROUP]);
      await zed.say("Any news on the build?");
      await waitFor(() => alice.decisions.length === 1, "the unaddressed question's decision");
      await settle(n.dev.service, [alice]);
      expect(n.dev.service.history(GROUP).map((m) => m.sender)).toEqual([ZED]);

      await zed.say("Any news on the deploy?", { group_meta: { msg_type: "text", mentions: [AGENTS.alice.aid] } });
      // Zed's type is unknown (no profile): not known as a person, its mention waits the agent gap (5 s) first.
      await waitFor(() => n.dev.service.history(GROUP).length === 3, "alice's answer to the metadata mention", 10_000);
      expect(n.dev.service.history(GROUP)[2]).toMatchObject({ sender: AGENTS.alice.aid });
      expect(backend.requests.at(-1)!.mentionInfo.mentioned).toBe(true);
      expect(backend.requests.at(-1)!.body).toContain("Any news on the deploy?");
      await zed.conn.close();
      await zed.agent.close();
    } finally {
      await n.close();
    }
  });
});
