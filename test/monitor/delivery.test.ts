// The end of a dispatch under stress: the send delay, two-phase retries, sends that fail, and
// answers another member already gave. The real group client and monitor over fake timers; the
// hosted model is a scripted stand-in (it cannot exist here), the transport a recording fake.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { initGroupClientForIdentity, type GroupClient } from "../../src/group/group-client.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupMonitor, type DispatchDecision } from "../../src/monitor/monitor.ts";
import { TransportError } from "../../src/transport/errors.ts";
import type { AgentBackend, GroupMessage, GroupSender, GroupSettings } from "../../src/types.ts";
import { ALICE, T0, settingsWith } from "./helpers.ts";
import { reasonOf } from "../support/outcome.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function gm(id: string, atMs: number, content: string, sender: string): GroupMessage {
  return { msgId: id, groupId: "g1", sender, content, contentType: "text", timestamp: T0 + atMs, metadata: null };
}

async function at(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
}

function wire(p: { settings: GroupSettings; backend: AgentBackend; sender: GroupSender; random?: () => number; agents?: string[] }) {
  const decisions: DispatchDecision[] = [];
  const logger = createMemoryLogger();
  const monitor = createGroupMonitor({
    identityId: "alice",
    identity: ALICE,
    groupId: "g1",
    settings: p.settings,
    humans: ["carol.agentcp.io", "bob.agentcp.io"],
    ...(p.agents ? { agents: p.agents } : {}),
    backend: p.backend,
    sender: p.sender,
    logger,
    random: p.random ?? (() => 0.5),
    onDecision: (d) => decisions.push(structuredClone({ ...d })),
  });
  const client: GroupClient = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings: p.settings, dispatch: monitor.handle });
  return { monitor, client, decisions, logger };
}

/** Records every attempt; `plan[i]` decides attempt i: "ok", or a transport error code to throw. */
function scriptedSender(plan: string[]) {
  const attempts: Array<{ content: string; at: number }> = [];
  let next = 500;
  const sender: GroupSender = {
    async sendMessage(m) {
      const step = plan[attempts.length] ?? "ok";
      attempts.push({ content: m.content, at: Date.now() - T0 });
      if (step !== "ok") throw new TransportError(step as "NOT_CONNECTED", `send: ${step}`, { action: "send_message", groupId: "g1" });
      return { msgId: String(next++), timestamp: Date.now() };
    },
  };
  return { sender, attempts };
}

describe("send delay and a newer mention", () => {
  it("a mention during an unprompted reply's send delay ends the delay at once and dispatches within the agent latency", async () => {
    const backend = createScriptedBackend({ mode: "always", latencyMs: 1000, replyText: (r) => `thoughts number ${r.dispatchId}` });
    const { sender, attempts } = scriptedSender([]);
    // random 0.999 → the longest fast delay (≈ 6 s).
    const w = wire({ settings: settingsWith(), backend, sender, random: () => 0.999 });
    // T+0 bob, unaddressed → buffer gate T+3 → model T+3..T+4 → send delay until ≈ T+10.
    w.client.feedBufferGate([gm("1", 0, "thoughts on the release?", "bob.agentcp.io")]);
    await at(6000);
    expect(w.decisions).toHaveLength(0);
    // T+6 carol names Alice: the delay ends now, the unprompted reply is dropped, the mention goes.
    w.client.feedBufferGate([gm("2", 6000, "Alice, are you there?", "carol.agentcp.io")]);
    await at(6000);
    expect(w.decisions.map((d) => [d.dispatchId, reasonOf(d.outcome) ?? null])).toEqual([[1, "newer-mention"]]);
    await at(7000);
    expect(w.decisions.map((d) => [d.dispatchId, d.at - T0, d.outcome.kind === "sent"])).toEqual([
      [1, 3000, false],
      [2, 6000, true],
    ]);
    expect(attempts.map((a) => a.at)).toEqual([7000]);
  });
});

