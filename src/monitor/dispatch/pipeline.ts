// One dispatch, top to bottom: gate → prompt → budget → plan → model → intent → shape → dedup →
// delay → dedup against others → deliver. Each step returns the next step's input or how the
// dispatch ends (a skip with its reason, or a retry); the first such end is the outcome, and the
// run records it (run.ts). Which steps a dispatch takes depends on its kind of conversation (STEPS).
import type { ConversationRef, DispatchBatch, GroupContext, InboundMessage } from "../../types.ts";
import type { PromptParts } from "../assemble.ts";
import { budgetUsageRatio, type BudgetPool } from "../budget-windows.ts";
import { dedupReady } from "../dedup.ts";
import { checkDispatchBudget, poolOf } from "./budget-gate.ts";
import { deliver, prepareReply } from "./deliver.ts";
import { alreadyAnswered, directGate, gate, orphanContext, redelivery } from "./gate.ts";
import { callForReply, planReply, readIntent } from "./model.ts";
import { dedupOthers, dedupOwn, shape } from "./reply.ts";
import { DispatchRun, isStop, type Ended, type MonitorContext } from "./run.ts";
import { waitToSend } from "./wait.ts";

/**
 * The steps that differ by kind of conversation; every other step (prompt, budget and the sender's
 * share, the two-phase plan, the model call, reading the intent, shaping, the check against our
 * own recent replies, the end check, deliver) is taken by both. A direct message is addressed by
 * definition and answered at once: no gate (vitality, loop guard, the floor — a direct exchange
 * has its own limits, src/direct/), no send delay, no others to repeat; and no history echo
 * settles it (its own bookkeeping does, src/direct/journal.ts).
 */
export const STEPS = {
  group: { answeredInHistory: true, gate: true, sendDelay: true, dedupOthers: true },
  direct: { answeredInHistory: false, gate: false, sendDelay: false, dedupOthers: false },
} as const satisfies Record<ConversationRef["kind"], Record<string, boolean>>;

export async function runDispatch(m: MonitorContext, batch: DispatchBatch, group: GroupContext): Promise<Ended> {
  const run = new DispatchRun(m, batch, group);
  const steps = STEPS[m.conversation.kind];
  if (m.lifetime.aborted) return run.skip({ skip: "group-closed" });
  await dedupReady;
  // Answered before a restart (our reply came back in the history): never again.
  const answered = steps.answeredInHistory ? alreadyAnswered(run) : undefined;
  if (answered) return run.skip(answered);
  const again = redelivery(run);
  if (again) return deliver(run, again.reply, again.notHandled);

  // Every group batch is traffic the unaddressed allowance's pace counts (budget.unaddressedEvery).
  if (steps.gate && m.settings.budget.unaddressedEvery > 0) m.state.countTraffic(run.others.length, m.settings.budget.unaddressedEvery);
  const gated = steps.gate ? gate(run) : directGate(run);
  if (isStop(gated)) return run.stop(gated);
  const { parts, pool } = prompt(run, batch.orphan !== undefined ? orphanContext(run, gated.recentBefore) : undefined);
  const priced = checkDispatchBudget(run, parts, pool);
  if (isStop(priced)) return run.stop(priced);
  const { budget } = priced;
  const plan = await planReply(run, budget, parts);
  if (isStop(plan)) return run.stop(plan);
  const called = await callForReply(run, budget, plan);
  if (isStop(called)) return run.stop(called);
  const written = readIntent(run, plan, called);
  if (isStop(written)) return run.stop(written);

  const shaped = shape(run, written);
  if (isStop(shaped)) return run.stop(shaped);
  const unique = dedupOwn(run, shaped);
  if (isStop(unique)) return run.stop(unique);
  const waited = steps.sendDelay ? await waitToSend(run, gated, plan.delayHint, budget) : { claim: undefined };
  if (isStop(waited)) return run.stop(waited);
  const fresh = steps.dedupOthers ? dedupOthers(run, unique, gated.recentBefore) : unique;
  if (isStop(fresh)) return run.stop(fresh);
  // Answered before a restart that lost our state (our reply came back in the history): never again.
  const answeredMeanwhile = steps.answeredInHistory ? alreadyAnswered(run) : undefined;
  if (answeredMeanwhile) return run.skip(answeredMeanwhile);
  // The conversation ended while the reply was written (a direct peer's end marker, a limit).
  if (group.endedBy !== undefined) return run.skip({ skip: "conversation-ended", detail: group.endedBy });
  return deliver(run, prepareReply(run, fresh, { hasHuman: gated.hasHuman, ratio: budget.ratio, claim: waited.claim }));
}

/** The prompt for this batch, stating the budget used so far (its events pruned to the windows first). */
function prompt(run: DispatchRun, messages?: readonly InboundMessage[]): { parts: PromptParts; pool: BudgetPool } {
  const { m, batch } = run;
  m.state.pruneBudget(batch.now);
  const pool = poolOf(batch);
  const shown = messages === undefined ? batch : { ...batch, messages };
  return { parts: m.buildPrompt(shown, run.group.memory, { budgetRatio: budgetUsageRatio(m.state.budgetEvents, m.settings.budget, batch.now, pool) }), pool };
}
