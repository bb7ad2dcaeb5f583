// The send delay: a random wait by reply type (none for a mention unless configured), then the
// re-checks — closed, a newer mention, the budget, and in a room the floor, which may have moved
// to another open question: then this agent waits its turn for that one too.
import type { DelayHint } from "../../types.ts";
import { wait } from "../../util/wait.ts";
import { chooseDelayMs, checkAfterDelay } from "../delay.ts";
import { decideFloor } from "../floor.ts";
import type { DispatchBudget } from "./budget-gate.ts";
import type { Gated } from "./gate.ts";
import type { DispatchRun, Step } from "./run.ts";

/** Waits out the send delay. The open question the reply claims (in a room), if any. */
export async function waitToSend(run: DispatchRun, gated: Gated, planned: DelayHint, budget: DispatchBudget): Promise<Step<{ claim: string | undefined }>> {
  const { m, batch, record, others } = run;
  // An orphaned question has waited its grace already: its send delay only orders the agents (the
  // short range), so the first answer is out before the next agent's turn of the spread.
  const delayHint: DelayHint = batch.orphan !== undefined ? "fast" : planned;
  const mentioned = batch.mentionInfo.mentioned;
  let floor = gated.floor;
  // The draw is taken either way, so a reply outside the floor keeps the same delays.
  const draw = m.random();
  if (floor !== undefined) {
    // Answers that came in while the model wrote.
    floor = decideFloor({ batch: others, seen: run.seenAround(gated.recentBefore), ctx: m.floorContext });
    if (floor.take === "yield") return { skip: floor.reason, detail: floor.detail };
  }
  // Claiming a question: the send waits this agent's rank of the delay range, so the agents of a
  // room speak in turn and each later one sees the earlier answer before its own goes out.
  const delayMs = chooseDelayMs({ settings: m.settings.delay, hint: delayHint, mentioned, random: floor?.take === "claim" ? floor.rank : draw });
  record.delayMs = delayMs;
  let waitMs = delayMs;
  let waitedFor = floor?.take === "claim" ? floor.question : undefined;
  for (;;) {
    await sendDelay(waitMs, m.lifetime, batch.mentionSignal);
    const after = checkAfterDelay({
      closed: m.lifetime.aborted,
      answeringMention: mentioned,
      // An orphaned question is answered before a mention that came meanwhile (which waits for it).
      newerMention: batch.orphan === undefined && run.group.mentionWaiting,
      budget: budget.recheck(run.nowAt()),
    });
    if (!after.ok) return { skip: after.reason, detail: after.detail ? `after-delay ${after.detail}` : "after-delay" };
    if (batch.orphan !== undefined) {
      const ageMs = run.nowAt() - (others[0]?.timestamp ?? batch.now);
      if (ageMs > m.settings.orphans.freshMs) return { skip: "orphan-stale", detail: `after-delay ${batch.orphan}:age:${Math.round(ageMs / 1000)}s` };
    }
    if (floor === undefined) break;
    floor = decideFloor({ batch: others, seen: run.seenAround(gated.recentBefore), ctx: m.floorContext });
    if (floor.take === "yield") return { skip: floor.reason, detail: `after-delay ${floor.detail}` };
    // The question waited for was answered, another of the batch is open: wait this agent's turn
    // for that one too, or every agent that switched to it would answer it at once.
    if (floor.take !== "claim" || floor.question === waitedFor) break;
    waitedFor = floor.question;
    waitMs = chooseDelayMs({ settings: m.settings.delay, hint: delayHint, mentioned, random: floor.rank });
    record.delayMs += waitMs;
  }
  return { claim: floor?.take === "claim" ? floor.question : undefined };
}

/**
 * Waits `ms` to look human, or less: the monitor closing (`lifetime`) or a newer mention (`wake`)
 * ends the wait at once. Never rejects: the checks after the delay say what the early end means.
 */
export async function sendDelay(ms: number, lifetime: AbortSignal, wake: AbortSignal | undefined): Promise<void> {
  try {
    await wait(ms, wake ? AbortSignal.any([lifetime, wake]) : lifetime);
  } catch {
    // Cut short: closed or woken.
  }
}