describe("two-phase: a retried reply call", () => {
  it("does not decide (and pay) again", async () => {
    const phases: string[] = [];
    let replyFailures = 1;
    const backend: AgentBackend = {
      name: "flaky-reply",
      async generate(req) {
        phases.push(req.phase ?? "single");
        if (req.phase === "decide") return { text: '{"want_to_reply": true, "reply_type": "short", "delay_hint": "fast"}', usage: { promptTokens: 100, completionTokens: 10 } };
        if (replyFailures-- > 0) throw Object.assign(new Error("503 from the provider"), { retryable: true });
        return { text: "Yes, the fix is in.", usage: { promptTokens: 100, completionTokens: 10 } };
      },
    };
    const { sender, attempts } = scriptedSender([]);
    const w = wire({ settings: settingsWith({ decision: "two-phase" }), backend, sender });
    w.client.feedBufferGate([gm("1", 0, "Alice, is it fixed?", "carol.agentcp.io")]);
    await at(10_000);
    expect(phases).toEqual(["decide", "reply", "reply"]);
    expect(w.monitor.snapshot().budgetEvents).toHaveLength(2);
    expect(attempts.map((a) => a.content)).toEqual(["Yes, the fix is in."]);
    expect(w.decisions.at(-1)).toMatchObject({ attempt: 1, detail: "decision-reused", outcome: { kind: "sent" } });
  });
});

