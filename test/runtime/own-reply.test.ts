// Never the same thing twice, even after a crash: the server stored our reply, the state save
// after it was lost (SIGKILL), and the restarted agent pulls its own reply back. It must restore
// its reply memory and settle the question, not answer it again. Real sockets on 127.0.0.1 and
// real state files; the crash is simulated by a store whose saves are lost from the moment the
// reply is on the server.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createFileStateStore, type StateStore } from "../../src/state/file-store.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, HUMAN, lobbyConfig, settle, startLobbyServer, startRecorded, useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";
import { reasonOf } from "../support/outcome.ts";

const fx = useRuntimeFixture("own-reply");
const FAST = { bufferGateMs: 50, bufferGateMaxWaitMs: 200, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };

function savedState(dir: string): { cursor: number; replyHashes: string[]; lastSelfSpeakAt: number | null } | undefined {
  try {
    const file = join(dir, encodeSafeName("alice"), `${encodeSafeName(GROUP)}.group.json`);
    return (JSON.parse(readFileSync(file, "utf8")) as { data: { cursor: number; replyHashes: string[]; lastSelfSpeakAt: number | null } }).data;
  } catch {
    return undefined;
  }
}

/** The file store, except that every save is lost once `lost()` says so (the process "died"). */
function crashingStore(dir: string, lost: () => boolean): StateStore {
  const real = createFileStateStore({ dir });
  return {
    dir: real.dir,
    loadGroup: (i, g) => real.loadGroup(i, g),
    loadConversation: (i, g) => real.loadConversation(i, g),
    saveConversation: (i, g, d) => (lost() ? undefined : real.saveConversation(i, g, d)),
    saveGroup: (i, g, s) => (lost() ? undefined : real.saveGroup(i, g, s)),
    saveGroupAsync: async (i, g, s) => (lost() ? undefined : real.saveGroupAsync!(i, g, s)),
  };
}

describe("a restart that lost the state save after our reply", () => {
  it.each([
    // Both in one page: the question is still held when the reply is read → dropped as `answered`, no model call.
    ["question and reply in one pull page", 50, "held"],
    // The question's dispatch starts first; the reply arrives during its (slow) model call → `already-answered`.
    ["the reply in a later pull page than the question", 1, "in-flight"],
  ] as const)("%s: the reply comes back, the question is settled, nothing is said twice", async (_name, pageSize, path) => {
    const dir = fx.stateDir();
    fx.server = await startLobbyServer(["alice"]);
    const server = fx.server;
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: FAST });
    // Run 1 saves normally until the server holds our reply; from then on nothing reaches disk.
    const replyStored = () => server.history(GROUP).some((m) => m.sender === AGENTS.alice.aid);
    const run1 = startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "mention", replyText: "The build is green." }), store: crashingStore(dir, replyStored) });
    fx.track(run1);
    await run1.ready;
    // SIGKILL the moment the server stores the reply: no ack, no state save after it.
    let killed: Promise<void> | undefined;
    const off = server.onStored((m) => {
      if (m.sender === AGENTS.alice.aid) killed ??= run1.close();
    });
    server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, is the build green?" });
    await waitFor(() => killed !== undefined, "run 1's reply on the server");
    await killed;
    off();
    // On disk: the state from before the reply — the question unsettled, no reply remembered.
    const before = savedState(dir);
    expect(before?.cursor ?? 0).toBe(0);
    expect(before?.replyHashes ?? []).toEqual([]);
    const reply = server.history(GROUP)[1]!;
    expect(reply.metadata).toMatchObject({ reply_to: "1", answered_through: "1" });

    // Run 2 would answer again — with different words, so only settling can stop it.
    const backend2 = createScriptedBackend({ mode: "mention", latencyMs: 300, replyText: "Yes, all green now." });
    const run2 = startRecorded({ config, identityId: "alice", backend: backend2, connection: { pageSize } });
    fx.track(run2);
    await run2.ready;
    await waitFor(() => run2.events.some((e) => e.type === "dropped" && e.reason === "answered") || run2.decisions.length > 0, "run 2 settling the question");
    // Settled: fed up to the newest message, nothing held, no dispatch running — nothing more can be said.
    await settle(server, [run2]);
    await run2.close();

    expect(server.history(GROUP).map((m) => m.content)).toEqual(["Alice, is the build green?", "The build is green."]);
    expect(run2.decisions.filter((d) => d.outcome.kind === "sent")).toEqual([]);
    if (path === "held") {
      expect(backend2.calls).toHaveLength(0);
      expect(run2.events.filter((e) => e.type === "dropped" && e.reason === "answered").map((e) => e.type === "dropped" && e.msgId)).toEqual(["1"]);
    } else {
      expect(run2.decisions.map((d) => [d.messageIds, reasonOf(d.outcome)])).toEqual([[["1"], "already-answered"]]);
    }
    // The reply memory and last-speak time are back, and the cursor is past the question.
    const after = savedState(dir)!;
    expect(after.replyHashes).toHaveLength(1);
    expect(after.lastSelfSpeakAt).toBe(reply.timestamp);
    expect(after.cursor).toBe(2);
  });
});
