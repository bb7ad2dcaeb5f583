// End to end through the composition root: the real group service on the in-memory loopback
// network, the deterministic back-end, and a file state store in a temp dir. Real time, small
// timings (tens of ms), waits for events: every assertion is about what happened (who said what,
// which ids, which reasons), never how long it took, and a check that nothing happened follows
// the event that proves it (a settled group, a closed identity), never a sleep.
import { createHook } from "node:async_hooks";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { createScriptedBackend, type ScriptedBackend } from "../../src/backends/deterministic.ts";
import { RuntimeError } from "../../src/runtime/identity.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
import type { GenerateRequest, GroupMessage } from "../../src/types.ts";
import {
  AGENTS,
  GENEROUS_BUDGET,
  GROUP,
  HUMAN,
  dispatchedIds,
  lobbyConfig,
  senders,
  currentNetwork,
  settle,
  startLobbyServer,
  startRecorded,
  unsettled,
  useRuntimeFixture,
  waitFor,
  type RecordedIdentity,
} from "../support/runtime-harness.ts";
import { reasonOf } from "../support/outcome.ts";

const fx = useRuntimeFixture("runtime");

const FAST = { bufferGateMs: 60, bufferGateMaxWaitMs: 500, cooldownMs: 60, delay: { enabled: false }, budget: GENEROUS_BUDGET };

describe("startIdentity: agents in one group over real sockets", () => {
  it("a mention gets exactly one reply, from the agent named; the others stay silent; every message arrives once", async () => {
    fx.server = await startLobbyServer(["alice", "bob", "carol"]);
    const config = lobbyConfig({ stateDir: fx.stateDir(), agents: ["alice", "bob", "carol"], lobby: FAST });
    const replies: Record<string, string> = { alice: "The build is green.", bob: "No concerns from design.", carol: "Looks safe to merge." };
    const backends: Record<string, ScriptedBackend> = {};
    for (const id of ["alice", "bob", "carol"] as const) {
      backends[id] = createScriptedBackend({ mode: "mention", replyText: replies[id]! });
      fx.track(startRecorded({ config, identityId: id, backend: backends[id] }));
    }
    const [alice, bob, carol] = fx.running as [RecordedIdentity, RecordedIdentity, RecordedIdentity];
    await Promise.all(fx.running.map((r) => r.ready));

    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, is the build green?" });
    await waitFor(() => fx.server!.history(GROUP).length === 2, "alice's reply");
    await settle(fx.server, fx.running);

    // #1 human → #2 Alice, answering #1; nobody else said anything.
    const history = fx.server.history(GROUP);
    expect(history.map((m) => [m.msgId, m.sender, m.content, m.metadata])).toEqual([
      ["1", HUMAN, "Alice, is the build green?", null],
      ["2", AGENTS.alice.aid, "The build is green.", { reply_to: "1", answered_through: "1" }],
    ]);
    expect(alice.decisions.map((d) => [d.trigger, d.messageIds, d.outcome.kind === "sent"])).toEqual([["mention", ["1"], true]]);
    for (const other of [bob, carol]) {
      expect(other.decisions.length).toBeGreaterThan(0);
      expect(other.decisions.every((d) => d.outcome.kind !== "sent" && reasonOf(d.outcome) === "silent" && !d.mentionInfo.mentioned)).toBe(true);
      // Both messages reached Bob and Carol, each in exactly one dispatch.
      expect(dispatchedIds(other)).toEqual(["1", "2"]);
    }
    // Pushes and new_message notifications both arrive; each message is fed and accepted once.
    expect(alice.groupClient(GROUP)!.stats()).toMatchObject({ received: 2, accepted: 1, dispatched: 1, dropped: { self: 1, duplicate: 0 } });
    for (const other of [bob, carol]) {
      expect(other.groupClient(GROUP)!.stats()).toMatchObject({ received: 2, accepted: 2, dispatched: 2, dropped: { self: 0, duplicate: 0 } });
      expect(other.connection!.counters().messagesFed).toBe(2);
    }

    // Now Bob is named: Bob answers once; Alice (whose reply engaged the human) and Carol do not.
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Bob, any concerns about the new layout?" });
    await waitFor(() => fx.server!.history(GROUP).length === 4, "bob's reply");
    await settle(fx.server, fx.running);
    expect(fx.server.history(GROUP).slice(2).map((m) => [m.msgId, m.sender, m.content, m.metadata])).toEqual([
      ["3", HUMAN, "Bob, any concerns about the new layout?", null],
      ["4", AGENTS.bob.aid, "No concerns from design.", { reply_to: "3", answered_through: "3" }],
    ]);
    expect(bob.decisions.filter((d) => d.outcome.kind === "sent").map((d) => [d.trigger, d.messageIds])).toEqual([["mention", ["3"]]]);
    expect(alice.decisions.filter((d) => d.outcome.kind === "sent")).toHaveLength(1);
    expect(carol.decisions.some((d) => d.outcome.kind === "sent")).toBe(false);
    expect(dispatchedIds(alice)).toEqual(["1", "3", "4"]);
    expect(dispatchedIds(carol)).toEqual(["1", "2", "3", "4"]);
    for (const r of fx.running) expect(r.groupClient(GROUP)!.stats().dropped.duplicate).toBe(0);
    // Only dispatches whose batch named the agent ever reached the model as mentioned.
    const mentionedCalls = (b: ScriptedBackend) => b.calls.filter((c: GenerateRequest) => c.mentionInfo.mentioned).length;
    expect([mentionedCalls(backends.alice!), mentionedCalls(backends.bob!), mentionedCalls(backends.carol!)]).toEqual([1, 1, 0]);
  });
});

