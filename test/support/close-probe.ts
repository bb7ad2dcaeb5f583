// Run as a child process by test/runtime.test.ts: starts a server and two identities, leaves work
// in flight (a buffered message, a reply waiting in the send delay, an open socket with heartbeats),
// aborts one identity and closes the other and the server — and then simply ends. It never calls
// process.exit: if anything the runtime started were still armed or open, this process would hang.
// Usage: node close-probe.ts <stateDir> [--leave-open]
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
import { GENEROUS_BUDGET, GROUP, HUMAN, lobbyConfig, startLobbyServer, startRecorded, waitFor } from "./runtime-harness.ts";

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
const aliceBackend = createScriptedBackend({ mode: "mention", replyText: "Pong." });
// Real heartbeats and reconnect settings here: the runtime's own defaults are under test.
const alice = startRecorded({ config, identityId: "alice", backend: aliceBackend, abortSignal: abort.signal, connection: { heartbeatMs: 200 } });
const bob = startRecorded({ config, identityId: "bob", backend: createScriptedBackend({ mode: "always" }), connection: { heartbeatMs: 200 } });
await Promise.all([alice.ready, bob.ready]);

server.post({ groupId: GROUP, sender: HUMAN, content: "Morning all" });
server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, ping" });
// Alice has called the model and now waits 60 s before sending; Bob holds both messages for 60 s.
await waitFor(() => aliceBackend.calls.length === 1, "alice's model call");
await waitFor(() => bob.groupClient(GROUP)!.stats().held === 2, "bob holding two messages");
await new Promise((resolve) => setTimeout(resolve, 300)); // let a heartbeat round-trip happen

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
    status: [alice.connection.status, bob.connection.status],
    stateFiles: [existsSync(stateFile("alice")), existsSync(stateFile("bob"))],
    aliceOutcome: alice.decisions.map((d) => (d.outcome.kind === "sent" ? "sent" : d.outcome.reason)),
    history: server.history(GROUP).length,
  }) + "\n",
);
