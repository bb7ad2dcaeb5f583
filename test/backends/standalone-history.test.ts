// The standalone back-end's conversation holds what the group saw: the reply as sent (trimmed),
// or silence marked `unsent` with the reason when the monitor did not send what the model wrote.
// The real monitor and the real openai SDK against the local OpenAI-compatible mock on 127.0.0.1
// (mock model: no hosted LLM here); no send delay, so no timer is involved.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llmSchema } from "../../src/config/schema.ts";
import { createOpenAIBackend } from "../../src/backends/standalone.ts";
import { createGroupMonitor, type DispatchDecision } from "../../src/monitor/monitor.ts";
import { startOpenAIMock, type OpenAIMock } from "../support/openai-mock.ts";
import { ALICE, T0, batch, msg, recordingSender, settingsWith, testGroup } from "../monitor/helpers.ts";
import type { DispatchBatch } from "../../src/types.ts";
import { GENEROUS_BUDGET } from "../support/runtime-harness.ts";
import { reasonOf } from "../support/outcome.ts";

const BOB = "bob.agentcp.io";
let mock: OpenAIMock;
beforeAll(async () => {
  mock = await startOpenAIMock();
});
afterAll(async () => {
  await mock.close();
});

type Turn = { role: string; content: string };
const lastRequestTurns = (): Turn[] => mock.chatRequests().at(-1)!.body.messages as Turn[];
/** The assistant turns the model is shown in the latest request. */
const assistantTurns = () => lastRequestTurns().filter((m) => m.role === "assistant").map((m) => m.content);

function setupMonitor() {
  mock.requests.length = 0;
  const backend = createOpenAIBackend({ llm: llmSchema.parse({ baseUrl: mock.baseUrl, apiKey: "sk-test", model: "mock-model" }), env: {} });
  const sender = recordingSender(() => T0);
  const decisions: DispatchDecision[] = [];
  let mentionWaiting = false;
  const group = testGroup({ mentionWaiting: () => mentionWaiting });
  const real = createGroupMonitor({
    identityId: "alice",
    identity: ALICE,
    groupId: "g1",
    settings: settingsWith({ delay: { enabled: false }, maxAgentChain: 100, budget: GENEROUS_BUDGET }),
    humans: [BOB],
    backend,
    sender,
    onDecision: (d) => decisions.push(d),
  });
  // Each outcome settles in the group's memory as the group client settles it.
  const monitor = {
    handle: (b: DispatchBatch, waiting = false) => {
      mentionWaiting = waiting;
      return real.handle(b, group.context).then(group.settle);
    },
    close: () => real.close(),
  };
  return { backend, sender, decisions, monitor };
}

