// The model step (src/monitor/dispatch/model.ts): the optional two-phase decision, the reply call
// and reading what came back — each a step with its input and its output or end. Back-ends are
// stand-ins (no hosted LLM here).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createScriptedBackend } from "../../../src/backends/deterministic.ts";
import { checkDispatchBudget, type DispatchBudget } from "../../../src/monitor/dispatch/budget-gate.ts";
import { callForReply, planReply, readIntent } from "../../../src/monitor/dispatch/model.ts";
import type { DispatchRun } from "../../../src/monitor/dispatch/run.ts";
import type { AgentBackend, DispatchBatch, GenerateRequest, TwoPhaseDecision } from "../../../src/types.ts";
import { T0, batch, msg } from "../helpers.ts";
import { stepRun } from "./step.ts";

const OWNER = "carol.agentcp.io";
const question = (): DispatchBatch => batch({ dispatchId: 2, now: T0, messages: [msg("1", OWNER, "Alice, is the build green?", T0, { isMention: true })] });

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function priced(run: DispatchRun): DispatchBudget {
  const parts = run.m.buildPrompt(run.batch, run.group.memory);
  const out = checkDispatchBudget(run, parts, "addressed");
  if ("skip" in out || "again" in out) throw new Error(`no budget: ${JSON.stringify(out)}`);
  return out.budget;
}

/** A back-end that answers each call from `answers` in turn (an Error is thrown). */
function answering(...answers: Array<string | Error>): AgentBackend & { calls: GenerateRequest[] } {
  const calls: GenerateRequest[] = [];
  return {
    name: "stand-in",
    calls,
    async generate(request) {
      calls.push(request);
      const a = answers[calls.length - 1] ?? "NO_REPLY";
      if (a instanceof Error) throw a;
      return { text: a, usage: { promptTokens: 10, completionTokens: 2 } };
    },
  };
}

describe("planReply", () => {
  it("single phase: the prompt as it is, the delay hint of its reply type, no call", async () => {
    const backend = answering();
    const { run } = stepRun({ batch: question(), backend });
    const parts = run.m.buildPrompt(run.batch, run.group.memory);
    expect(await planReply(run, priced(run), parts)).toEqual({ parts, delayHint: "fast" });
    expect(backend.calls).toEqual([]);
    expect(run.record).toMatchObject({ replyType: "short", replyTypeReason: parts.replyTypeReason });
  });

  it.each([
    // the decision call's answer → how the step ends
    [JSON.stringify({ want_to_reply: false }), { skip: "two-phase-declined" }],
    ["sure, let me think", { skip: "silent", detail: "decision-unparseable" }],
    [new Error("400 bad request"), { skip: "backend-failed", detail: "decide" }],
  ] as const)("two-phase: the decision %j → %j, one call", async (answer, end) => {
    const err = answer instanceof Error ? Object.assign(answer, { retryable: false }) : answer;
    const backend = answering(err);
    const { run } = stepRun({ batch: question(), backend, settings: { decision: "two-phase" } });
    expect(await planReply(run, priced(run), run.m.buildPrompt(run.batch, run.group.memory))).toEqual(end);
    expect(backend.calls.map((c) => c.phase)).toEqual(["decide"]);
  });

  it("two-phase: a retryable failure of the decision call goes back for a retry, carrying nothing", async () => {
    const backend = answering(new Error("503"));
    const { run } = stepRun({ batch: question(), backend, settings: { decision: "two-phase" } });
    const out = await planReply(run, priced(run), run.m.buildPrompt(run.batch, run.group.memory));
    expect(out).toMatchObject({ again: "backend-failed", error: { message: "503" } });
    expect("carry" in out ? out.carry : undefined).toBeUndefined();
  });

  it("two-phase: the decision picks the smaller reply type and the delay; a retry carrying it asks no second decision", async () => {
    const backend = answering(JSON.stringify({ want_to_reply: true, reply_type: "reaction", delay_hint: "slow" }));
    const { run } = stepRun({ batch: question(), backend, settings: { decision: "two-phase" } });
    const plan = await planReply(run, priced(run), run.m.buildPrompt(run.batch, run.group.memory));
    expect(plan).toMatchObject({ delayHint: "slow", decision: { replyType: "reaction", delayHint: "slow", ids: new Set(["1"]) }, parts: { replyType: "reaction" } });

    const decision: TwoPhaseDecision = { ids: new Set(["1"]), replyType: "reaction", delayHint: "slow" };
    const again = answering();
    const retry = stepRun({ batch: { ...question(), attempt: 1, carried: { decision } }, backend: again, settings: { decision: "two-phase" } });
    expect(await planReply(retry.run, priced(retry.run), retry.run.m.buildPrompt(retry.run.batch, retry.run.group.memory))).toMatchObject({ delayHint: "slow", decision });
    expect(again.calls).toEqual([]);
    expect(retry.run.record.detail).toBe("decision-reused");
  });
});