/** Distinct sentences, so only the loop guard (not dedup) can stop the chain. */
const LINES: Record<string, readonly string[]> = {
  alice: [
    "Start with the parser; everything else depends on it.",
    "Benchmarks from Tuesday favour the streaming design.",
    "Memory dropped by half after the rewrite of the cache.",
    "Shipping a beta on Friday keeps the pressure healthy.",
    "Logs should go to one structured sink, not three.",
    "Retry budgets belong in config, with sane defaults.",
  ],
  bob: [
    "Users will notice the onboarding flow before anything else.",
    "A calmer colour palette would help the dashboard a lot.",
    "Keyboard shortcuts matter to the power users we interviewed.",
    "Empty states deserve friendly copy and a clear next step.",
    "The settings page needs search once it grows past a screen.",
    "Dark mode requests keep showing up in every survey round.",
  ],
};

function chattyBackend(id: "alice" | "bob"): ScriptedBackend {
  let n = 0;
  return createScriptedBackend({ mode: "always", replyText: () => LINES[id]![n++ % LINES[id]!.length]! });
}

const isHuman = (history: readonly GroupMessage[], id: string) => history.find((m) => m.msgId === id)?.sender === HUMAN;

describe("startIdentity: bot-loop guard across real sockets", () => {
  it("two always-answering agents stop after maxAgentChain agent-only exchanges, stay quiet, and a human resets the chain", async () => {
    fx.server = await startLobbyServer(["alice", "bob"]);
    // agentMentionGapMs short: once their exchange is private (private-exchange), each agent's
    // reply carries reply_to and reaches the other as a mention, which from an agent waits the gap.
    const config = lobbyConfig({ stateDir: fx.stateDir(), agents: ["alice", "bob"], lobby: { ...FAST, maxAgentChain: 2, agentMentionGapMs: 50 } });
    const alice = fx.track(startRecorded({ config, identityId: "alice", backend: chattyBackend("alice") }));
    const bob = fx.track(startRecorded({ config, identityId: "bob", backend: chattyBackend("bob") }));
    await Promise.all([alice.ready, bob.ready]);

    const round = async (content: string) => {
      const from = fx.server!.history(GROUP).length;
      const humanId = fx.server!.post({ groupId: GROUP, sender: HUMAN, content }).msgId;
      // Whichever agent did not speak last is the one that meets the guard (sometimes both).
      await waitFor(() => [alice, bob].some((r) => r.decisions.some((d) => reasonOf(d.outcome) === "bot-loop-guard" && Number(d.messageIds[0]) > Number(humanId))), "the loop guard");
      await settle(fx.server!, [alice, bob]);
      return { humanId, said: fx.server!.history(GROUP).slice(from + 1) };
    };

    const first = await round("Morning both, what should we build first?");
    for (const r of [alice, bob]) {
      const aid = r.aid;
      // One reply to the human, then exactly maxAgentChain (2) replies to agent-only batches.
      expect(first.said.filter((m) => m.sender === aid)).toHaveLength(3);
      const sent = r.decisions.filter((d) => d.outcome.kind === "sent");
      expect(sent.map((d) => d.agentChain)).toEqual([0, 1, 2]);
      expect(sent[0]!.messageIds).toContain(first.humanId);
      for (const d of r.decisions.filter((x) => reasonOf(x.outcome) === "bot-loop-guard")) {
        expect(d.detail).toBe("agent-chain=2");
        // The guard stops before the model: no call, no budget spent.
        expect(d.modelCalls).toBe(0);
        expect(d.messageIds.some((id) => isHuman(fx.server!.history(GROUP), id))).toBe(false);
      }
      // Nothing else stopped them: no duplicate, budget or silent skips.
      expect(r.decisions.filter((d) => d.outcome.kind !== "sent" && reasonOf(d.outcome) !== "bot-loop-guard")).toEqual([]);
      expect(r.monitor(GROUP)!.snapshot().agentChain).toBe(2);
    }
    const guards = [...alice.decisions, ...bob.decisions].filter((d) => reasonOf(d.outcome) === "bot-loop-guard");
    expect(guards.length).toBeGreaterThan(0);
    // Quiet until a human speaks: both agents have settled every line of the group (fed up to the
    // newest, nothing held, no dispatch running), and a dispatch only starts from something held.
    expect([...unsettled(fx.server, alice), ...unsettled(fx.server, bob)]).toEqual([]);

    const before = { alice: alice.decisions.length, bob: bob.decisions.length };
    const second = await round("Thanks. Alice and Bob, one more idea each?");
    for (const r of [alice, bob]) {
      const fresh = r.decisions.slice(before[r.identityId as "alice" | "bob"]);
      // The human message reset the chain: answered at once (mention), then two agent-only replies.
      expect(fresh[0]).toMatchObject({ trigger: "mention", agentChain: 0, outcome: { kind: "sent" } });
      expect(fresh[0]!.messageIds).toContain(second.humanId);
      expect(fresh.filter((d) => d.outcome.kind === "sent").map((d) => d.agentChain)).toEqual([0, 1, 2]);
      expect(second.said.filter((m) => m.sender === r.aid)).toHaveLength(3);
    }
    expect(senders(fx.server.history(GROUP)).filter((s) => s === HUMAN)).toHaveLength(2);
  });
});

