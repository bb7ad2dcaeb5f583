// Run as a child process by test/runtime.test.ts: starts a server and two identities, leaves work
// in flight (a buffered message, a reply waiting in the send delay, an open socket with heartbeats),
// aborts one identity and closes the other and the server — and then simply ends. It never calls
// process.exit: if anything the runtime started were still armed or open, this process would hang.
// It runs outside vitest, so it waits on the events themselves (a model call, a held message, a
// heartbeat answered), never on time.
// Usage: node close-probe.ts <stateDir> [--leave-open]
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
import type { GenerateRequest } from "../../src/types.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, HUMAN, currentNetwork, lobbyConfig, startLobbyServer, startRecorded } from "./runtime-harness.ts";

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const stateDir = process.argv[2];
if (!stateDir) throw new Error("usage: close-probe.ts <stateDir> [--leave-open]");
const leaveOpen = process.argv.includes("--leave-open");

const server = await startLobbyServer(["alice", "bob"]);
const config = lobbyConfig({
  stateDir,
  agents: ["alice", "bob"],
  lobby: {
    bufferGateMs: 60_000,
    bufferGateMaxWaitMs: 60_000,
    budget: GENEROUS_BUDGET,
    delay: { enabled: true, onMention: true, fastMs: [60_000, 60_000], normalMs: [60_000, 60_000], slowMs: [60_000, 60_000] },
  },
});
const abort = new AbortController();
const scripted = createScriptedBackend({ mode: "mention", replyText: "Pong." });
const modelCalled = deferred();
const aliceBackend = { ...scripted, generate: (req: GenerateRequest) => (modelCalled.resolve(), scripted.generate(req)) };
const bobHoldsTwo = deferred();
let bobAccepted = 0;
// A heartbeat answered on Alice's session with the group service.
const heartbeatAnswered = deferred();
const aliceLink = currentNetwork().link(AGENTS.alice.aid);
aliceLink.channel(server.aid).on("message", ({ payload }) => void (payload.includes('"action":"heartbeat"') && heartbeatAnswered.resolve()));
// Real heartbeats and reconnect settings here: the runtime's own defaults are under test.
const alice = startRecorded({ config, identityId: "alice", backend: aliceBackend, abortSignal: abort.signal, link: aliceLink, connection: { heartbeatMs: 200 } });
const bob = startRecorded({
  config,
  identityId: "bob",
  backend: createScriptedBackend({ mode: "always" }),
  connection: { heartbeatMs: 200 },
  onGroupEvent: (_g, e) => void (e.type === "accepted" && ++bobAccepted === 2 && bobHoldsTwo.resolve()),
});
await Promise.all([alice.ready, bob.ready]);

server.post({ groupId: GROUP, sender: HUMAN, content: "Morning all" });
server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, ping" });
// Alice has called the model and now waits 60 s before sending; Bob holds both messages for 60 s.
await Promise.all([modelCalled.promise, bobHoldsTwo.promise]);
if (scripted.calls.length !== 1 || bob.groupClient(GROUP)!.stats().held !== 2) throw new Error("expected one model call of Alice's and two messages held by Bob");
await heartbeatAnswered.promise;

if (!leaveOpen) {
  abort.abort();
  await alice.done;
  await bob.close();
  await bob.done;
}

const stateFile = (id: string) => join(stateDir, encodeSafeName(id), `${encodeSafeName(GROUP)}.group.json`);
process.stdout.write(
  JSON.stringify({
    clientCount: server.onlineAids().length,
    status: [alice.connection!.status, bob.connection!.status],
    stateFiles: [existsSync(stateFile("alice")), existsSync(stateFile("bob"))],
    aliceOutcome: alice.decisions.map((d) => (d.outcome.kind === "sent" ? "sent" : d.outcome.reason)),
    history: server.history(GROUP).length,
  }) + "\n",
);
