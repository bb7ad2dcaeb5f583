// The intent gate as the group sees it: what reaches the transport for replies models really write.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createGroupMonitor } from "../../src/monitor/monitor.ts";
import type { DispatchOutcome } from "../../src/types.ts";
import { ALICE, T0, batch, msg, recordingSender, settingsWith, testGroup } from "./helpers.ts";

const OWNER = "carol.agentcp.io";

async function replyWith(text: string): Promise<{ outcome: DispatchOutcome; sent: string[]; detail: string | undefined }> {
  const sender = recordingSender(() => Date.now());
  let detail: string | undefined;
  const monitor = createGroupMonitor({
    identityId: "alice",
    identity: ALICE,
    groupId: "g1",
    settings: settingsWith({ replyPolicy: { allowLong: true } }),
    humans: [],
    backend: createScriptedBackend({ mode: "always", replyText: text }),
    sender,
    random: () => 0,
    onDecision: (d) => (detail = d.detail),
  });
  const outcome = await monitor.handle(batch({ dispatchId: 1, now: T0, messages: [msg("1", OWNER, "Alice, thoughts?", T0, { isMention: true })] }), testGroup().context);
  monitor.close();
  return { outcome, sent: sender.sent.map((s) => s.content), detail };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("monitor: NO_REPLY never reaches the group", () => {
  it.each([
    ["NO_REPLY.", "no-reply-token"],
    ['"NO_REPLY"', "no-reply-token"],
    ["no_reply", "no-reply-token"],
    ["**NO_REPLY**", "no-reply-token"],
    ["NO_REPLY (nothing to add)", "no-reply-token"],
    ["   \n\t  ", "empty"],
    ["\u200B", "empty"],
  ])("%j is silence: nothing sent", async (text, detail) => {
    const result = await replyWith(text);
    expect(result.sent).toEqual([]);
    expect(result.outcome).toMatchObject({ kind: "skipped", reason: "silent" });
    expect(result.detail).toBe(detail);
  });

  it.each([
    ["Agreed, ship it.\n\nNO_REPLY", "Agreed, ship it."],
    ["Agreed, ship it. `NO_REPLY`", "Agreed, ship it."],
    // Only Markdown stripping joins these into the token; the monitor reads the intent again.
    ["Agreed, ship it. NO_`REPLY`", "Agreed, ship it."],
  ])("%j sends the text without the token", async (text, expected) => {
    const { outcome, sent } = await replyWith(text);
    expect(sent).toEqual([expected]);
    expect(outcome).toMatchObject({ kind: "sent", text: expected });
  });

  it("a reply that is only the token after trimming is silence", async () => {
    const { outcome, sent, detail } = await replyWith("NO_`REPLY`");
    expect(sent).toEqual([]);
    expect(outcome).toMatchObject({ kind: "skipped", reason: "silent" });
    expect(detail).toBe("no-reply-token");
  });
});
