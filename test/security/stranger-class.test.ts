// Forty identities spend no more than one class of strangers. An open group on the local network;
// alice (ours) with the default allowances; 40 outsiders, each with an aid of its own, join with
// the invite link and mention alice once, one after another. Strangers together may use
// `strangerShare` (0.5) of the addressed 5-minute window — 15 of its 30 calls — however many aids
// they hold, so erin (a member the config names) is answered after them. As in the attack, each
// outsider signs in with a person's client and the operator counts such sign-ins as people
// (`peopleFromChat`), so the group service says each is a person: neither the agent gap nor the
// loop guard holds them back, only the allowance. Real sockets, real keys on the local network;
// the model is the scripted stand-in (no LLM here).
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import type { NetworkAgent } from "../../src/network/index.ts";
import { PERSON_CLIENT_INFO } from "../../src/wire/client-info.ts";
import { reasonOf } from "../support/outcome.ts";
import { AGENTS, GROUP, startRecorded, useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("stranger-class");
const ERIN = "erin.acp.local";
const QUICK = { backoff: { baseMs: 20, maxMs: 100 }, stableMs: 0 };
const WORDS = ["amber", "birch", "cedar", "dune", "ember", "fjord", "grove", "heath", "inlet", "juniper", "kelp", "larch", "moss", "nettle", "oak"];

describe("strangers as a class on the local network (issue 30.2)", () => {
  it("40 outsiders' aids, one mention each: 15 answered, the rest refused as strangers-over-share; erin, a known member, is answered", async () => {
    const stateDir = fx.stateDir();
    const dev = await startDevNetwork({ stateDir, groups: { [GROUP]: { members: { [ERIN]: { human: true }, [AGENTS.alice.aid]: {} }, inviteCode: "open-door" } }, rateLimit: null, peopleFromChat: true });
    fx.server = dev.service;
    // Default allowances; only the waits are short, so the run takes seconds of real time.
    const config = parseChannelConfig({
      stateDir,
      humans: [ERIN],
      identities: { alice: { ...AGENTS.alice } },
      groups: { [GROUP]: { bufferGateMs: 50, bufferGateMaxWaitMs: 200, cooldownMs: 0, delay: { enabled: false } } },
    });
    let n = 0;
    const backend = createScriptedBackend({ mode: "always", replyText: () => `${WORDS[++n % 15]} ${WORDS[(n * 7) % 15]} ${WORDS[(n * 11) % 15]} ${n}.` });
    const identity = await dev.identity(AGENTS.alice.aid);
    const alice = fx.track(startRecorded({ config, identityId: "alice", backend, connect: ({ logger }) => dev.connect(identity, logger, QUICK) }));
    await alice.ready;

    const people: Array<{ agent: NetworkAgent; conn: GroupConnection }> = [];
    const connect = async (aid: string, invite: boolean): Promise<GroupConnection> => {
      const agent = dev.connect(await dev.identity(aid), undefined, { ...QUICK, ...(invite ? { clientInfo: PERSON_CLIENT_INFO } : {}) });
      await agent.ready;
      if (invite) {
        const joiner = createGroupConnection({ channel: agent.channel(dev.service.aid), aid, groups: [], getCursor: () => 0, onMessages: () => {} });
        await joiner.start();
        expect(await joiner.request("use_invite_code", { groupId: GROUP, params: { code: "open-door" } })).toMatchObject({ status: "joined" });
        await joiner.close();
      }
      const conn = createGroupConnection({ channel: agent.channel(dev.service.aid), aid, groups: [GROUP], getCursor: () => 0, onMessages: () => {} });
      await conn.start();
      people.push({ agent, conn });
      return conn;
    };
    const settled = (msgId: string) => alice.decisions.find((d) => d.messageIds.includes(msgId));
    const mention = async (conn: GroupConnection, content: string) => {
      const { msgId } = await conn.sendMessage({ groupId: GROUP, content });
      await waitFor(() => settled(msgId) !== undefined, `alice settled ${msgId}`, 20_000);
      return settled(msgId)!;
    };
    try {
      const erin = await connect(ERIN, false);
      const outcomes: Array<string | null> = [];
      for (let i = 1; i <= 40; i++) {
        const aid = `visitor${String(i).padStart(2, "0")}.acp.local`;
        const guest = await connect(aid, true);
        // alice reads the members again when one joins: the service's word on the newcomer.
        await waitFor(() => alice.memberTypes.typeOf(aid).type === "human", `alice knows ${aid} is a person`, 20_000);
        const d = await mention(guest, `@alice a question about ${WORDS[i % 15]} number ${i}`);
        outcomes.push(d.outcome.kind === "sent" ? null : (reasonOf(d.outcome) ?? d.outcome.kind));
      }
      expect(outcomes.slice(0, 15)).toEqual(Array(15).fill(null));
      expect(outcomes.slice(15)).toEqual(Array(25).fill("strangers-over-share"));
      const e = await mention(erin, "@alice is the release still on for today?");
      expect(e.outcome.kind).toBe("sent");
      // Sixteen model calls: fifteen strangers and erin; the 25 refused cost nothing.
      expect(backend.calls).toHaveLength(16);
    } finally {
      for (const p of people) {
        await p.conn.close();
        await p.agent.close();
      }
      await alice.close();
      await dev.close();
    }
  }, 120_000);
});