describe("sends that fail", () => {
  const mention = () => gm("1", 0, "Alice, status?", "carol.agentcp.io");

  it("NOT_CONNECTED: the send never left → retried with the batch (no new model call) and delivered once", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: "All green." });
    const { sender, attempts } = scriptedSender(["NOT_CONNECTED"]);
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([mention()]);
    await at(10_000);
    // T+0 dispatch, model until T+1, send fails → retry after 2 s at T+3 sends the same reply.
    expect(attempts.map((a) => [a.at, a.content])).toEqual([
      [1000, "All green."],
      [3000, "All green."],
    ]);
    expect(backend.calls).toHaveLength(1);
    expect(w.monitor.snapshot().budgetEvents).toHaveLength(1);
    expect(w.decisions.map((d) => [d.dispatchId, d.outcome.kind === "sent", d.detail ?? null])).toEqual([
      [1, false, "retry-with-batch:not-sent"],
      [2, true, null],
    ]);
    expect(w.client.stats()).toMatchObject({ dispatched: 1, ownMessages: 1, dropped: { "retries-exhausted": 0 } });
  });

  it("in a room: a claimed question another agent answers while the undelivered reply waits for its retry is not answered again", async () => {
    const backend = createScriptedBackend({ mode: "helpful", latencyMs: 1000, replyText: "Try another mirror." });
    const { sender, attempts } = scriptedSender(["NOT_CONNECTED"]);
    // helper.agentcp.io is a known agent: the floor is in force.
    // The floor's claim on the normal path: orphans off, so the open question is claimed at once.
    const w = wire({ settings: settingsWith({ orphans: { enabled: false } }), backend, sender, agents: ["helper.agentcp.io"] });
    // T+0      carol asks the room (msg 1)
    // T+3s     buffer gate → dispatch 1; T+4s the model's reply (short: 2–6 s delay)
    // T+6.544s alice's rank for msg 1 (0.1359) of the delay: the send does not leave (NOT_CONNECTED)
    // T+7.5s   helper (a known agent) answers msg 1, reply_to 1
    // T+8.544s the retry of the batch: helper's answer is there → yields, sends nothing
    w.client.feedBufferGate([gm("1", 0, "anyone know why apt hangs on update?", "carol.agentcp.io")]);
    await at(7500);
    expect(attempts.map((a) => a.at)).toEqual([6544]);
    w.client.feedBufferGate([{ ...gm("h1", 7500, "mirror is down, use another", "helper.agentcp.io"), metadata: { reply_to: "1" } }]);
    await at(40_000);
    expect(attempts.map((a) => a.at)).toEqual([6544]);
    expect(w.decisions.map((d) => [d.dispatchId, d.at - T0, d.messageIds, d.outcome.kind === "sent", reasonOf(d.outcome) ?? null, d.detail ?? null])).toEqual([
      [1, 3000, ["1"], false, "send-failed", "retry-with-batch:not-sent"],
      [2, 8544, ["1", "h1"], false, "answered-by-other", "1:by:helper.agentcp.io"],
    ]);
    expect(backend.calls).toHaveLength(1);
  });

  it("a mention that arrives while an undelivered reply waits for its retry still gets its own answer", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: (req) => (req.messages.some((m) => m.content.includes("build")) ? "Build is fine." : "All green.") });
    const { sender, attempts } = scriptedSender(["NOT_CONNECTED"]);
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([mention()]);
    // T+1 the send does not leave; T+2 bob asks something new; T+3 the retry takes both.
    await at(2000);
    w.client.feedBufferGate([gm("2", 2000, "Alice, and the build?", "bob.agentcp.io")]);
    await at(20_000);
    // T+3 the retry delivers the first answer and hands msg 2 back; it dispatches at once (a
    // mention) and its own answer goes out after the model's second at T+4.
    expect(w.decisions.map((d) => [d.dispatchId, d.at - T0, d.messageIds, d.outcome.kind === "sent", d.detail ?? null, (d.outcome.kind === "sent" ? d.outcome.notHandled : undefined) ?? null])).toEqual([
      [1, 0, ["1"], false, "retry-with-batch:not-sent", null],
      [2, 3000, ["1", "2"], true, null, ["2"]],
      [3, 3000, ["2"], true, null, null],
    ]);
    expect(attempts).toEqual([
      { content: "All green.", at: 1000 },
      { content: "All green.", at: 3000 },
      { content: "Build is fine.", at: 4000 },
    ]);
    expect(backend.calls).toHaveLength(2);
    expect(w.client.stats()).toMatchObject({ dropped: { "retries-exhausted": 0 } });
  });

  it("CONNECTION_LOST after the server stored it: its echo comes back, so the retry does not send it again", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: "All green." });
    const { sender, attempts } = scriptedSender(["CONNECTION_LOST"]);
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([mention()]);
    // T+1 the send fails; T+2 the reconnect pull brings our own message back.
    await at(2000);
    w.client.feedBufferGate([gm("77", 1000, "All green.", ALICE.aid)]);
    await at(10_000);
    expect(attempts).toHaveLength(1);
    expect(w.decisions.map((d) => [d.dispatchId, d.outcome.kind === "sent", d.detail ?? null])).toEqual([
      [1, false, "retry-with-batch:maybe-sent"],
      [2, true, "delivered-before:echo"],
    ]);
    expect((w.decisions[1]!.outcome.kind === "sent" ? w.decisions[1]!.outcome.msgId : undefined)).toBe("77");
    // Counted once, from its echo: the sent outcome names the same msg id.
    expect(w.client.lastSelfSpeakAt).toBe(T0 + 1000);
    expect(w.client.stats()).toMatchObject({ ownMessages: 0, dropped: { self: 1 } });
  });

  it("CONNECTION_LOST after the server stored it, echo not back yet: the server's history is read first, so it is not sent again", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: "All green." });
    const { sender, attempts } = scriptedSender(["CONNECTION_LOST"]);
    const lookups: Array<{ content: string; afterMsgId: number; at: number }> = [];
    sender.findSent = async ({ content, afterMsgId }) => {
      lookups.push({ content, afterMsgId, at: Date.now() - T0 });
      return { msgId: "2", timestamp: T0 + 1000 };
    };
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([mention()]);
    await at(10_000);
    // T+1 the send fails; T+3 the retry finds it stored after msg 1 (the newest known) and sends nothing.
    expect(attempts).toHaveLength(1);
    expect(lookups).toEqual([{ content: "All green.", afterMsgId: 1, at: 3000 }]);
    expect(w.decisions.map((d) => [d.dispatchId, d.outcome.kind === "sent", d.detail ?? null])).toEqual([
      [1, false, "retry-with-batch:maybe-sent"],
      [2, true, "delivered-before:history"],
    ]);
    expect((w.decisions[1]!.outcome.kind === "sent" ? w.decisions[1]!.outcome.msgId : undefined)).toBe("2");
    expect(backend.calls).toHaveLength(1);
  });

  it("REQUEST_TIMEOUT and the history cannot be read: nothing is sent until it can; then, not there, it is sent once", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: "All green." });
    const { sender, attempts } = scriptedSender(["REQUEST_TIMEOUT"]);
    const lookups: number[] = [];
    sender.findSent = async () => {
      lookups.push(Date.now() - T0);
      if (lookups.length === 1) throw new TransportError("NOT_CONNECTED", "pull: no session", { action: "pull_messages", groupId: "g1" });
      return undefined;
    };
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([mention()]);
    await at(20_000);
    // T+1 times out; T+3 the history is unreadable (no send); T+7 (backoff 4 s) it is read, not there: sent.
    expect(lookups).toEqual([3000, 7000]);
    expect(attempts.map((a) => a.at)).toEqual([1000, 7000]);
    expect(w.decisions.map((d) => [d.dispatchId, d.outcome.kind === "sent", d.detail ?? null])).toEqual([
      [1, false, "retry-with-batch:maybe-sent"],
      [2, false, "retry-with-batch:maybe-sent"],
      [3, true, null],
    ]);
    expect(backend.calls).toHaveLength(1);
  });

  it("REQUEST_TIMEOUT and no echo: sent again on the retry, once", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: "All green." });
    const { sender, attempts } = scriptedSender(["REQUEST_TIMEOUT"]);
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([mention()]);
    await at(10_000);
    expect(attempts.map((a) => a.at)).toEqual([1000, 3000]);
    expect(backend.calls).toHaveLength(1);
    expect((w.decisions.at(-1)!.outcome.kind === "sent")).toBe(true);
  });

  it("a refused send (e.g. rate limited) is given up, logged, never posted", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: "All green." });
    const { sender, attempts } = scriptedSender(["RATE_LIMITED"]);
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([mention()]);
    await at(10_000);
    expect(attempts).toHaveLength(1);
    expect(w.decisions.map((d) => reasonOf(d.outcome))).toEqual(["send-failed"]);
    expect(w.logger.entries.some((l) => l.event === "monitor.send-failed" && l.fields["kind"] === "failed")).toBe(true);
  });
});

