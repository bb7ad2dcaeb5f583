// The send delay (src/monitor/dispatch/wait.ts) on a fake clock, with literal times: how long a
// reply waits, and what ends the wait early or skips the reply after it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { checkDispatchBudget, type DispatchBudget } from "../../../src/monitor/dispatch/budget-gate.ts";
import { gate, type Gated } from "../../../src/monitor/dispatch/gate.ts";
import type { DispatchRun } from "../../../src/monitor/dispatch/run.ts";
import { waitToSend } from "../../../src/monitor/dispatch/wait.ts";
import type { DelayHint, DispatchBatch, InboundMessage } from "../../../src/types.ts";
import { T0, batch, msg, testGroup } from "../helpers.ts";
import { stepRun } from "./step.ts";

const BOB = "bob.agentcp.io";
const OWNER = "carol.agentcp.io";
const HELPER = "helper.agentcp.io";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

async function at(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
}

/** Runs the gates and the budget check for `run`, then starts the wait; settles into `out`. */
function startWait(run: DispatchRun, hint: DelayHint) {
  const gated = gate(run);
  if ("skip" in gated || "again" in gated) throw new Error(`gated: ${JSON.stringify(gated)}`);
  const priced = checkDispatchBudget(run, run.m.buildPrompt(run.batch, run.group.memory), run.batch.mentionInfo.mentioned ? "addressed" : "unaddressed");
  if ("skip" in priced || "again" in priced) throw new Error(`priced: ${JSON.stringify(priced)}`);
  const box: { out?: unknown; at?: number } = {};
  void waitToSend(run, gated as Gated, hint, priced.budget as DispatchBudget).then((out) => {
    box.out = out;
    box.at = Date.now() - T0;
  });
  return box;
}

const chatter = (): DispatchBatch => batch({ dispatchId: 3, now: T0, state: "ACTIVE", messages: [msg("1", BOB, "the build is slow today", T0)] });

describe("waitToSend", () => {
  it("T+0 an unaddressed normal reply (random 0) waits the short end of 8–20 s: goes at T+8s", async () => {
    const { run } = stepRun({ batch: chatter(), random: () => 0 });
    const w = startWait(run, "normal");
    await at(7999);
    expect(w.out).toBeUndefined();
    await at(8000);
    expect(w).toEqual({ out: { claim: undefined }, at: 8000 });
    expect(run.record.delayMs).toBe(8000);
  });

  it("T+0 a mention: no delay (delay.onMention is off), goes at T+0", async () => {
    const { run } = stepRun({ batch: batch({ dispatchId: 3, now: T0, messages: [msg("1", OWNER, "Alice?", T0, { isMention: true })] }) });
    const w = startWait(run, "fast");
    await at(0);
    expect(w).toEqual({ out: { claim: undefined }, at: 0 });
    expect(run.record.delayMs).toBe(0);
  });

  it("T+0 an unprompted reply waits; T+5s a mention arrives and ends the wait: skipped (newer-mention) at T+5s", async () => {
    let waiting = false;
    const wake = new AbortController();
    const { run } = stepRun({ batch: { ...chatter(), mentionSignal: wake.signal }, random: () => 0, group: testGroup({ mentionWaiting: () => waiting }) });
    const w = startWait(run, "normal");
    await at(5000);
    waiting = true;
    wake.abort();
    await at(5000);
    expect(w).toEqual({ out: { skip: "newer-mention", detail: "after-delay" }, at: 5000 });
  });

  it("T+0 waits; T+3s another dispatch uses the last unaddressed call: at T+8s skipped (over-budget), this dispatch's own call not counted", async () => {
    const { run, m } = stepRun({ batch: chatter(), random: () => 0, restored: { budgetEvents: [[T0 - 60_000, 100, 0]] } });
    const w = startWait(run, "normal");
    await at(3000);
    m.state.charge([T0 + 3000, 100, 0], undefined);
    await at(8000);
    expect(w).toEqual({ out: { skip: "over-budget", detail: "after-delay unaddressed:5m:messages 2/2 +1" }, at: 8000 });
  });

  it("closed during the wait: skipped (group-closed) at once", async () => {
    const { run, m } = stepRun({ batch: chatter(), random: () => 0 });
    const w = startWait(run, "normal");
    await at(2000);
    m.close();
    await at(2000);
    expect(w).toEqual({ out: { skip: "group-closed", detail: "after-delay" }, at: 2000 });
  });

  it("in a room: an open question is claimed after this agent's rank of the delay (T+9.631s); an agent's answer meanwhile makes it yield", async () => {
    const question = msg("1", BOB, "anyone know how to reset the mirror?", T0);
    const alone = stepRun({ batch: batch({ dispatchId: 3, now: T0, state: "ACTIVE", messages: [question] }), agents: [HELPER] });
    const w = startWait(alone.run, "normal");
    await at(9630);
    expect(w.out).toBeUndefined();
    await at(9631);
    expect(w).toEqual({ out: { claim: "1" }, at: 9631 });

    let held: InboundMessage[] = [];
    const answered = stepRun({ batch: batch({ dispatchId: 3, now: T0, state: "ACTIVE", messages: [question] }), agents: [HELPER], group: testGroup({ held: () => held }) });
    const y = startWait(answered.run, "normal");
    await at(9631 + 4000);
    held = [msg("2", HELPER, "run mirror-reset --all", T0 + 13_000)];
    await at(9631 + 9631);
    expect(y).toEqual({ out: { skip: "answered-by-other", detail: `after-delay 1:by:${HELPER}` }, at: 9631 + 9631 });
  });
});