/** The saved group state, read straight from the file (not through the store under test). */
function savedState(dir: string, identityId: string): { cursor: number; budgetEvents: unknown[]; replyHashes: string[]; lastSelfSpeakAt: number | null } {
  const file = join(dir, encodeSafeName(identityId), `${encodeSafeName(GROUP)}.group.json`);
  return (JSON.parse(readFileSync(file, "utf8")) as { data: ReturnType<typeof savedState> }).data;
}

describe("startIdentity: process restart on the same state directory", () => {
  // Unaddressed talk waits in the buffer for a minute: only mentions dispatch during the test.
  const HOLD = {
    bufferGateMs: 60_000,
    bufferGateMaxWaitMs: 60_000,
    cooldownMs: 60,
    delay: { enabled: false },
    // Only mentions dispatch here: they draw from the addressed allowance.
    budget: {
      addressed: {
        "5m": { messages: 10, tokens: 100_000_000 },
        "3h": { messages: 100, tokens: 100_000_000 },
        "24h": { messages: 1000, tokens: 100_000_000 },
      },
    },
  };
  const statusBackend = () => createScriptedBackend({ mode: "mention", replyText: "Status: all green." });

  it("dispatches every message exactly once across both runs, resumes what was buffered, and keeps budget and reply hashes", async () => {
    const dir = fx.stateDir();
    fx.server = await startLobbyServer(["alice"]);
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: HOLD });

    // Run 1: #1 waits in the buffer, #2 names Alice → one dispatch of [#1, #2], reply #3; #4 is still buffered at close.
    const run1 = fx.track(startRecorded({ config, identityId: "alice", backend: statusBackend() }));
    await run1.ready;
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Morning all" });
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, status?" });
    await waitFor(() => fx.server!.history(GROUP).length === 3, "alice's reply");
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Lunch at noon?" });
    await waitFor(() => run1.events.some((e) => e.type === "accepted" && e.message.msgId === "4"), "#4 accepted");
    await run1.close();
    await run1.done;

    expect(run1.decisions.map((d) => [d.trigger, d.messageIds, d.outcome.kind === "sent", d.budgetRatio])).toEqual([["mention", ["1", "2"], true, 0]]);
    expect(dispatchedIds(run1)).toEqual(["1", "2"]);
    expect(run1.groupClient(GROUP)!.stats().dropped).toMatchObject({ self: 1, "group-closed": 1 });
    // #4 was accepted but not dispatched: the saved cursor stays just before it.
    const saved = savedState(dir, "alice");
    expect(saved.cursor).toBe(3);
    expect(saved.budgetEvents).toHaveLength(1);
    expect(saved.replyHashes).toHaveLength(1);
    expect(saved.lastSelfSpeakAt).toBe(fx.server.history(GROUP)[2]!.timestamp);

    // While Alice is down: another mention and more talk.
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, status again?" });
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "See you later" });

    // Run 2: a new runtime, a new back-end, the same state dir and server.
    const backend2 = statusBackend();
    const run2 = fx.track(startRecorded({ config, identityId: "alice", backend: backend2 }));
    await run2.ready;
    await waitFor(() => run2.decisions.length === 1, "run 2's first dispatch");
    await settle(fx.server, [run2]);

    // #4 (buffered at close), #5 and #6 (posted while down) in one mention dispatch; nothing from run 1 again.
    const [first] = run2.decisions;
    expect(first).toMatchObject({ trigger: "mention", messageIds: ["4", "5", "6"], modelCalls: 1 });
    // Budget carried over: 1 model call of the 10 allowed in 5 minutes.
    expect(first!.budgetRatio).toBe(0.1);
    // Reply hashes carried over: the same answer again is suppressed.
    expect(first!.outcome).toMatchObject({ kind: "skipped", reason: "duplicate-of-recent-reply" });
    expect(first!.detail).toBe("same-hash:1.00");
    expect(run2.decisions).toHaveLength(1);
    expect(backend2.calls).toHaveLength(1);

    // Across both runs: every human message dispatched exactly once, nothing lost.
    expect([...dispatchedIds(run1), ...dispatchedIds(run2)]).toEqual(["1", "2", "4", "5", "6"]);
    expect(senders(fx.server.history(GROUP))).toEqual([HUMAN, HUMAN, AGENTS.alice.aid, HUMAN, HUMAN, HUMAN]);
    expect(run2.groupClient(GROUP)!.stats()).toMatchObject({ accepted: 3, dispatched: 3, dropped: { duplicate: 0, self: 0 } });
    expect(run2.monitor(GROUP)!.snapshot().budgetEvents).toHaveLength(2);

    await run2.close();
    expect(savedState(dir, "alice").cursor).toBe(6);
  });

  it("a mention whose model call was cut off by close is answered after the restart, once", async () => {
    const dir = fx.stateDir();
    fx.server = await startLobbyServer(["alice"]);
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: HOLD });

    // Run 1: #1 is answered (#2); #3 is in the model call (300 ms) when the identity closes.
    const slow = createScriptedBackend({ mode: "mention", latencyMs: 300, replyText: (r) => `Answer to #${r.messages.at(-1)!.msgId}.` });
    const run1 = fx.track(startRecorded({ config, identityId: "alice", backend: slow }));
    await run1.ready;
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, first question?" });
    await waitFor(() => fx.server!.history(GROUP).length === 2, "the first answer");
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, second question?" });
    await waitFor(() => slow.calls.length === 2, "the second model call");
    await run1.close();
    expect(run1.decisions.map((d) => [d.messageIds, d.outcome.kind === "sent", reasonOf(d.outcome)])).toEqual([
      [["1"], true, undefined],
      [["3"], false, "group-closed"],
    ]);
    // Nothing was said for #3: the cursor stays before it.
    expect(savedState(dir, "alice").cursor).toBe(2);

    const run2 = fx.track(startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "mention", replyText: (r) => `Answer to #${r.messages.at(-1)!.msgId}.` }) }));
    await run2.ready;
    await waitFor(() => fx.server!.history(GROUP).length === 4, "the answer to #3");
    await settle(fx.server, [run2]);
    expect(run2.decisions.map((d) => [d.trigger, d.messageIds, d.outcome.kind === "sent"])).toEqual([["mention", ["3"], true]]);
    expect(fx.server.history(GROUP).map((m) => m.content)).toEqual(["Alice, first question?", "Answer to #1.", "Alice, second question?", "Answer to #3."]);
  });

  // Regression: the transport used to ack every id the group client *accepted*, so the server's
  // cursor passed #1 while it was still buffered; with a saved cursor of 0 (`pull_messages
  // after_msg_id 0` = "from the server's cursor") #1 was never pulled again. Acks now stop at the
  // settled cursor.
  it("a restart after close with only the group's very first message buffered still dispatches it", async () => {
    const dir = fx.stateDir();
    fx.server = await startLobbyServer(["alice"]);
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: HOLD });

    const link1 = currentNetwork().link(AGENTS.alice.aid);
    const run1 = fx.track(startRecorded({ config, identityId: "alice", backend: statusBackend(), link: link1 }));
    await run1.ready;
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Morning all" });
    await waitFor(() => run1.events.some((e) => e.type === "accepted"), "#1 accepted");
    // #1 is buffered, not settled: the server's cursor for Alice must stay before it.
    const serverCursor = async () =>
      ((await run1.connection!.request("get_cursor", { groupId: GROUP })) as { msg_cursor: { current_msg_id: number } }).msg_cursor.current_msg_id;
    expect(await serverCursor()).toBe(0);
    await run1.close();
    expect(savedState(dir, "alice").cursor).toBe(0);
    // Closed: every request run 1 will ever send has been sent, and none acked #1.
    const acks = link1.channel(fx.server.aid).sent.filter((p) => p.includes('"ack_messages"'));
    expect(acks).toEqual([]);

    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, are you there?" });
    const run2 = fx.track(startRecorded({ config, identityId: "alice", backend: statusBackend() }));
    await run2.ready;
    await waitFor(() => run2.decisions.length === 1, "run 2's dispatch");
    expect(run2.decisions[0]).toMatchObject({ trigger: "mention", messageIds: ["1", "2"], outcome: { kind: "sent" } });
  });
});

