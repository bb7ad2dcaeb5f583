// One dispatch, top to bottom: gate → prompt → budget → plan → model → intent → shape → dedup →
// delay → dedup against others → deliver. Each step returns the next step's input or a skip with
// its reason; the first skip ends the dispatch, and the run records it (run.ts).
import type { DispatchBatch, DispatchOutcome } from "../../types.ts";
import type { PromptParts } from "../assemble.ts";
import { budgetUsageRatio, pruneBudgetEvents, type BudgetPool } from "../budget.ts";
import { initDedup } from "../dedup.ts";
import { checkDispatchBudget, poolOf } from "./budget.ts";
import { deliver, prepareReply } from "./deliver.ts";
import { alreadyAnswered, gate, redelivery } from "./gate.ts";
import { callForReply, planReply, readIntent } from "./model.ts";
import { dedupOthers, dedupOwn, shape } from "./reply.ts";
import { DispatchRun, isSkip, type MonitorContext } from "./run.ts";
import { waitToSend } from "./wait.ts";

export async function runDispatch(m: MonitorContext, batch: DispatchBatch): Promise<DispatchOutcome> {
  const run = new DispatchRun(m, batch);
  if (m.lifetime.aborted) return run.skip({ skip: "group-closed" });
  await initDedup();
  // Answered before a restart (our reply came back in the history): never again.
  const answered = alreadyAnswered(run);
  if (answered) return run.skip(answered);
  const again = redelivery(run);
  if (again) return deliver(run, again.reply, again.notHandled);

  const gated = gate(run);
  if (isSkip(gated)) return run.skip(gated);
  const { parts, pool } = prompt(run);
  const priced = checkDispatchBudget(run, parts, pool);
  if (isSkip(priced)) return run.skip(priced);
  const { budget } = priced;
  const plan = await planReply(run, budget, parts);
  if (isSkip(plan)) return run.skip(plan);
  const called = await callForReply(run, budget, plan);
  const written = readIntent(run, plan, called);
  if (isSkip(written)) return run.skip(written);

  const shaped = shape(run, written);
  if (isSkip(shaped)) return run.skip(shaped);
  const unique = dedupOwn(run, shaped);
  if (isSkip(unique)) return run.skip(unique);
  const waited = await waitToSend(run, gated, plan.delayHint, budget);
  if (isSkip(waited)) return run.skip(waited);
  const fresh = dedupOthers(run, unique, gated.recentBefore);
  if (isSkip(fresh)) return run.skip(fresh);
  // Answered before a restart that lost our state (our reply came back in the history): never again.
  const answeredMeanwhile = alreadyAnswered(run);
  if (answeredMeanwhile) return run.skip(answeredMeanwhile);
  return deliver(run, prepareReply(run, fresh, { hasHuman: gated.hasHuman, ratio: budget.ratio, claim: waited.claim }));
}

/** The prompt for this batch, stating the budget used so far (its events pruned to the windows first). */
function prompt(run: DispatchRun): { parts: PromptParts; pool: BudgetPool } {
  const { m, batch } = run;
  m.state.budgetEvents = pruneBudgetEvents(m.state.budgetEvents, batch.now);
  const pool = poolOf(batch);
  return { parts: m.buildPrompt(batch, { budgetRatio: budgetUsageRatio(m.state.budgetEvents, m.settings.budget, batch.now, pool) }), pool };
}
