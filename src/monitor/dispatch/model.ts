// The model's part of a dispatch: the optional two-phase decision call, the reply call, and reading
// what came back as a reply or a silence. Every call is paid for through the dispatch's budget; a
// failure a retry can fix goes back to the group client as a retry, any other ends the dispatch.
import { errorFields } from "../../log.ts";
import type { DelayHint, GenerateRequest, ReplyType, TwoPhaseDecision } from "../../types.ts";
import type { PromptParts } from "../assemble.ts";
import { estimateTokens } from "../token-estimate.ts";
import { delayHintFor } from "../delay.ts";
import { DECIDE_INSTRUCTION, parseDecision, parseIntent } from "../intent.ts";
import { minReplyType } from "../reply-policy.ts";
import type { DispatchBudget } from "./budget-gate.ts";
import type { Again, DispatchRun, Step } from "./run.ts";

/** What the reply call is asked with: the prompt, and how soon the reply should go. */
export interface Planned {
  readonly parts: PromptParts;
  readonly delayHint: DelayHint;
  /** Two-phase: the decision behind them, handed back with a retry of the reply call. */
  readonly decision?: TwoPhaseDecision;
}

/** A reply the model wrote, before it is shaped. */
export interface Written {
  readonly text: string;
  readonly replyType: ReplyType;
}

/**
 * One model call. The text, or undefined when the call failed for good or the monitor closed; a
 * failure a retry can fix (timeout, 5xx, a busy host) comes back as `again`, so the group client
 * re-queues the batch with backoff.
 */
async function callModel(run: DispatchRun, budget: DispatchBudget, prompt: PromptParts, phase?: "decide" | "reply"): Promise<string | undefined | Again> {
  const { m, batch, record } = run;
  const request: GenerateRequest = {
    identityId: m.identityId,
    groupId: m.groupId,
    ...(m.conversation.kind === "direct" ? { conversation: m.conversation } : {}),
    dispatchId: batch.dispatchId,
    trigger: batch.mentionInfo.triggerType,
    systemPrompt: prompt.systemPrompt,
    stablePrefix: prompt.stablePrefix,
    body: phase === "decide" ? `${prompt.body}\n\n${DECIDE_INSTRUCTION}` : prompt.body,
    messages: run.others,
    mentionInfo: batch.mentionInfo,
    replyType: prompt.replyType,
    maxChars: m.settings.replyPolicy.maxCharsPerMessage,
    signal: m.lifetime,
    ...(phase ? { phase } : {}),
  };
  const calledAt = run.nowAt();
  record.modelCalls++;
  let result;
  try {
    result = await m.backend.generate(request);
  } catch (err) {
    if (m.lifetime.aborted) return undefined;
    const retryable = (err as { retryable?: unknown } | null)?.retryable !== false;
    // A retried one is at debug: the dispatch's record and the group client's retry line say it.
    m.log.log(retryable ? "debug" : "warn", "monitor.backend-failed", { dispatchId: batch.dispatchId, phase: phase ?? "reply", retryable, ...errorFields(err) });
    // A transient failure (timeout, 5xx, a busy host) goes back to the group client, which
    // re-queues the batch with backoff; one that a retry cannot fix (bad request, auth) ends here.
    return retryable ? { again: "backend-failed", error: err } : undefined;
  }
  if (typeof result?.text !== "string") {
    m.log.log("warn", "monitor.backend-failed", { dispatchId: batch.dispatchId, phase: phase ?? "reply", error: "back-end returned no text" });
    return undefined;
  }
  const tokens = result.usage ? result.usage.promptTokens + result.usage.completionTokens : estimateTokens(request.systemPrompt) + estimateTokens(request.body) + estimateTokens(result.text);
  budget.charge(calledAt, tokens);
  return result.text;
}

/**
 * Two-phase (`decision: "two-phase"`): a first call asks whether to reply, how long and how soon;
 * the reply call then gets a prompt for that reply type. A retry after a failed reply call reuses
 * the decision: it was made and paid for already. Single-phase: the prompt as it is.
 */
export async function planReply(run: DispatchRun, budget: DispatchBudget, parts: PromptParts): Promise<Step<Planned>> {
  const { m, batch, record } = run;
  record.replyType = parts.replyType;
  record.replyTypeReason = parts.replyTypeReason;
  if (m.settings.decision !== "two-phase") return { parts, delayHint: delayHintFor(parts.replyType) };
  const carried = batch.carried?.decision;
  let d: TwoPhaseDecision | undefined = carried !== undefined && [...carried.ids].every((id) => run.batchIds.has(id)) ? carried : undefined;
  if (d === undefined) {
    const raw = await callModel(run, budget, parts, "decide");
    if (m.lifetime.aborted) return { skip: "group-closed" };
    if (raw === undefined) return { skip: "backend-failed", detail: "decide" };
    if (typeof raw !== "string") return raw;
    const parsed = parseDecision(raw);
    if (!parsed.ok) return { skip: "silent", detail: "decision-unparseable" };
    if (!parsed.decision.wantToReply) return { skip: "two-phase-declined" };
    const replyType = minReplyType(parts.replyType, parsed.decision.replyType ?? parts.replyType);
    d = { ids: run.batchIds, replyType, delayHint: parsed.decision.delayHint ?? delayHintFor(replyType) };
  } else record.detail = "decision-reused";
  const planned: Planned = { parts: m.buildPrompt(batch, run.group.memory, { budgetRatio: budget.ratio, replyType: d.replyType }), delayHint: d.delayHint, decision: d };
  record.replyType = d.replyType;
  return planned;
}

/**
 * The reply call: what the model wrote, or undefined when the call failed for good or the monitor
 * closed. A failure a retry can fix goes back with the two-phase decision: it was made and paid for.
 */
export async function callForReply(run: DispatchRun, budget: DispatchBudget, plan: Planned): Promise<Step<{ raw: string | undefined }>> {
  const raw = await callModel(run, budget, plan.parts, run.m.settings.decision === "two-phase" ? "reply" : undefined);
  if (raw !== undefined && typeof raw !== "string") return plan.decision ? { ...raw, carry: { decision: plan.decision } } : raw;
  return { raw };
}

/** Reply or silence: an empty reply or the NO_REPLY token is a silence, a success that sends nothing. */
export function readIntent(run: DispatchRun, plan: Planned, called: { raw: string | undefined }): Step<Written> {
  const intent = called.raw === undefined ? undefined : parseIntent(called.raw);
  // A back-end that keeps a history stored this reply; from here on it hears what became of it.
  if (intent?.reply) run.replyWrittenBy(run.batch.dispatchId);
  if (run.m.lifetime.aborted) return { skip: "group-closed" };
  if (intent === undefined) return { skip: "backend-failed" };
  if (!intent.reply) return { skip: "silent", detail: intent.reason };
  return { text: intent.text, replyType: run.record.replyType ?? plan.parts.replyType };
}
