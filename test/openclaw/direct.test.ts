// Direct messages of an identity run by the OpenClaw channel adapters (src/openclaw/channel.ts) with
// the real runtime, over real sockets on the local network (TLS), people on the SDK's sequence. The
// host's agent and pairing store are stand-ins (the host itself runs in `npm run test:host`): they
// record every call and behave as openclaw@2026.9.6's do (one pairing reply per code, the approve
// command writes the allow-from store, its reply text literally).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAcpGroupChannelAdapters, resolveAcpGroupAccount, type AcpGroupStatus } from "../../src/openclaw/channel.ts";
import { createOpenClawBackend, type OpenClawChannelRuntime, type OpenClawInboundContext } from "../../src/openclaw/host-calls.ts";
import { createHostDirectPairing, OPENCLAW_DEFAULT_DM_POLICY, type OpenClawPairingRuntime } from "../../src/openclaw/pairing.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { startIdentity, type RunningIdentity } from "../../src/runtime/identity.ts";
import { loopbackLookup } from "../network/support.ts";
import { useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";
import { connectSdkMember, type SdkMember } from "../support/sdk-member.ts";

const fx = useRuntimeFixture<RunningIdentity>("openclaw-direct");
const DAVE = "dave.acp.local";
const OWNER = "owner.acp.local";
const STRANGER = "stranger.acp.local";

/** The host's pairing store and reply, as 2026.9.6 has them (src/pairing/pairing-messages.ts). */
function hostPairing() {
  const pending = new Map<string, { id: string; accountId: string }>();
  const allowFrom = new Map<string, string[]>();
  let next = 0;
  const runtime: OpenClawPairingRuntime = {
    buildPairingReply: ({ channel, idLine, code }) =>
      ["OpenClaw: access not configured.", "", idLine, "Pairing code:", "```", code, "```", "", "Ask the bot owner to approve with:", "```", `openclaw pairing approve ${channel} ${code}`, "```"].join("\n"),
    readAllowFromStore: async ({ accountId }) => [...(allowFrom.get(accountId) ?? [])],
    upsertPairingRequest: async ({ id, accountId }) => {
      for (const [code, r] of pending) if (r.id === id && r.accountId === accountId) return { code, created: false };
      const code = `PAIR${++next}X`;
      pending.set(code, { id, accountId });
      return { code, created: true };
    },
  };
  return {
    runtime,
    /** `openclaw pairing approve acp-group <code>`. */
    approve(code: string) {
      const r = pending.get(code);
      if (!r) throw new Error(`no pending request ${code}`);
      pending.delete(code);
      allowFrom.set(r.accountId, [...(allowFrom.get(r.accountId) ?? []), r.id]);
    },
  };
}

/** The host's agent: records each turn's route and context and answers per peer. */
function hostAgent(answer: (ctx: OpenClawInboundContext) => string) {
  const turns: Array<{ peer: unknown; ctx: OpenClawInboundContext }> = [];
  let peer: unknown;
  const runtime: OpenClawChannelRuntime<object, OpenClawInboundContext> = {
    routing: {
      resolveAgentRoute: (input) => {
        peer = input.peer;
        return { agentId: "main", accountId: "dave", sessionKey: input.peer?.kind === "direct" ? "agent:main:main" : `agent:main:acp-group:group:${input.peer?.id}` };
      },
    },
    session: { resolveStorePath: () => "/host/sessions.json", recordInboundSession: async () => undefined },
    reply: {
      finalizeInboundContext: (ctx) => ctx,
      dispatchReplyWithBufferedBlockDispatcher: async ({ ctx, dispatcherOptions }) => {
        turns.push({ peer, ctx });
        await dispatcherOptions.deliver({ text: answer(ctx) }, { kind: "final" });
        return { queuedFinal: true, counts: { tool: 0, block: 0, final: 1 } };
      },
    },
  };
  return { runtime, turns };
}

async function setUp() {
  const stateDir = fx.stateDir();
  const dev = await startDevNetwork({ stateDir, tls: true, groups: { lobby: { members: { [DAVE]: {} } } }, rateLimit: null });
  const identity = await dev.identity(DAVE);
  // No dmPolicy: the host's default applies. Debug: a sender's refusals after the first of the hour are logged there.
  const cfg = { channels: { "acp-group": { logLevel: "debug" as const, stateDir: join(stateDir, "dave"), identities: { dave: { aid: DAVE, owner: OWNER } }, groups: { lobby: {} } } } };
  const pairing = hostPairing();
  const agent = hostAgent((ctx) => (ctx.SenderId === OWNER ? "Loud and clear." : "Hello, welcome."));
  const lines: string[] = [];
  const sink = { info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l), debug: (l: string) => lines.push(l) };
  const adapters = createAcpGroupChannelAdapters<typeof cfg>({
    startIdentity: (p) => fx.track(startIdentity({ ...p, connect: ({ logger }) => dev.connect(identity, logger), connection: { heartbeatMs: 0 } })),
    getPluginRuntime: () => undefined,
    createBackend: ({ cfg: c, accountId, identity: id, logger }) => createOpenClawBackend({ runtime: agent.runtime, cfg: c, accountId, owner: id.owner, logger }),
    directOptions: ({ logger }) => ({ defaultPolicy: OPENCLAW_DEFAULT_DM_POLICY, pairing: createHostDirectPairing({ runtime: () => pairing.runtime, logger }) }),
  });
  const abort = new AbortController();
  let status: AcpGroupStatus = { accountId: "dave" };
  const running = adapters.gateway.startAccount({
    cfg,
    accountId: "dave",
    account: resolveAcpGroupAccount(cfg, "dave"),
    abortSignal: abort.signal,
    log: sink,
    getStatus: () => status,
    setStatus: (next) => (status = next),
  });
  await waitFor(() => status.connected === true, "the identity signed in", 10_000);
  const members: SdkMember[] = [];
  const person = async (aid: string) => {
    const m = await connectSdkMember({ base: `https://acp3.${dev.net.sdkDomain}`, aid, caPem: dev.net.caPem, lookup: loopbackLookup, groupService: DAVE });
    members.push(m);
    return m;
  };
  const close = async () => {
    abort.abort();
    await running;
    for (const m of members) m.close();
    await dev.close();
  };
  return { adapters, agent, pairing, lines, person, close };
}

