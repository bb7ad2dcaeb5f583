// The budget step (src/monitor/dispatch/budget-gate.ts): which allowance a batch draws from, who
// pays, the check before the first model call, and the bookkeeping of each call.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { PromptParts } from "../../../src/monitor/assemble.ts";
import { checkDispatchBudget, poolOf } from "../../../src/monitor/dispatch/budget-gate.ts";
import type { MentionInfo } from "../../../src/types.ts";
import { T0, batch, msg } from "../helpers.ts";
import { stepRun } from "./step.ts";

const BOB = "bob.agentcp.io";
const OWNER = "carol.agentcp.io";
const MIN = 60_000;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A prompt of `chars` Latin characters (ceil(chars / 4) tokens by the estimate). */
const parts = (chars: number): PromptParts => ({
  systemPrompt: "s".repeat(chars),
  stablePrefix: "",
  situation: "",
  body: "",
  replyType: "short",
  replyTypeReason: "calm",
  budgetRatio: 0,
});

describe("poolOf", () => {
  it.each([
    [{ mentioned: true, triggerType: "mention" }, "addressed"],
    [{ mentioned: false, triggerType: "engaged" }, "addressed"],
    [{ mentioned: false, triggerType: "normal" }, "unaddressed"],
    // A mention merged into a batch whose trigger was a follow-up is still addressed.
    [{ mentioned: true, triggerType: "engaged" }, "addressed"],
  ] as const)("%j → %s", (mention, pool) => {
    expect(poolOf(batch({ dispatchId: 1, now: T0, messages: [msg("1", BOB, "x", T0)], mention: mention as Partial<MentionInfo> }))).toBe(pool);
  });
});

describe("checkDispatchBudget", () => {
  it("unaddressed talk past its 5-minute allowance (2 calls) is skipped before any model call", () => {
    const b = batch({ dispatchId: 3, now: T0, messages: [msg("1", BOB, "chatter", T0)] });
    // T-4min and T-1min: two unaddressed calls in the window.
    const { run } = stepRun({ batch: b, restored: { budgetEvents: [[T0 - 4 * MIN, 500, 0], [T0 - MIN, 500, 0]] } });
    expect(checkDispatchBudget(run, parts(400), "unaddressed")).toEqual({ skip: "over-budget", detail: "unaddressed:5m:messages 2/2 +1" });
    expect(run.record.budgetRatio).toBe(1);
  });

  it("the next call's prompt must fit: a window's tokens are never overrun by the call that would cross it", () => {
    const b = batch({ dispatchId: 3, now: T0, messages: [msg("1", BOB, "chatter", T0)] });
    const { run } = stepRun({ batch: b, settings: { budget: { unaddressed: { "5m": { messages: 10, tokens: 1000 } } } }, restored: { budgetEvents: [[T0 - MIN, 900, 0]] } });
    // 900 used + a 400-character prompt (100 tokens) = 1000: fits; 404 characters (101 tokens) would not.
    expect(checkDispatchBudget(run, parts(400), "unaddressed")).toMatchObject({ budget: { pool: "unaddressed" } });
    expect(checkDispatchBudget(run, parts(404), "unaddressed")).toEqual({ skip: "over-budget", detail: "unaddressed:5m:tokens 900/1000 +1" });
  });

  it("a sender past their share of the addressed allowance is refused; the owner never is", () => {
    // Addressed 5m: 4 calls; bob's share 0.5 → 2, both used in the last 5 minutes. Bob is a
    // member the config names (`humans`): no strangers' class applies to him.
    const settings = { budget: { addressed: { "5m": { messages: 4, tokens: 100_000 } } }, senderShare: 0.5 };
    const restored = { senderCharges: [[T0 - 3 * MIN, 100, BOB], [T0 - MIN, 100, BOB]] as Array<[number, number, string]>, budgetEvents: [[T0 - 3 * MIN, 100, 1], [T0 - MIN, 100, 1]] as Array<[number, number, number]> };
    const fromBob = batch({ dispatchId: 5, now: T0, messages: [msg("1", BOB, "Alice?", T0, { isMention: true })] });
    expect(checkDispatchBudget(stepRun({ batch: fromBob, settings, restored, humans: [BOB] }).run, parts(40), "addressed")).toEqual({ skip: "sender-over-share", detail: `${BOB} addressed:5m:messages 2/2` });
    // Unnamed by the config, bob is a stranger: the strangers' class (0.5 of 4 = 2) is spent first.
    expect(checkDispatchBudget(stepRun({ batch: fromBob, settings, restored }).run, parts(40), "addressed")).toEqual({ skip: "strangers-over-share", detail: "strangers addressed:5m:messages 2/2" });
    const fromOwner = batch({ dispatchId: 5, now: T0, messages: [msg("1", OWNER, "Alice?", T0, { isMention: true })] });
    const { run } = stepRun({ batch: fromOwner, settings, restored });
    expect(checkDispatchBudget(run, parts(40), "addressed")).toMatchObject({ budget: { pool: "addressed" } });
    expect(run.record.payer).toBe(OWNER);
    // Checked against the owner's own calls only: none yet.
    expect(run.record.budgetRatio).toBe(0);
  });

  it("within budget: the ratio is stated, each call is charged to the pool and the payer, and the re-check leaves this dispatch's calls out", () => {
    const b = batch({ dispatchId: 7, now: T0, messages: [msg("1", BOB, "Alice?", T0, { isMention: true })] });
    const settings = { budget: { addressed: { "5m": { messages: 4, tokens: 100_000 } } } };
    const { run, m } = stepRun({ batch: b, settings, restored: { budgetEvents: [[T0 - MIN, 100, 1]] } });
    const priced = checkDispatchBudget(run, parts(40), "addressed");
    if ("skip" in priced || "again" in priced) throw new Error(`expected a budget, got ${JSON.stringify(priced)}`);
    expect(priced.budget.ratio).toBe(0.25);
    expect(run.record).toMatchObject({ budgetRatio: 0.25, payer: BOB });
    priced.budget.charge(T0 + 1000, 300);
    expect(m.state.budgetEvents).toEqual([[T0 - MIN, 100, 1], [T0 + 1000, 300, 1]]);
    expect(m.state.senderCharges).toEqual([[T0 + 1000, 300, BOB]]);
    expect(run.record.tokens).toBe(300);
    // After the send delay: 1 of 4 used by others — this dispatch's own call is paid for.
    expect(priced.budget.recheck(T0 + 5000)).toMatchObject({ ok: true, ratio: 0.25 });
  });
});