describe("startIdentity: close leaves nothing running", () => {
  it("abort closes the socket, clears every timer, saves state, and resolves `done`", async () => {
    const dir = fx.stateDir();
    fx.server = await startLobbyServer(["alice"]);
    const config = lobbyConfig({
      stateDir: dir,
      agents: ["alice"],
      lobby: { ...FAST, bufferGateMs: 60_000, bufferGateMaxWaitMs: 60_000, delay: { enabled: true, onMention: true, fastMs: [60_000, 60_000] } },
    });
    // Every timer made from here on, by async id, until it fires or is cleared (node:async_hooks),
    // so timers of the test runner made before the identity started count for nothing.
    const live = new Set<number>();
    const hook = createHook({
      init: (id, type) => void (type === "Timeout" && live.add(id)),
      destroy: (id) => void live.delete(id),
    }).enable();
    onTestFinished(() => void hook.disable());
    const abort = new AbortController();
    const backend = createScriptedBackend({ mode: "mention", replyText: "Pong." });
    const alice = fx.track(startRecorded({ config, identityId: "alice", backend, abortSignal: abort.signal }));
    await alice.ready;
    expect(fx.server.onlineAids()).toEqual([AGENTS.alice.aid]);

    // A message waiting in the buffer gate (60 s) and a reply waiting in the send delay (60 s).
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, ping" });
    await waitFor(() => backend.calls.length === 1, "the model call");
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Morning all" });
    await waitFor(() => alice.groupClient(GROUP)!.stats().held === 1, "a held message");
    expect(live.size).toBeGreaterThan(0);

    let done = false;
    void alice.done.then(() => (done = true));
    abort.abort();
    await waitFor(() => done, "done after abort", 3000);

    await waitFor(() => fx.server!.onlineAids().length === 0, "the service to see the session end", 2000);
    expect(alice.connection!.status).toBe("closed");
    expect(alice.groupClient(GROUP)!.closed).toBe(true);
    // Every timer the identity armed is gone (a destroy is reported a turn after the clear).
    const armed = [...live];
    await waitFor(() => armed.every((id) => !live.has(id)), () => `the identity's timers to be cleared: ${armed.filter((id) => live.has(id)).length} left`, 2000);
    // The reply waiting in the delay gate was never sent: the saved cursor stays before #1, so the
    // next run takes it up again (but see the known transport bug above for a cursor of 0).
    expect(alice.decisions.map((d) => reasonOf(d.outcome))).toEqual(["group-closed"]);
    expect(fx.server.history(GROUP)).toHaveLength(2);
    const file = join(dir, encodeSafeName("alice"), `${encodeSafeName(GROUP)}.group.json`);
    expect(existsSync(file)).toBe(true);
    expect(savedState(dir, "alice").cursor).toBe(0);
    await expect(alice.sendText(GROUP, "late")).rejects.toMatchObject({ name: "RuntimeError", code: "CLOSED" });
    // close() after abort is the same close.
    await alice.close();
    expect(fx.server.history(GROUP)).toHaveLength(2);
  });

  it("a process that closes its identities and server ends by itself; one that does not, hangs", async () => {
    const probe = fileURLToPath(new URL("../support/close-probe.ts", import.meta.url));
    const node = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url));
    const run = (args: string[], timeout: number) =>
      new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) => {
        execFile(node, [probe, ...args], { timeout }, (err, stdout) => {
          const e = err as (Error & { code?: number; signal?: NodeJS.Signals }) | null;
          resolve({ code: e ? (typeof e.code === "number" ? e.code : null) : 0, signal: e?.signal ?? null, stdout });
        });
      });
    const [closed, leftOpen] = await Promise.all([run([fx.stateDir()], 15_000), run([fx.stateDir(), "--leave-open"], 2000)]);
    expect(closed).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(closed.stdout)).toEqual({
      clientCount: 0,
      status: ["closed", "closed"],
      stateFiles: [true, true],
      aliceOutcome: ["group-closed"],
      history: 2,
    });
    // The control: without close, reconnect timers keep the process alive until it is killed.
    expect(leftOpen.signal).toBe("SIGTERM");
  });
});
