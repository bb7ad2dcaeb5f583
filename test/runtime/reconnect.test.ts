// Reconnect through the composition root: every session drops mid-stream (like a crashed socket)
// and the group service restarts on the same history; the network brings up new sessions, and
// the real group client, fed by the transport through `startIdentity`, must receive every message
// exactly once and dispatch each exactly once. Loopback network, real time with bounded waits.
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../src/log.ts";
import type { GroupService } from "../../src/server/group-service.ts";
import { createMemoryHistoryStore, type GroupHistoryStore } from "../../src/server/history-store.ts";
import type { GroupMessage } from "../../src/types.ts";
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
  type RecordedIdentity,
  currentNetwork,
  serveGroups,
} from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("reconnect");

const MEMBERS = { [HUMAN]: { human: true }, [AGENTS.alice.aid]: {} };

function lobby(history: GroupHistoryStore): GroupService {
  return serveGroups({ groups: { [GROUP]: { members: MEMBERS } }, rateLimit: null, history });
}

/** Every session ends at once and stays down until the service is back (like a crash). */
function crash(): void {
  currentNetwork().drop(undefined, { reconnect: false });
}

const FAST = { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

function startAlice(backend = createScriptedBackend({ mode: "silent" })) {
  const dir = fx.stateDir();
  const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: FAST });
  const fed: string[] = [];
  const alice = startRecorded({
    config,
    identityId: "alice",
    backend,
    onMessages: (_g, messages: readonly GroupMessage[]) => fed.push(...messages.map((m) => m.msgId)),
  });
  fx.track(alice);
  return { alice, fed };
}

const accepted = (r: RecordedIdentity) => r.events.flatMap((e) => (e.type === "accepted" ? [e.message.msgId] : []));
const post = (from: number, to: number) => {
  for (let i = from; i <= to; i++) fx.server!.post({ groupId: GROUP, sender: HUMAN, content: `note ${i}` });
};

describe("startIdentity: the sessions drop mid-stream and the group service restarts", () => {
  it("the client reconnects, pulls what it missed, and the group client receives and dispatches every message exactly once", async () => {
    const history = createMemoryHistoryStore();
    fx.server = lobby(history);
    const { alice, fed } = startAlice();
    await alice.ready;

    post(1, 10);
    await waitFor(() => accepted(alice).length === 10, "the first ten accepted");
    // Mid-stream: these pushes race the kill; whichever are lost must come back by pull.
    post(11, 15);
    crash();
    await waitFor(() => alice.connection!.status === "reconnecting", "reconnecting");
    fx.server = lobby(history);
    // Posted while Alice is away: only a pull can deliver these.
    post(16, 20);
    await waitFor(() => alice.connection!.status === "open", "open again");
    post(21, 25);
    await waitFor(() => accepted(alice).length >= 25, "all 25 accepted");
    await settle(fx.server!, [alice]);

    const client = alice.groupClient(GROUP)!;
    expect(fed).toEqual(range(1, 25));
    expect(accepted(alice)).toEqual(range(1, 25));
    expect(client.stats()).toMatchObject({ received: 25, accepted: 25, dispatched: 25, held: 0, dropped: { duplicate: 0, self: 0 } });
    expect(dispatchedIds(alice).map(Number).sort((a, b) => a - b).map(String)).toEqual(range(1, 25));
    expect(alice.connection!.counters().reconnects).toBeGreaterThanOrEqual(1);
  });

  it("own replies and mentions around the crash: each message (ours included) reaches the group client once, each mention is answered once", async () => {
    const history = createMemoryHistoryStore();
    fx.server = lobby(history);
    const backend = createScriptedBackend({ mode: "mention", replyText: (r) => `Answer to #${r.messages.filter((m) => m.isMention).at(-1)!.msgId}.` });
    const { alice, fed } = startAlice(backend);
    await alice.ready;

    // #1–#4 chatter, #5 names Alice → her reply is #6, echoed back to her.
    post(1, 4);
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "Alice, are you there?" });
    await waitFor(() => alice.groupClient(GROUP)!.stats().dropped.self === 1, "the echo of alice's first reply");
    post(7, 11);
    crash();
    await waitFor(() => alice.connection!.status !== "open", "the drop noticed");
    fx.server = lobby(history);
    // While Alice is away: #12–#14 chatter, #15 names her.
    post(12, 14);
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "Alice, back yet?" });
    await waitFor(() => fx.server!.history(GROUP).length === 16, "alice's second reply");
    post(17, 20);
    await waitFor(() => fed.length === 20, "all 20 fed");
    await settle(fx.server!, [alice]);

    expect(fx.server!.history(GROUP).filter((m) => m.sender === AGENTS.alice.aid).map((m) => [m.msgId, m.content])).toEqual([
      ["6", "Answer to #5."],
      ["16", "Answer to #15."],
    ]);
    const humanIds = range(1, 20).filter((id) => id !== "6" && id !== "16");
    expect(fed).toEqual(range(1, 20));
    expect(accepted(alice)).toEqual(humanIds);
    expect(alice.groupClient(GROUP)!.stats()).toMatchObject({ received: 20, accepted: 18, dispatched: 18, dropped: { duplicate: 0, self: 2 } });
    expect(dispatchedIds(alice).map(Number).sort((a, b) => a - b).map(String)).toEqual(humanIds);
    expect(alice.decisions.filter((d) => d.outcome.kind === "sent").map((d) => [d.trigger, (d.outcome.kind === "sent" ? d.outcome.replyTo : undefined)])).toEqual([
      ["mention", "5"],
      ["mention", "15"],
    ]);
  });

  it("a reply sent while no session is up waits for the next one (NOT_CONNECTED left nothing behind) and is posted once", async () => {
    const history = createMemoryHistoryStore();
    fx.server = lobby(history);
    const dir = fx.stateDir();
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: FAST });
    const logger = createMemoryLogger();
    const alice = fx.track(startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "silent" }), logger, connection: { heartbeatMs: 0, requestTimeoutMs: 100 } }));
    await alice.ready;
    crash();
    const sent = alice.sendText(GROUP, "posted after the outage");
    // The first attempt found no session within its 100 ms; the service is back before the third.
    await waitFor(() => logger.entries.some((e) => e.event === "runtime.send-waiting-for-session"), "a send attempt that found no session");
    expect(fx.server!.history(GROUP)).toEqual([]);
    fx.server = lobby(history);
    await expect(sent).resolves.toMatchObject({ msgId: "1" });
    expect(fx.server!.history(GROUP).map((m) => [m.sender, m.content])).toEqual([[AGENTS.alice.aid, "posted after the outage"]]);

    // An outage longer than every attempt: refused as NOT_CONNECTED, nothing stored.
    crash();
    await expect(alice.sendText(GROUP, "never")).rejects.toMatchObject({ code: "NOT_CONNECTED" });
    expect(fx.server!.history(GROUP)).toHaveLength(1);
  });
});
