// One dispatch, top to bottom: gate → prompt → budget → plan → model → intent → shape → dedup →
// delay → dedup against others → deliver. Each step returns the next step's input or how the
// dispatch ends (a skip with its reason, or a retry); the first such end is the outcome, and the
// run records it (run.ts).
import type { DispatchBatch, GroupContext } from "../../types.ts";
import type { PromptParts } from "../assemble.ts";
import { budgetUsageRatio, type BudgetPool } from "../budget-windows.ts";
import { dedupReady } from "../dedup.ts";
import { checkDispatchBudget, poolOf } from "./budget-gate.ts";
import { deliver, prepareReply } from "./deliver.ts";
import { alreadyAnswered, gate, redelivery } from "./gate.ts";
import { callForReply, planReply, readIntent } from "./model.ts";
import { dedupOthers, dedupOwn, shape } from "./reply.ts";
import { DispatchRun, isStop, type Ended, type MonitorContext } from "./run.ts";
import { waitToSend } from "./wait.ts";

export async function runDispatch(m: MonitorContext, batch: DispatchBatch, group: GroupContext): Promise<Ended> {
  const run = new DispatchRun(m, batch, group);
  if (m.lifetime.aborted) return run.skip({ skip: "group-closed" });
  await dedupReady;
  // Answered before a restart (our reply came back in the history): never again.
  const answered = alreadyAnswered(run);
  if (answered) return run.skip(answered);
  const again = redelivery(run);
  if (again) return deliver(run, again.reply, again.notHandled);

  const gated = gate(run);
  if (isStop(gated)) return run.stop(gated);
  const { parts, pool } = prompt(run);
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
  const waited = await waitToSend(run, gated, plan.delayHint, budget);
  if (isStop(waited)) return run.stop(waited);
  const fresh = dedupOthers(run, unique, gated.recentBefore);
  if (isStop(fresh)) return run.stop(fresh);
  // Answered before a restart that lost our state (our reply came back in the history): never again.
  const answeredMeanwhile = alreadyAnswered(run);
  if (answeredMeanwhile) return run.skip(answeredMeanwhile);
  return deliver(run, prepareReply(run, fresh, { hasHuman: gated.hasHuman, ratio: budget.ratio, claim: waited.claim }));
}

/** The prompt for this batch, stating the budget used so far (its events pruned to the windows first). */
function prompt(run: DispatchRun): { parts: PromptParts; pool: BudgetPool } {
  const { m, batch } = run;
  m.state.pruneBudget(batch.now);
  const pool = poolOf(batch);
  return { parts: m.buildPrompt(batch, run.group.memory, { budgetRatio: budgetUsageRatio(m.state.budgetEvents, m.settings.budget, batch.now, pool) }), pool };
}
