// Network signals end to end through the group service `group.acp.local` (loopback network): the
// metadata rides the wire untouched, and the engine honours it. Deterministic back-end (no LLM).
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, HUMAN, lobbyConfig, settle, startLobbyServer, startRecorded, useRuntimeFixture, waitFor, type RecordedIdentity } from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("runtime-signals");
const FAST = { bufferGateMs: 60, bufferGateMaxWaitMs: 500, cooldownMs: 60, delay: { enabled: false }, budget: GENEROUS_BUDGET };

describe("network signals over the local group server", () => {
  it("a metadata mention without the name is answered; no-reply-expected and reactions start nothing", async () => {
    fx.server = await startLobbyServer(["alice"]);
    const config = lobbyConfig({ stateDir: fx.stateDir(), agents: ["alice"], lobby: FAST });
    const backend = createScriptedBackend({ mode: "mention", replyText: "Checking the logs now." });
    fx.track(startRecorded({ config, identityId: "alice", backend }));
    const alice = fx.running[0] as RecordedIdentity;
    await alice.ready;

    // #1: flagged as expecting no reply (and naming Alice): carried nowhere, dropped as not-for-reply.
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice: FYI the deploy is done", metadata: { group_meta: { flags: { no_reply_expected: true } } } });
    // #2: a reaction to it.
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "🎉", metadata: { group_meta: { msg_type: "reaction", reply_to: "1", reaction: "🎉" } } });
    await settle(fx.server, fx.running);
    expect(alice.decisions).toEqual([]);
    expect(alice.groupClient(GROUP)!.stats()).toMatchObject({ received: 2, accepted: 2, dispatches: 0, mentions: 0, dropped: { "not-for-reply": 2 } });

    // #3: no name in the text, but the metadata mentions Alice's aid → a mention, answered.
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "can you check the logs?", metadata: { group_meta: { mentions: [AGENTS.alice.aid] } } });
    await waitFor(() => fx.server!.history(GROUP).length === 4, "alice's reply");
    await settle(fx.server, fx.running);
    expect(fx.server.history(GROUP).slice(2).map((m) => [m.msgId, m.sender, m.content, m.metadata])).toEqual([
      ["3", HUMAN, "can you check the logs?", { group_meta: { mentions: [AGENTS.alice.aid] } }],
      ["4", AGENTS.alice.aid, "Checking the logs now.", { reply_to: "3", answered_through: "3" }],
    ]);
    expect(alice.decisions.map((d) => [d.trigger, d.messageIds, d.outcome.kind === "sent"])).toEqual([["mention", ["3"], true]]);
  });

  it("config `agents` and `humans` reach the prompt's [Senders]; an unconfigured member is type unknown", async () => {
    fx.server = await startLobbyServer(["alice", "bob", "carol"]);
    // A long buffer gate: the two plain messages wait and ride along with the mention.
    const base = lobbyConfig({ stateDir: fx.stateDir(), agents: ["alice"], lobby: { ...FAST, bufferGateMs: 2000, bufferGateMaxWaitMs: 4000 } });
    const config = { ...base, agents: [AGENTS.bob.aid] };
    const backend = createScriptedBackend({ mode: "mention", replyText: "Noted." });
    fx.track(startRecorded({ config, identityId: "alice", backend }));
    const alice = fx.running[0] as RecordedIdentity;
    await alice.ready;
    fx.server.post({ groupId: GROUP, sender: AGENTS.bob.aid, content: "build is red" });
    fx.server.post({ groupId: GROUP, sender: AGENTS.carol.aid, content: "looking" });
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, can you help?" });
    await waitFor(() => backend.calls.length === 1, "alice's model call");
    await settle(fx.server, fx.running);
    const senders = backend.calls[0]!.systemPrompt.split("\n[Senders]\n")[1]!.split("\n\n")[0];
    expect(senders).toBe([`${AGENTS.bob.aid}: agent`, `${AGENTS.carol.aid}: type unknown`, `${HUMAN}: human`].join("\n"));
  });
});
