// A reaction reply goes out as a reaction message only when the transport says the group service
// supports reactions; otherwise as a plain message (the default).
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createGroupMonitor } from "../../src/monitor/monitor.ts";
import { ALICE, T0, batch, msg, recordingSender, settingsWith, testGroup } from "./helpers.ts";

const settings = settingsWith({ delay: { enabled: false } });

async function runHeated(reactions: boolean) {
  const sender = Object.assign(recordingSender(() => T0), reactions ? { reactions: true } : {});
  const backend = createScriptedBackend({ mode: "always", replyText: "👍" });
  const monitor = createGroupMonitor({ identityId: "alice", identity: ALICE, groupId: "g1", settings, humans: [], backend, sender });
  const b = batch({
    dispatchId: 1,
    now: T0,
    state: "HEATED",
    messages: [msg("7", "bob.agentcp.io", "shipped it", T0), msg("8", "dave.agentcp.io", "👏", T0 + 1, { passive: "reaction", metadata: { group_meta: { msg_type: "reaction", reply_to: "7" } } })],
  });
  const outcome = await monitor.handle(b, testGroup().context);
  monitor.close();
  return { outcome, sent: sender.sent };
}

describe("reaction replies", () => {
  it("default: a HEATED group's reaction is a plain message, no reply_to (only what it answered through)", async () => {
    const { outcome, sent } = await runHeated(false);
    expect(outcome).toMatchObject({ kind: "sent", replyType: "reaction", text: "👍" });
    expect(sent.map((s) => [s.content, s.metadata])).toEqual([["👍", { answered_through: "8" }]]);
  });

  it("with reactions supported: sent as a reaction to the newest message that is not itself a reaction", async () => {
    const { outcome, sent } = await runHeated(true);
    expect(outcome).toMatchObject({ kind: "sent", replyType: "reaction", replyTo: "7" });
    expect(sent.map((s) => [s.content, s.metadata])).toEqual([["👍", { reply_to: "7", group_meta: { msg_type: "reaction", reply_to: "7", reaction: "👍" }, answered_through: "8" }]]);
  });
});
