// Restart on the same state directory through the composition root, for msg ids of every size
// the transport accepts. Real sockets on 127.0.0.1; the file state store in a temp dir.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";

import { createMemoryHistoryStore } from "../../src/server/history-store.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
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

const fx = useRuntimeFixture("restart");

const FAST = { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };

describe("startIdentity restart: large msg ids", () => {
  // Regression: the transport accepts any safe-integer msg_id, but the engine treated ids of 16
  // digits (e.g. microsecond timestamps, 1.7e15) as non-numeric: the cursor never moved past
  // them, so a restart pulled and dispatched the same messages again.
  it("16-digit ids move the saved cursor; a restart dispatches nothing twice", async () => {
    const dir = fx.stateDir();
    const history = createMemoryHistoryStore();
    // The group's history starts at a microsecond-timestamp id.
    history.append({ msgId: "1700000000000000", groupId: GROUP, sender: HUMAN, content: "Morning", contentType: "text", timestamp: Date.now(), metadata: null });
    const members = { [HUMAN]: { human: true }, [AGENTS.alice.aid]: {} };
    fx.server = serveGroups({ groups: { [GROUP]: { members } }, rateLimit: null, history });
    const config = lobbyConfig({ stateDir: dir, agents: ["alice"], lobby: FAST });
    const backend = () => createScriptedBackend({ mode: "mention", replyText: "Here." });

    const run1 = startRecorded({ config, identityId: "alice", backend: backend() });
    fx.track(run1);
    await run1.ready;
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "Alice, are you here?" });
    await waitFor(() => fx.server!.history(GROUP).length === 3, "alice's reply");
    await settle(fx.server!, [run1]);
    expect(dispatchedIds(run1)).toEqual(["1700000000000000", "1700000000000001"]);
    await run1.close();
    const file = join(dir, encodeSafeName("alice"), `${encodeSafeName(GROUP)}.group.json`);
    expect((JSON.parse(readFileSync(file, "utf8")) as { data: { cursor: number } }).data.cursor).toBe(1700000000000002);

    const run2 = startRecorded({ config, identityId: "alice", backend: backend() });
    fx.track(run2);
    await run2.ready;
    fx.server!.post({ groupId: GROUP, sender: HUMAN, content: "Thanks" });
    await waitFor(() => run2.events.some((e) => e.type === "dispatch-end"), "run 2's dispatch");
    await settle(fx.server!, [run2]);
    expect(dispatchedIds(run2)).toEqual(["1700000000000003"]);
    expect(fx.server!.history(GROUP)).toHaveLength(4);
  });
});
