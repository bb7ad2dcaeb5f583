// A reply that cannot get out: who retries it, when, and what a close in the middle leaves for the
// next run. The real runtime, group client, monitor, transport and group service on the in-memory
// loopback network, on fake timers; the state store is an in-memory map (real files do their I/O
// outside the fake clock). The model is a hand-released stand-in (no LLM here).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import type { StateStore } from "../../src/state/file-store.ts";
import type { AgentBackend, GenerateRequest, GenerateResult, PersistedGroupState } from "../../src/types.ts";
import { GENEROUS_BUDGET, GROUP, HUMAN, currentNetwork, lobbyConfig, startLobbyServer, startRecorded, useRuntimeFixture, type RecordedIdentity } from "../support/runtime-harness.ts";
import { reasonOf } from "../support/outcome.ts";

const fx = useRuntimeFixture("send-retry");
const T0 = Date.UTC(2026, 0, 5, 14, 0, 0);
const at = async (ms: number) => vi.advanceTimersByTimeAsync(T0 + ms - Date.now());

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function memoryStore(): StateStore & { groups: Map<string, PersistedGroupState> } {
  const groups = new Map<string, PersistedGroupState>();
  return {
    dir: "(memory)",
    groups,
    loadGroup: (identityId, groupId) => groups.get(`${identityId}/${groupId}`),
    saveGroup: (identityId, groupId, s) => void groups.set(`${identityId}/${groupId}`, structuredClone(s)),
    loadConversation: () => undefined,
    saveConversation: () => {},
  };
}

/** A model whose answer the test releases by hand. */
function handBackend(): AgentBackend & { calls: GenerateRequest[]; release(text: string): void } {
  const calls: GenerateRequest[] = [];
  const waiting: Array<(r: GenerateResult) => void> = [];
  return {
    name: "by-hand",
    calls,
    generate(request) {
      calls.push(request);
      return new Promise((resolve) => waiting.push(resolve));
    },
    release(text) {
      for (const resolve of waiting.splice(0)) resolve({ text });
    },
  };
}

/** Every session ends and stays down (a network outage) until restore(). */
const outage = () => currentNetwork().drop(undefined, { reconnect: false });

const PROMPT = { cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };
const REQUEST_TIMEOUT_MS = 30_000;

async function aliceAnsweringBy(store: StateStore, backend: AgentBackend): Promise<RecordedIdentity> {
  const config = lobbyConfig({ stateDir: "(memory)", agents: ["alice"], lobby: PROMPT });
  const alice = fx.track(startRecorded({ config, identityId: "alice", backend, store, connection: { requestTimeoutMs: REQUEST_TIMEOUT_MS } }));
  await vi.advanceTimersByTimeAsync(0);
  await alice.ready;
  return alice;
}

const decided = (r: RecordedIdentity) => r.decisions.map((d) => [d.attempt, d.trigger, d.messageIds, d.outcome.kind === "sent", reasonOf(d.outcome) ?? null]);

describe("an unsent reply has one owner for its retries: the group client's retry book", () => {
  it("T+0s reply ready, no session → tries at T+0s, T+32s, T+66s (30 s wait each, lock free between) → dropped at T+96s", async () => {
    fx.server = await startLobbyServer(["alice"]);
    const store = memoryStore();
    const backend = handBackend();
    const alice = await aliceAnsweringBy(store, backend);
    const ends = () => alice.events.flatMap((e) => (e.type === "dispatch-end" ? [e.atLocal - T0] : []));
    const dropped = () => alice.events.flatMap((e) => (e.type === "dropped" ? [[e.atLocal - T0, e.reason]] : []));

    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, status?" });
    await at(0);
    expect(backend.calls).toHaveLength(1);
    // T+0s: the network goes away just as the model answers.
    outage();
    backend.release("All green.");
    await at(0);

    // T+30s: the first try finds no session within the request timeout; the lock is released
    // and the retry waits its backoff (2 s) with the group free.
    await at(30_000);
    expect(ends()).toEqual([30_000]);
    await at(31_000);
    expect(alice.groupClient(GROUP)!.stats().dispatching).toBe(false);
    // T+32s second try → T+62s fails; +4 s backoff → T+66s third try → T+96s fails: retries used up.
    await at(62_000);
    expect(ends()).toEqual([30_000, 62_000]);
    await at(96_000);
    expect(ends()).toEqual([30_000, 62_000, 96_000]);
    expect(dropped()).toEqual([[96_000, "retries-exhausted"]]);
    // One model call: the retries deliver the reply already written.
    expect(backend.calls).toHaveLength(1);
    expect(alice.decisions.map((d) => [d.attempt, reasonOf(d.outcome)])).toEqual([
      [0, "send-failed"],
      [1, "send-failed"],
      [2, "send-failed"],
    ]);
    // Nothing more is pending: no fourth try.
    await at(400_000);
    expect(ends()).toHaveLength(3);
    expect(fx.server.history(GROUP)).toHaveLength(1);
  });

  it("the network is back at T+40s, during the second try: the reply is posted once, then", async () => {
    fx.server = await startLobbyServer(["alice"]);
    const backend = handBackend();
    const alice = await aliceAnsweringBy(memoryStore(), backend);
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, status?" });
    await at(0);
    outage();
    backend.release("All green.");
    await at(39_999);
    expect(fx.server.history(GROUP)).toHaveLength(1);
    currentNetwork().restore();
    await at(40_000);
    expect(fx.server.history(GROUP).map((m) => [m.sender, m.content])).toEqual([
      [HUMAN, "Alice, status?"],
      [alice.aid, "All green."],
    ]);
    expect(alice.decisions.map((d) => [d.attempt, d.outcome.kind === "sent", reasonOf(d.outcome) ?? null])).toEqual([
      [0, false, "send-failed"],
      [1, true, null],
    ]);
  });
});

describe("closing while a reply waits for a session", () => {
  it("leaves the mention unsettled (cursor before it), and the next run answers it", async () => {
    fx.server = await startLobbyServer(["alice"]);
    const store = memoryStore();
    const backend = handBackend();
    const run1 = await aliceAnsweringBy(store, backend);
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, status?" });
    await at(0);
    outage();
    backend.release("All green.");
    // T+5s: the reply is still waiting for a session when the identity closes.
    await at(5_000);
    const closed = run1.close();
    await at(5_001);
    await closed;
    expect(decided(run1)).toEqual([[0, "mention", ["1"], false, "group-closed"]]);
    expect(store.groups.get(`alice/${GROUP}`)?.cursor).toBe(0);

    currentNetwork().restore();
    const run2 = await aliceAnsweringBy(store, createScriptedBackend({ mode: "mention", replyText: "All green." }));
    await at(7_000);
    expect(run2.decisions.map((d) => [d.trigger, d.messageIds, d.outcome.kind === "sent"])).toEqual([["mention", ["1"], true]]);
    expect(fx.server.history(GROUP).map((m) => m.content)).toEqual(["Alice, status?", "All green."]);
  });
});
