// Closing an identity while a dispatch is still working: whatever it had not said must stay
// unsettled (the saved cursor before it), so the next run answers it — never a lost mention.
// Real sockets on 127.0.0.1, the file state store in a temp dir.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseChannelConfig } from "../../src/config/load.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";

import { encodeSafeName } from "../../src/state/safe-name.ts";
import type { AgentBackend, GenerateRequest, GenerateResult } from "../../src/types.ts";
import {
  GENEROUS_BUDGET,
  GROUP,
  HUMAN,
  lobbyConfig,
  startLobbyServer,
  startRecorded,
  useRuntimeFixture,
  waitFor,
  serveGroups,
} from "../support/runtime-harness.ts";
import { reasonOf } from "../support/outcome.ts";

const fx = useRuntimeFixture("close");

function savedCursor(dir: string, identityId: string, groupId: string): number {
  const file = join(dir, encodeSafeName(identityId), `${encodeSafeName(groupId)}.group.json`);
  return (JSON.parse(readFileSync(file, "utf8")) as { data: { cursor: number } }).data.cursor;
}

const HOLD = { bufferGateMs: 60_000, bufferGateMaxWaitMs: 60_000, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };

/** A model whose answer the test releases by hand; like a remote call already on the wire, it ignores the abort signal. */
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

describe("startIdentity close: a dispatch still working is not counted as handled", () => {
  // Regression: close() shut the transport before the monitors, so a model answer arriving while
  // the socket closed went on to send, failed with CLOSED ("send-failed"), counted as handled, and
  // the saved cursor moved past a mention nobody answered.
  it("a model answer that lands while the transport closes is not sent and leaves the mention for the next run", async () => {
    const dir = fx.stateDir();
    fx.server = await startLobbyServer(["alice"]);
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: HOLD });
    const backend = handBackend();
    const run1 = startRecorded({ config, identityId: "alice", backend });
    fx.track(run1);
    await run1.ready;
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "Alice, status?" });
    await waitFor(() => backend.calls.length === 1, "the model call");
    // The answer arrives just as the transport starts closing.
    run1.connection!.on("status", ({ status }) => {
      if (status === "closed") backend.release("All green.");
    });
    await run1.close();

    expect(run1.decisions.map((d) => [d.trigger, d.messageIds, d.outcome.kind === "sent", reasonOf(d.outcome)])).toEqual([
      ["mention", ["1"], false, "group-closed"],
    ]);
    expect(savedCursor(dir, "alice", GROUP)).toBe(0);

    const run2 = startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "mention", replyText: "All green." }) });
    fx.track(run2);
    await run2.ready;
    await waitFor(() => fx.server!.history(GROUP).length === 2, "the answer from run 2");
    // The server stores the answer before run 2 reads the send response and records its decision.
    await waitFor(() => run2.decisions.length === 1, "run 2's decision");
    expect(run2.decisions.map((d) => [d.trigger, d.messageIds, d.outcome.kind === "sent"])).toEqual([["mention", ["1"], true]]);
    expect(fx.server!.history(GROUP).map((m) => m.content)).toEqual(["Alice, status?", "All green."]);
  });

  it("with one dispatch slot, close does not wait for another group's model call, and neither mention is lost", async () => {
    const dir = fx.stateDir();
    const ALICE = { aid: "alice.acp.local", name: "Alice" };
    const members = { [ALICE.aid]: {}, [HUMAN]: { human: true } };
    fx.server = serveGroups({ groups: { g1: { members }, g2: { members } }, rateLimit: null });
    const config = parseChannelConfig({
      stateDir: dir,
      humans: [HUMAN],
      maxConcurrentDispatches: 1,
      identities: { alice: ALICE },
      groups: { g1: HOLD, g2: HOLD },
    });
    // A long model call (it honours the abort signal, as the openai SDK does).
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 2000, replyText: "Done." });
    const alice = startRecorded({ config, identityId: "alice", backend });
    fx.track(alice);
    await alice.ready;
    fx.server!.post({ groupId: "g2", sender: HUMAN, content: "Alice, long question?" });
    await waitFor(() => backend.calls.length === 1, "g2's model call");
    // g1's mention waits for the only slot, behind g2's call.
    fx.server!.post({ groupId: "g1", sender: HUMAN, content: "Alice, quick one?" });
    await waitFor(() => alice.groupClient("g1")!.stats().dispatching, "g1 waiting for the slot");

    await alice.close();

    const outcomes = alice.decisions.map((d) => [d.groupId, reasonOf(d.outcome)]).sort();
    expect(outcomes).toEqual([
      ["g1", "group-closed"],
      ["g2", "group-closed"],
    ]);
    expect(fx.server!.history("g1")).toHaveLength(1);
    expect(fx.server!.history("g2")).toHaveLength(1);
    expect([savedCursor(dir, "alice", "g1"), savedCursor(dir, "alice", "g2")]).toEqual([0, 0]);
  });
});

// Guard: held before the slot limiter too (the queue's signal released the slot); kept so the
// limiter that replaced the queue cannot lose it.
describe("startIdentity close: a back-end that never settles", () => {
  it("close() resolves although the model call ignores its abort signal, and the mention stays for the next run", async () => {
    const dir = fx.stateDir();
    fx.server = await startLobbyServer(["alice"]);
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: HOLD });
    // Never settles, never reads its signal: a hung host turn.
    const calls: GenerateRequest[] = [];
    const backend: AgentBackend = { name: "hung", generate: (r) => (calls.push(r), new Promise<GenerateResult>(() => {})) };
    const run = startRecorded({ config, identityId: "alice", backend });
    fx.track(run);
    await run.ready;
    fx.server.post({ groupId: GROUP, sender: HUMAN, content: "Alice, are you there?" });
    await waitFor(() => calls.length === 1, "the model call");
    await run.close();
    expect(run.decisions.map((d) => [d.trigger, reasonOf(d.outcome)])).toEqual([["mention", "group-closed"]]);
    expect(savedCursor(dir, "alice", GROUP)).toBe(0);
  });
});
