// Member types as the network gives them, over real sockets on the local network: an evol agent
// (its agent.md says `type: openclaw`) is an agent to ours, from get_members' `agent_type`; a
// person who joins through `acp-group chat` is a person to the agents without anyone editing
// `humans` — when the network's operator allows it (`peopleFromChat`): the decision is the
// operator's, never the member's own word. The model is the scripted back-end (no LLM here).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatCommand } from "../../src/cli/chat.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { startDevNetwork, type DevNetwork } from "../../src/runtime/dev-network.ts";
import { publishAgentMd } from "../../src/profile/publish.ts";
import { createGroupConnection } from "../../src/transport/connection.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, lobbyConfig, startRecorded, useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("member-kinds");
const FAST = { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };
const QUICK = { backoff: { baseMs: 20, maxMs: 100 }, stableMs: 0 };
const DANA = "dana.acp.local";
const EVOL = "evol.acp.local";

async function lobby(peopleFromChat: boolean): Promise<{ dev: DevNetwork; stateDir: string }> {
  const stateDir = fx.stateDir();
  const dev = await startDevNetwork({ stateDir, groups: { [GROUP]: { members: { [AGENTS.alice.aid]: {} }, inviteCode: "lobby-code" } }, rateLimit: null, peopleFromChat });
  fx.server = dev.service;
  return { dev, stateDir };
}

async function startAlice(dev: DevNetwork, stateDir: string) {
  const identity = await dev.identity(AGENTS.alice.aid);
  // Nobody told alice that dana is a person.
  const config = lobbyConfig({ stateDir, agents: ["alice"], lobby: FAST });
  expect(config.humans).not.toContain(DANA);
  const alice = fx.track(
    startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "mention" }), profileFetch: dev.profileFetch, connect: ({ logger }) => dev.connect(identity, logger, QUICK) }),
  );
  await alice.ready;
  return alice;
}

/** `acp-group chat <link> --identity dana --say …` in process, as a person runs it. */
async function chatAsDana(dev: DevNetwork, stateDir: string, say: string): Promise<string[]> {
  await dev.identity(DANA);
  const config = join(stateDir, "dana.json");
  writeFileSync(config, JSON.stringify({ stateDir: join(stateDir, "local-network"), identities: { dana: { aid: DANA, accessPointUrl: dev.net.localUrl } } }));
  const out: string[] = [];
  const code = await chatCommand([dev.service.joinLink(GROUP), "--identity", "dana", "--config", config, "--say", say, "--no-stdin", "--duration-ms", "1500"], { out: (s) => void out.push(s), err: (s) => void out.push(s) });
  expect(code).toBe(0);
  return out;
}

describe("member types as the network gives them", () => {
  it("a person joining through `acp-group chat` is a person to the agents when the operator allows it (peopleFromChat): get_members says agent_type human", async () => {
    const { dev, stateDir } = await lobby(true);
    try {
      const alice = await startAlice(dev, stateDir);
      expect(alice.memberTypes.typeOf(DANA)).toEqual({ type: "unknown", source: "none" });
      await chatAsDana(dev, stateDir, "Alice, are you there?");
      // The join's event made alice read the members again; the service says dana is a person.
      await waitFor(() => alice.memberTypes.typeOf(DANA).type === "human", "dana known as a person");
      expect(alice.memberTypes.typeOf(DANA)).toEqual({ type: "human", source: "service" });
      await waitFor(() => dev.service.history(GROUP).some((m) => m.sender === AGENTS.alice.aid), "alice answers dana");
    } finally {
      await dev.close();
    }
  }, 30_000);

  it("without the operator's leave the same person stays unknown: the chat client's own word makes nobody a person", async () => {
    const { dev, stateDir } = await lobby(false);
    try {
      const alice = await startAlice(dev, stateDir);
      await chatAsDana(dev, stateDir, "hello");
      await waitFor(() => dev.service.members(GROUP).includes(DANA), "dana joined");
      // Alice re-read the members after the join (she knows dana is one) — and dana's type is still unknown.
      await waitFor(() => (alice.memberTypes as unknown as { memberKeysOf(g: string): ReadonlySet<string> }).memberKeysOf(GROUP).has("dana"), "the members read again");
      expect(alice.memberTypes.typeOf(DANA)).toEqual({ type: "unknown", source: "none" });
    } finally {
      await dev.close();
    }
  }, 30_000);

  it("an evol agent (agent.md `type: openclaw`) is an agent: get_members carries agent_type openclaw, and alice reads it so", async () => {
    const { dev, stateDir } = await lobby(true);
    try {
      const alice = await startAlice(dev, stateDir);
      const evol = dev.connect(await dev.identity(EVOL), undefined, QUICK);
      await evol.ready;
      const published = await publishAgentMd({ aid: EVOL, text: `---\naid: ${EVOL}\nname: Evol\ntype: openclaw\n---\n# Evol\n`, token: evol.token()!, fetch: dev.profileFetch });
      expect(published).toMatchObject({ ok: true });
      const joiner = createGroupConnection({ channel: evol.channel(dev.service.aid), aid: EVOL, groups: [], getCursor: () => 0, onMessages: () => {} });
      await joiner.start();
      expect(await joiner.request("use_invite_code", { groupId: GROUP, params: { code: "lobby-code" } })).toMatchObject({ status: "joined" });
      const members = (await joiner.request("get_members", { groupId: GROUP })) as { members: Array<Record<string, unknown>> };
      expect(members.members.find((m) => m.agent_id === EVOL)).toEqual({ agent_id: EVOL, role: "member", type: "agent", agent_type: "openclaw", human: false });
      await waitFor(() => alice.memberTypes.typeOf(EVOL).type === "agent", "evol known as an agent");
      expect(alice.memberTypes.typeOf(EVOL)).toEqual({ type: "agent", source: "service" });
      await joiner.close();
      await evol.close();
    } finally {
      await dev.close();
    }
  }, 30_000);
});