describe("do not say what someone else just said", () => {
  const ANSWER = "The fix is in the config. Restart the service after.";

  it("an answer another member already gave is skipped, with the reason", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: ANSWER });
    const { sender, attempts } = scriptedSender([]);
    const w = wire({ settings: settingsWith(), backend, sender });
    w.client.feedBufferGate([gm("1", 0, "Alice, how do I fix it?", "bob.agentcp.io")]);
    // While the model thinks, another agent answers with the same words.
    await at(500);
    w.client.feedBufferGate([gm("2", 500, "the fix is in the config — restart the service after!", "helper.agentcp.io")]);
    await at(10_000);
    expect(attempts).toHaveLength(0);
    expect(w.decisions[0]).toMatchObject({ outcome: { kind: "skipped", reason: "duplicate-of-other-member" }, detail: "said-by:helper.agentcp.io:same-hash:1.00" });
  });

  it("with dedup.action reaction it is downgraded to a reaction instead", async () => {
    const backend = createScriptedBackend({ mode: "mention", latencyMs: 1000, replyText: `👍 ${ANSWER}` });
    const { sender, attempts } = scriptedSender([]);
    const w = wire({ settings: settingsWith({ dedup: { action: "reaction" } }), backend, sender });
    w.client.feedBufferGate([gm("1", 0, "Alice, how do I fix it?", "bob.agentcp.io"), gm("2", 0, ANSWER, "helper.agentcp.io")]);
    await at(10_000);
    expect(attempts.map((a) => a.content)).toEqual(["👍"]);
    expect(w.decisions[0]!.detail).toMatch(/^downgraded:said-by:helper\.agentcp\.io:/);
  });
});