describe("callForReply", () => {
  it("the reply call: what the model wrote, charged to the budget", async () => {
    const { run, m } = stepRun({ batch: question(), backend: createScriptedBackend({ mode: "always", replyText: "Yes, green." }) });
    const budget = priced(run);
    const plan = await planReply(run, budget, run.m.buildPrompt(run.batch, run.group.memory));
    if ("skip" in plan || "again" in plan) throw new Error("no plan");
    expect(await callForReply(run, budget, plan)).toEqual({ raw: "Yes, green." });
    expect(m.state.budgetEvents).toHaveLength(1);
    expect(run.record.modelCalls).toBe(1);
  });

  it.each([
    // a failure → the step's end (retryable: back to the group client, with the two-phase decision; else no text)
    [true, "single", { again: "backend-failed" }],
    [true, "two-phase", { again: "backend-failed", carry: { decision: { replyType: "short" } } }],
    [false, "single", { raw: undefined }],
  ] as const)("retryable %s, %s phase → %j; nothing charged", async (retryable, decision, end) => {
    const failure = Object.assign(new Error("model down"), { retryable });
    const answers = decision === "two-phase" ? [JSON.stringify({ want_to_reply: true }), failure] : [failure];
    const { run, m } = stepRun({ batch: question(), backend: answering(...answers), settings: { decision } });
    const budget = priced(run);
    const plan = await planReply(run, budget, run.m.buildPrompt(run.batch, run.group.memory));
    if ("skip" in plan || "again" in plan) throw new Error("no plan");
    expect(await callForReply(run, budget, plan)).toMatchObject(end);
    // Only the decision call (two-phase) was paid for.
    expect(m.state.budgetEvents).toHaveLength(decision === "two-phase" ? 1 : 0);
  });
});

describe("readIntent", () => {
  it.each([
    // what the model wrote → the step's answer
    [undefined, { skip: "backend-failed" }],
    ["NO_REPLY", { skip: "silent", detail: "no-reply-token" }],
    ["", { skip: "silent", detail: "empty" }],
    ["Yes, green.", { text: "Yes, green.", replyType: "short" }],
  ] as const)("%j → %j", async (raw, out) => {
    const { run } = stepRun({ batch: question() });
    const plan = await planReply(run, priced(run), run.m.buildPrompt(run.batch, run.group.memory));
    if ("skip" in plan || "again" in plan) throw new Error("no plan");
    expect(readIntent(run, plan, { raw })).toEqual(out);
  });

  it("after close: group-closed, whatever came back", async () => {
    const { run, m } = stepRun({ batch: question() });
    const plan = await planReply(run, priced(run), run.m.buildPrompt(run.batch, run.group.memory));
    if ("skip" in plan || "again" in plan) throw new Error("no plan");
    m.close();
    expect(readIntent(run, plan, { raw: "Yes." })).toEqual({ skip: "group-closed" });
  });
});