describe("direct messages inside OpenClaw (the channel adapters, the real runtime, TLS sockets)", () => {
  it("the owner's DM is a direct turn of the host's agent, authorised as the owner's, answered on the owner's session", async () => {
    const s = await setUp();
    try {
      const owner = await s.person(OWNER);
      owner.say("Dave, can you hear me?");
      await waitFor(() => owner.answers().length === 1, "the answer to the owner", 10_000);
      expect(owner.answers()).toEqual(["Loud and clear."]);
      expect(s.agent.turns).toHaveLength(1);
      const { peer, ctx } = s.agent.turns[0]!;
      expect(peer).toEqual({ kind: "direct", id: OWNER });
      expect(ctx).toMatchObject({
        ChatType: "direct",
        SenderId: OWNER,
        From: `acp-group:${OWNER}`,
        To: `acp-group:${OWNER}`,
        CommandBody: "Dave, can you hear me?",
        CommandAuthorized: true,
        OwnerAllowFrom: [OWNER],
        WasMentioned: true,
      });
      expect(ctx.Body).toContain("Dave, can you hear me?");
      expect(ctx.GroupSystemPrompt).toContain("## Direct Conversation Context");
    } finally {
      await s.close();
    }
  }, 60_000);

  it("a stranger gets the host's pairing reply once, never the agent; after `openclaw pairing approve` they are answered, not as the owner", async () => {
    const s = await setUp();
    try {
      const stranger = await s.person(STRANGER);
      stranger.say("Hi, who are you?");
      await waitFor(() => stranger.answers().length === 1, "the pairing reply", 10_000);
      const reply = stranger.answers()[0]!;
      expect(reply).toBe(
        `OpenClaw: access not configured. — Your ACP agent id: ${STRANGER} — Pairing code: PAIR1X — Ask the bot owner to approve with: openclaw pairing approve acp-group PAIR1X`,
      );
      // The same request again: refused (the log says why), and the code is not sent twice.
      stranger.say("Hello? Anyone?");
      await waitFor(() => s.lines.filter((l) => l.startsWith("direct.refused")).length === 2, "the second refusal", 10_000);
      expect(s.lines.filter((l) => l.startsWith("direct.refused")).every((l) => l.includes(`"peer":"${STRANGER}"`) && l.includes(`"reason":"pairing-required"`))).toBe(true);
      expect(stranger.answers()).toHaveLength(1);
      expect(s.agent.turns).toHaveLength(0);

      s.pairing.approve("PAIR1X");
      stranger.say("I was approved, can we talk now?");
      await waitFor(() => stranger.answers().length === 2, "the answer after approval", 10_000);
      expect(stranger.answers()[1]).toBe("Hello, welcome.");
      expect(s.agent.turns.map((t) => t.peer)).toEqual([{ kind: "direct", id: STRANGER }]);
      expect(s.agent.turns[0]!.ctx).toMatchObject({ ChatType: "direct", SenderId: STRANGER, CommandAuthorized: false, OwnerAllowFrom: [OWNER] });
      // Only what came after the approval reached the model.
      expect(s.agent.turns[0]!.ctx.Body).not.toContain("who are you");
    } finally {
      await s.close();
    }
  }, 60_000);

  it("the host's send to `acp-group:<aid>` opens a session with that aid, or reuses the live one", async () => {
    const s = await setUp();
    try {
      const owner = await s.person(OWNER);
      const sent = await s.adapters.outbound.sendText({ to: `acp-group:${OWNER}`, text: "Reminder: standup at ten.", accountId: "dave" });
      expect(sent.channel).toBe("acp-group");
      await waitFor(() => owner.answersAnywhere().length === 1, "the DM from the host", 10_000);
      expect(owner.answersAnywhere()).toEqual([{ sessionId: sent.messageId, text: "Reminder: standup at ten." }]);
      const again = await s.adapters.outbound.sendText({ to: `user:${OWNER}`, text: "And bring the notes.", accountId: "dave" });
      expect(again.messageId).toBe(sent.messageId);
      await waitFor(() => owner.answersAnywhere().length === 2, "the second DM", 10_000);
      // Neither went through the agent: the host wrote them.
      expect(s.agent.turns).toHaveLength(0);
    } finally {
      await s.close();
    }
  }, 60_000);
});
