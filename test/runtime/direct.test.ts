// An identity's direct messages through the real runtime, over real sockets on the local network
// (TLS), a person on the SDK's sequence: the DM and a group line never mix; a DM the agent was
// answering when it stopped is answered once after the restart, from its state file; a DM to an
// agent that is offline is refused by the network, and reaches it once it is back. The model is
// scripted (no hosted LLM exists here).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
import { loopbackLookup } from "../network/support.ts";
import { GENEROUS_BUDGET, startRecorded, useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";
import { connectSdkMember, type SdkMember } from "../support/sdk-member.ts";

const fx = useRuntimeFixture("runtime-direct");
const DAVE = "dave.acp.local";
const OWNER = "owner.acp.local";
const HUMAN = "hank.acp.local";

async function network() {
  const stateDir = fx.stateDir();
  const dev = await startDevNetwork({ stateDir, tls: true, groups: { lobby: { members: { [DAVE]: {}, [HUMAN]: { human: true } } } }, rateLimit: null });
  const config = parseChannelConfig({
    stateDir: join(stateDir, "dave"),
    humans: [HUMAN],
    identities: { dave: { aid: DAVE, owner: OWNER } },
    groups: { lobby: { bufferGateMs: 50, bufferGateMaxWaitMs: 200, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET } },
  });
  const identity = await dev.identity(DAVE);
  const members: SdkMember[] = [];
  const person = async (aid: string) => {
    const m = await connectSdkMember({ base: `https://acp3.${dev.net.sdkDomain}`, aid, caPem: dev.net.caPem, lookup: loopbackLookup, groupService: DAVE });
    members.push(m);
    return m;
  };
  const close = async () => {
    for (const m of members) m.close();
    await dev.close();
  };
  return { dev, config, identity, person, close, stateDir };
}

describe("direct messages in the runtime (real sockets, TLS, the local network)", () => {
  it("a DM and a group line at the same time: each answered in its own place, neither in the other's prompt", async () => {
    const n = await network();
    try {
      // Answers that repeat nobody (the group's check against others' lines would drop an echo).
      const backend = createScriptedBackend({ mode: "always", replyText: (r) => (r.conversation?.kind === "direct" ? "Noted, I'll keep it to myself." : "Standup at ten, then the release.") });
      const dave = fx.track(startRecorded({ config: n.config, identityId: "dave", backend, connect: ({ logger }) => n.dev.connect(n.identity, logger) }));
      await dave.ready;
      const owner = await n.person(OWNER);
      owner.say("private: the door code is 4521");
      n.dev.service.post({ groupId: "lobby", sender: HUMAN, content: "Dave, what's the plan for today?" });
      await waitFor(() => owner.answers().length === 1 && n.dev.service.history("lobby").length === 2, "both answered");
      expect(owner.answers()).toEqual(["Noted, I'll keep it to myself."]);
      expect(n.dev.service.history("lobby").map((m) => m.content)).toEqual(["Dave, what's the plan for today?", "Standup at ten, then the release."]);
      const byKind = (kind: string) => backend.calls.filter((c) => (c.conversation?.kind ?? "group") === kind);
      expect(byKind("direct").map((c) => c.body)).toEqual([expect.stringContaining("owner.acp.local: private: the door code is 4521")]);
      expect(byKind("group").every((c) => !c.body.includes("4521") && !c.systemPrompt.includes("4521"))).toBe(true);
      expect(byKind("direct").every((c) => !c.body.includes("plan for today"))).toBe(true);
      expect(byKind("direct")[0]!.systemPrompt).toContain("## Direct Conversation Context");
      expect(byKind("direct")[0]!.systemPrompt).toContain("peer_type=human, your owner");
    } finally {
      await n.close();
    }
  }, 60_000);

  it("stopped while answering a DM: the state file keeps it, and after the restart it is answered once", async () => {
    const n = await network();
    try {
      const logger = createMemoryLogger();
      // The first run's model never answers: the agent stops with the DM in flight.
      const stuck = createScriptedBackend({ mode: "always", latencyMs: 3600_000 });
      const first = startRecorded({ config: n.config, identityId: "dave", logger, backend: stuck, connect: ({ logger: l }) => n.dev.connect(n.identity, l) });
      await first.ready;
      const owner = await n.person(OWNER);
      owner.say("Dave, are you still there?");
      await waitFor(() => stuck.calls.length === 1, "the first run's model call");
      await first.close();
      const file = join(n.config.stateDir!, encodeSafeName("dave"), "dm.direct.json");
      const saved = JSON.parse(readFileSync(file, "utf8")) as { data: { peers: Array<{ peer: string; pending: Array<{ text: string }> }> } };
      expect(saved.data.peers.map((p) => [p.peer, p.pending.map((x) => x.text)])).toEqual([[OWNER, ["Dave, are you still there?"]]]);

      const quick = createScriptedBackend({ mode: "always", replyText: "Yes — back now." });
      const second = fx.track(startRecorded({ config: n.config, identityId: "dave", backend: quick, connect: ({ logger: l }) => n.dev.connect(n.identity, l) }));
      await second.ready;
      // Its session with the owner ended with the first run's socket: the answer comes on a new one.
      await waitFor(() => owner.answersAnywhere().length === 1, "the answer after the restart");
      expect(owner.answersAnywhere()).toEqual([{ sessionId: expect.not.stringMatching(owner.sessionId), text: "Yes — back now." }]);
      expect(quick.calls).toHaveLength(1);
      await second.close();
      const after = JSON.parse(readFileSync(file, "utf8")) as { data: { peers: Array<{ pending: unknown[]; seen: string[] }> } };
      expect(after.data.peers[0]!.pending).toEqual([]);
      expect(after.data.peers[0]!.seen).toHaveLength(1);
    } finally {
      await n.close();
    }
  }, 60_000);

  it("the agent's connection drops mid-conversation: the owner's next line in that session comes back as an error frame (receiver is not in the session), and a new session reaches the agent once it is back", async () => {
    const n = await network();
    try {
      const first = startRecorded({ config: n.config, identityId: "dave", backend: createScriptedBackend({ mode: "always", replyText: "Hello." }), connect: ({ logger }) => n.dev.connect(n.identity, logger) });
      await first.ready;
      const owner = await n.person(OWNER);
      owner.say("hi");
      await waitFor(() => owner.answers().length === 1, "the first answer");
      await first.close();
      owner.say("are you still there?");
      const refused = await waitFor(() => owner.frames.find((f) => f.cmd === "error"), "the service's error frame");
      expect(refused.data).toMatchObject({ status_code: 400, message: "receiver is not in the session" });

      const backend = createScriptedBackend({ mode: "always", replyText: "Back now." });
      const second = fx.track(startRecorded({ config: n.config, identityId: "dave", backend, connect: ({ logger }) => n.dev.connect(n.identity, logger) }));
      await second.ready;
      // The owner's client opens a new session, as an SDK user does when the old one ended.
      const before = owner.sessionId;
      expect((await owner.newSession()).data).toMatchObject({ status_code: 200 });
      expect(owner.sessionId).not.toBe(before);
      owner.say("and now?");
      await waitFor(() => owner.answers().length === 1, "the answer in the new session");
      expect(owner.answers()).toEqual(["Back now."]);
      // The refused line never reached dave: only the new session's line went to the model.
      expect(backend.calls.map((c) => c.body)).toEqual([expect.stringContaining("and now?")]);
      expect(backend.calls[0]!.body).not.toContain("are you still there?");
    } finally {
      await n.close();
    }
  }, 60_000);

  it("a DM to an agent that is offline is refused by the network (404 not online); once the agent is back, a new DM reaches it", async () => {
    const n = await network();
    try {
      const early = await connectSdkMember({ base: `https://acp3.${n.dev.net.sdkDomain}`, aid: "early.acp.local", caPem: n.dev.net.caPem, lookup: loopbackLookup, groupService: DAVE });
      expect(early.invited.data).toMatchObject({ status_code: 404, message: `${DAVE} is not online` });
      early.close();
      const backend = createScriptedBackend({ mode: "always", replyText: "Here now." });
      const dave = fx.track(startRecorded({ config: n.config, identityId: "dave", backend, connect: ({ logger }) => n.dev.connect(n.identity, logger) }));
      await dave.ready;
      const owner = await n.person(OWNER);
      owner.say("and now?");
      await waitFor(() => owner.answers().length === 1, "the answer");
      expect(owner.answers()).toEqual(["Here now."]);
    } finally {
      await n.close();
    }
  }, 60_000);
});
