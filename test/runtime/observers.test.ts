// Observers passed to startIdentity (transcript, events) are for display: a failure in one must
// never stop messages from reaching the group client. Real sockets on 127.0.0.1.
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../src/log.ts";

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
  serveGroups,
} from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("observers");

describe("startIdentity onMessages", () => {
  // Regression: an exception from the transcript observer refused the whole batch, the transport
  // re-pulled it with backoff, the observer threw again — and the group went deaf for good. A
  // `start`-style printer throws on a server timestamp past what Date can format (> 8.64e15).
  it("a transcript printer that throws on one message does not keep it (or later ones) from the group client", async () => {
    const dir = fx.stateDir();
    let stamp: number | undefined;
    const members = { [HUMAN]: { human: true }, [AGENTS.alice.aid]: {} };
    // The server clock jumps to the far future for one message: no online TTL may expire on it.
    fx.server = serveGroups({ groups: { [GROUP]: { members } }, rateLimit: null, onlineTtlMs: Number.POSITIVE_INFINITY, now: () => stamp ?? Date.now() });
    const config = lobbyConfig({
      stateDir: dir,
      agents: ["alice"],
      lobby: { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET },
    });
    const printed: string[] = [];
    const logger = createMemoryLogger();
    const alice = startRecorded({
      config,
      identityId: "alice",
      backend: createScriptedBackend({ mode: "silent" }),
      logger,
      onMessages: (_g, messages: readonly GroupMessage[]) => {
        for (const m of messages) printed.push(`${new Date(m.timestamp).toISOString()} ${m.content}`);
      },
    });
    fx.track(alice);
    await alice.ready;

    // One push each (posts in one turn would share a batch push, and the printer's loop stops at the throw).
    const received = (n: number) => waitFor(() => alice.groupClient(GROUP)!.stats().received === n, `message ${n} received`, 3000);
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "first" });
    await received(1);
    stamp = 9e15;
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "from the far future" });
    await received(2);
    stamp = undefined;
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "third" });
    await waitFor(() => alice.groupClient(GROUP)!.stats().accepted === 3, "all three accepted", 3000);
    await settle(fx.server!, [alice]);

    expect(alice.groupClient(GROUP)!.stats()).toMatchObject({ received: 3, accepted: 3, dispatched: 3, dropped: { duplicate: 0 } });
    // Each once (inside a dispatch the far-future message sorts last, by server timestamp).
    expect([...dispatchedIds(alice)].sort()).toEqual(["1", "2", "3"]);
    expect(printed.map((line) => line.slice(25))).toEqual(["first", "third"]);
    expect(logger.entries.filter((e) => e.event === "runtime.on-messages-failed")).toHaveLength(1);
    expect(alice.connection!.counters().handlerErrors).toBe(0);
  });
});
