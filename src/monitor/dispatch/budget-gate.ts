// The budget of one dispatch: the allowance it draws from (addressed or unaddressed talk), who pays
// for an addressed call (one sender's share is bounded), the check before the first model call —
// the prompt's own size must fit, and unaddressed talk keeps to the channel's pace (the room's
// reaction to a line of ours is not unaddressed) — and the bookkeeping of every call it makes.
import type { DispatchBatch } from "../../types.ts";
import type { PromptParts } from "../assemble.ts";
import { estimateTokens } from "../token-estimate.ts";
import { checkBudget, describeOverBudget, paceScaledOrphanAllowance, poolFlag, type BudgetCheck, type BudgetEvent, type BudgetPool } from "../budget-windows.ts";
import type { BudgetSettings } from "../../types.ts";
import { choosePayer, describeOverShare, ownerBudgetEvents } from "../sender-share.ts";
import { isNamedByConfig } from "../../members/member-types.ts";
import type { DispatchRun, Step } from "./run.ts";

/** Addressed talk (a mention, a reply to us, an engaged follow-up) draws from its own allowance. */
export function poolOf(batch: DispatchBatch): BudgetPool {
  if (batch.mentionInfo.triggerType === "orphan") return "orphan";
  return batch.mentionInfo.mentioned || batch.mentionInfo.triggerType === "engaged" ? "addressed" : "unaddressed";
}

/** What one dispatch may spend, and what it has spent. */
export class DispatchBudget {
  readonly #run: DispatchRun;
  readonly pool: BudgetPool;
  /** Who the addressed call is charged to (lower-cased aid), when someone addressed us. */
  readonly #payer: string | undefined;
  /** The owner pays: checked against the allowance counting only the owner's own calls. */
  readonly #owner: boolean;
  /** The budget usage ratio before the first call (found by {@link check}). */
  #ratio = 0;
  /** The allowances checked: the orphan pool's widened by the channel's pace (budget-windows.ts). */
  readonly #settings: BudgetSettings;
  /** This dispatch's own model calls (paid for; the re-check after the send delay leaves them out). */
  readonly #own: BudgetEvent[] = [];

  constructor(run: DispatchRun, pool: BudgetPool, payer: { payer: string | undefined; owner: boolean }) {
    this.#run = run;
    this.pool = pool;
    this.#payer = payer.payer;
    this.#owner = payer.owner;
    const { settings, state } = run.m;
    this.#settings = pool === "orphan" ? paceScaledOrphanAllowance(settings.budget, settings.orphans.maxAgentShare, (ms) => state.linesIn(ms, run.batch.now)) : settings.budget;
  }

  get ratio(): number {
    return this.#ratio;
  }

  /** The gate's check before the first call, the next call's prompt counted in; the ratio it finds is kept. */
  check(now: number, nextCallTokens: number): BudgetCheck {
    const check = checkBudget({ events: this.events(), settings: this.#settings, now, pool: this.pool, nextCallTokens });
    this.#ratio = check.ratio;
    return check;
  }

  /** The events the pool is checked against. The owner's allowance counts only their own calls: others cannot use it up. */
  events(): readonly BudgetEvent[] {
    const state = this.#run.m.state;
    return this.#owner && this.#payer !== undefined ? ownerBudgetEvents(state.senderCharges, this.#payer) : state.budgetEvents;
  }

  /** One model call of `tokens` at server time `calledAt`: the windows, the payer's share, the record, the saved state. */
  charge(calledAt: number, tokens: number): void {
    const { m, record } = this.#run;
    const event: BudgetEvent = [calledAt, tokens, poolFlag(this.pool)];
    this.#own.push(event);
    m.state.charge(event, this.#payer);
    record.tokens += tokens;
    m.emitState();
  }

  /** After the send delay: has anything else used the budget up meanwhile? This dispatch's own calls are paid for. */
  recheck(now: number): BudgetCheck {
    const own = this.#own;
    return checkBudget({ events: this.events().filter((e) => !own.some((o) => o[0] === e[0] && o[1] === e[1])), settings: this.#settings, now, pool: this.pool });
  }
}

/**
 * The budget gate before the model call: who pays (a sender past their share is refused), then the
 * pool's windows with the next call's prompt counted in, so a window is never overrun by the call
 * that would cross it.
 */
export function checkDispatchBudget(run: DispatchRun, parts: PromptParts, asked: BudgetPool): Step<{ budget: DispatchBudget }> {
  const { m, batch, record } = run;
  const { settings, state } = m;
  const every = settings.budget.unaddressedEvery;
  // The first plain batch after a line of ours that answered talk addressed to us is the room's
  // reaction to it: part of a conversation we are in, not joining in unprompted. Once per line of
  // ours, it draws from the addressed allowance (as a line that may be ours does), paid by nobody
  // in particular. After a line we said unprompted it stays unaddressed talk, on its windows:
  // replying to the room would otherwise buy the next look on the addressed allowance, for ever.
  const reaction = asked === "unaddressed" && every > 0 && state.reactionDue(run.group.memory.lastSelfSpeakAt);
  const pool: BudgetPool = reaction ? "addressed" : asked;
  record.budgetPool = pool;
  run.unprompted = pool === "unaddressed" || reaction;
  const nextCallTokens = estimateTokens(parts.systemPrompt) + estimateTokens(parts.body);
  state.pruneCharges(batch.now);
  const payer =
    pool === "addressed" && !reaction
      ? choosePayer({
          messages: run.others,
          owner: m.identity.owner,
          charges: state.senderCharges,
          settings: settings.budget,
          share: settings.senderShare,
          isStranger: (sender) => !isNamedByConfig(m.memberTypes.typeOf(sender)),
          strangerShare: settings.strangerShare,
          now: batch.now,
          nextCallTokens,
        })
      : ({ ok: true, payer: undefined, owner: false } as const);
  if (!payer.ok) return { skip: payer.reason, detail: describeOverShare(payer) };
  if (payer.payer !== undefined) record.payer = payer.payer;
  const budget = new DispatchBudget(run, pool, payer);
  const check = budget.check(batch.now, nextCallTokens);
  record.budgetRatio = check.ratio;
  if (!check.ok) return { skip: "over-budget", detail: describeOverBudget(check) };
  if (reaction) state.spendTraffic(every, batch.now);
  else if (pool === "unaddressed" && settings.budget.enabled && every > 0) {
    // Joining in follows the channel's pace: one unaddressed call per `every` lines of others.
    // After a line of ours (said unprompted: see above) the next batch may look at once.
    const seen = state.spokeSinceLook(run.group.memory.lastSelfSpeakAt) ? every : state.traffic(every);
    if (seen < every) return { skip: "over-budget", detail: `unaddressed:pace:messages ${seen}/${every} +${every - seen}` };
    state.spendTraffic(every, batch.now);
  }
  return { budget };
}