describe("standalone history after the monitor's gates (mock model endpoint)", () => {
  it("a trimmed reply is kept as sent, not as the model wrote it", async () => {
    const { sender, monitor } = setupMonitor();
    // COOLING → a short reply: the first sentences only.
    mock.enqueue({ text: "The build is green. I checked it twice. Also the docs build. And the release notes are ready." }, { text: "NO_REPLY" });
    await monitor.handle(batch({ dispatchId: 1, now: T0, messages: [msg("1", BOB, "how is the build?", T0)] }));
    await monitor.handle(batch({ dispatchId: 2, now: T0 + 60_000, messages: [msg("2", BOB, "thanks", T0 + 60_000)] }));

    expect(sender.sent).toHaveLength(1);
    const sent = sender.sent[0]!.content;
    expect(sent.length).toBeLessThan("The build is green. I checked it twice. Also the docs build. And the release notes are ready.".length);
    expect(assistantTurns()).toEqual([sent]);
    monitor.close();
  });

  it("a reply not sent (duplicate, newer mention, refused send) is shown to the model as silence, its draft kept aside", async () => {
    const { backend, sender, decisions, monitor } = setupMonitor();
    mock.enqueue(
      { text: "Restart the service." },
      // The same words again: our own dedup skips it.
      { text: "Restart the service." },
      // A newer mention is waiting when this unprompted reply is ready.
      { text: "Maybe check the logs first." },
      // The group service refuses the send.
      { text: "Try clearing the cache." },
      { text: "NO_REPLY" },
    );
    await monitor.handle(batch({ dispatchId: 1, now: T0, messages: [msg("1", BOB, "the service hangs", T0)] }));
    await monitor.handle(batch({ dispatchId: 2, now: T0 + 60_000, messages: [msg("2", BOB, "it hangs again", T0 + 60_000)] }));
    await monitor.handle({ ...batch({ dispatchId: 3, now: T0 + 120_000, messages: [msg("3", BOB, "any other idea", T0 + 120_000)] }), mentionSignal: AbortSignal.abort() }, true);
    const refuse = sender.sendMessage;
    sender.sendMessage = async () => {
      throw Object.assign(new Error("too large"), { code: "MESSAGE_TOO_LARGE" });
    };
    await monitor.handle(batch({ dispatchId: 4, now: T0 + 180_000, messages: [msg("4", BOB, "still hangs", T0 + 180_000)] }));
    sender.sendMessage = refuse;
    await monitor.handle(batch({ dispatchId: 5, now: T0 + 240_000, messages: [msg("5", BOB, "ok", T0 + 240_000)] }));

    expect(decisions.map((d) => [d.dispatchId, d.outcome.kind === "sent", reasonOf(d.outcome) ?? null])).toEqual([
      [1, true, null],
      [2, false, "duplicate-of-recent-reply"],
      [3, false, "newer-mention"],
      [4, false, "send-failed"],
      [5, false, "silent"],
    ]);
    expect(sender.sent.map((s) => s.content)).toEqual(["Restart the service."]);
    expect(assistantTurns()).toEqual(["Restart the service.", "NO_REPLY", "NO_REPLY", "NO_REPLY"]);

    const conv = backend.conversations.peek("alice", "g1")!;
    expect(conv.entries.filter((e) => e.role === "assistant").map((e) => [e.tags.dispatch, e.content, e.tags.unsent ?? null, e.draft ?? null])).toEqual([
      [1, "Restart the service.", null, null],
      [2, "NO_REPLY", "duplicate-of-recent-reply", "Restart the service."],
      [3, "NO_REPLY", "newer-mention", "Maybe check the logs first."],
      [4, "NO_REPLY", "send-failed", "Try clearing the cache."],
      [5, "NO_REPLY", null, null],
    ]);
    monitor.close();
  });

  it("a reply whose send found no session reads as unsent until its retry delivers it, then as sent", async () => {
    const { backend, sender, decisions, monitor } = setupMonitor();
    mock.enqueue({ text: "On my way." });
    const send = sender.sendMessage;
    sender.sendMessage = async () => {
      throw Object.assign(new Error("no session"), { code: "NOT_CONNECTED" });
    };
    const question = [msg("1", BOB, "Alice, are you coming?", T0, { isMention: true })];
    const first = await monitor.handle(batch({ dispatchId: 1, now: T0, messages: question }));
    expect(first).toMatchObject({ kind: "retry", reason: "send-failed", error: { code: "NOT_CONNECTED" }, carry: { reply: { text: "On my way.", maybeSent: false } } });
    const conv = backend.conversations.peek("alice", "g1")!;
    expect(conv.entries.at(-1)).toMatchObject({ role: "assistant", content: "NO_REPLY", tags: { dispatch: 1, unsent: "send-failed" }, draft: "On my way." });

    // The group client's retry: the same batch under a new dispatch id; no new model call.
    sender.sendMessage = send;
    await monitor.handle({ ...batch({ dispatchId: 2, now: T0 + 2_000, messages: question }), attempt: 1, ...(first.kind === "retry" && first.carry ? { carried: first.carry } : {}) });
    expect(decisions.map((d) => [d.dispatchId, d.outcome.kind === "sent"])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(mock.chatRequests()).toHaveLength(1);
    expect(conv.entries.at(-1)).toMatchObject({ role: "assistant", content: "On my way.", tags: { dispatch: 1 } });
    expect(conv.entries.at(-1)!.tags.unsent).toBeUndefined();
    expect(conv.entries.at(-1)!.draft).toBeUndefined();
    monitor.close();
  });
});
