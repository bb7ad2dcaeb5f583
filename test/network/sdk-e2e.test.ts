// The compatibility check end to end, with an SDK-shaped client (hand-written from the
// official SDK's source, no SDK code): against the local development network over TLS it creates
// an identity, signs in, opens the session with group.D, joins the lobby by its printed link,
// registers online, sends "Alice, can you hear me?", pulls — and Alice (the real runtime on a
// scripted model, since no hosted LLM exists here) has answered. Real sockets, crypto and files.
import { describe, expect, it, vi } from "vitest";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, lobbyConfig, startRecorded, useRuntimeFixture } from "../support/runtime-harness.ts";
import { connectSdkMember, type SdkMember } from "../support/sdk-member.ts";
import { loopbackLookup } from "./support.ts";

const fx = useRuntimeFixture("sdk-e2e");

describe("an SDK-shaped client joins the lobby by link and Alice answers (TLS, local network, real runtime)", () => {
  it("identity → sign-ins → session with group.D → use_invite_code → register_online → send_message → pull_messages shows Alice's answer", async () => {
    const stateDir = fx.stateDir();
    const dev = await startDevNetwork({ stateDir, tls: true, groups: { [GROUP]: { members: { [AGENTS.alice.aid]: {} }, inviteCode: "lobby-code" } }, rateLimit: null });
    let member: SdkMember | undefined;
    try {
      const config = lobbyConfig({ stateDir, agents: ["alice"], lobby: { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET } });
      const aliceIdentity = await dev.identity(AGENTS.alice.aid);
      const alice = fx.track(
        startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "mention", replyText: "Loud and clear." }), connect: ({ logger }) => dev.connect(aliceIdentity, logger) }),
      );
      await alice.ready;

      const link = dev.lines.find((l) => l.startsWith(`join ${GROUP}: `))!.slice(`join ${GROUP}: `.length);
      const joinUrl = new URL(link);
      expect(joinUrl.host).toBe("group.acp.local");
      const groupId = joinUrl.pathname.slice(1);
      const code = joinUrl.searchParams.get("code")!;

      // What `new AgentCP("acp.local:<port>")` builds; the printed CA is trusted, acp3.acp.local → 127.0.0.1.
      const aid = "visitor.acp.local";
      member = await connectSdkMember({ base: `https://acp3.${dev.net.sdkDomain}`, aid, caPem: dev.net.caPem, lookup: loopbackLookup, groupService: "group.acp.local" });
      expect(Number(member.invited.data.status_code)).toBe(200);
      const groupRequest = member.groupRequest;
      expect((await groupRequest("use_invite_code", { group_id: groupId, params: { code } })).code).toBe(0);
      expect((await groupRequest("register_online")).code).toBe(0);
      expect((await groupRequest("send_message", { group_id: groupId, params: { content: "Alice, can you hear me?" } })).code).toBe(0);

      const answered = async () => {
        const pulled = await groupRequest("pull_messages", { group_id: groupId, params: { after_msg_id: 0, limit: 50 } });
        const messages = (pulled.data?.messages ?? []) as Array<{ msg_id: number; sender: string; content: string }>;
        return messages.some((m) => m.sender === AGENTS.alice.aid) ? messages : undefined;
      };
      // The member pulls, as the SDK's client would, until Alice's answer is in the history.
      const messages = await vi.waitFor(
        async () => {
          const m = await answered();
          if (m === undefined) throw new Error("Alice did not answer within 8 s");
          return m;
        },
        { timeout: 8000, interval: 50 },
      );
      expect(messages.map((m) => [m.sender, m.content])).toEqual([
        [aid, "Alice, can you hear me?"],
        [AGENTS.alice.aid, "Loud and clear."],
      ]);
      const last = messages.at(-1)!.msg_id;
      expect((await groupRequest("ack_messages", { group_id: groupId, params: { msg_id: last } })).code).toBe(0);
    } finally {
      member?.close();
      await Promise.all(fx.running.map((r) => r.close()));
      await dev.close();
    }
  });
});
