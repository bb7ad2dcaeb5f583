// The agent side of a dispatch: gates, prompt, model call, post-processing, delay, deliver.
// Every decision is a pure sibling; this file wires them to the back-end, the transport, one
// abortable delay timer per dispatch, and the per-(identity, group) state that survives restarts.
import { MemberDirectory, type MemberTypes } from "../group/member-types.ts";
import { monotonicNow } from "../group/local-clock.ts";
import { addressReply } from "./reply-address.ts";
import { DelayWaits } from "./delay-waits.ts";
import { childLogger, errorFields, silentLogger } from "../log.ts";
import type {
  AgentBackend,
  Clock,
  DispatchBatch,
  DispatchHandler,
  DispatchOutcome,
  GenerateRequest,
  GroupSender,
  GroupMessage,
  GroupSettings,
  IdentityConfig,
  InboundMessage,
  Logger,
  PersistedGroupState,
  ReplySettlement,
  ReplyType,
  SkipReason,
} from "../types.ts";
import { assembleDispatchPrompt, type PromptParts } from "./assemble.ts";
import { budgetUsageRatio, checkBudget, describeOverBudget, estimateTokens, pruneBudgetEvents, recordBudgetEvent, type BudgetEvent, type BudgetPool } from "./budget.ts";
import { allAnswered, answeredThroughOf } from "../group/answered.ts";
import { checkDuplicate, hashNormalized, initDedup, normalizeForDedup, rememberReply, type ReplyMemory } from "./dedup.ts";
import { stripControls } from "./sanitize.ts";
import { checkAfterDelay, chooseDelayMs, delayHintFor } from "./delay.ts";
import { DECIDE_INSTRUCTION, hasNoReplyToken, parseDecision, parseIntent } from "./intent.ts";
import { sharedAcpSystemPrompt } from "./identity-shared.ts";
import { checkLoopGuard, nextAgentChain } from "./loop-guard.ts";
import type { OwnReply } from "./prompt.ts";
import { cleanOutboundText } from "./outbound.ts";
import { minReplyType, toReaction, trimReply } from "./reply-policy.ts";
import { decisionLogFields, type DispatchDecision } from "./decision.ts";
import { choosePayer, describeOverShare, ownerBudgetEvents, pruneSenderCharges, recordSenderCharge, type SenderCharge } from "./sender-share.ts";
import { checkOthersDuplicate, ReplyNotDeliveredError, sendPrepared, type PreparedReply } from "./send-gates.ts";
import { decideFloor, findAnswer, onlyAgentAnswers, type FloorContext } from "./floor.ts";

export type { DispatchDecision } from "./decision.ts";

/** The monitor's part of {@link PersistedGroupState}. */
export type MonitorSnapshot = Pick<PersistedGroupState, "lastSelfSpeakAt" | "replyHashes" | "replyTexts" | "budgetEvents" | "agentChain" | "senderCharges">;

export interface MonitorParams {
  identityId: string;
  identity: IdentityConfig;
  groupId: string;
  settings: GroupSettings;
  /** Senders treated as human; the identity's owner always is. */
  humans: readonly string[];
  /** Senders treated as agents (config `agents`). Used only when `memberTypes` is not given. */
  agents?: readonly string[];
  /**
   * The identity's member directory (config + group service + fetched agent.md), shared by its
   * groups. Default: one built from `humans`, `agents` and the owner alone.
   */
  memberTypes?: MemberTypes;
  backend: AgentBackend;
  sender: GroupSender;
  logger?: Logger;
  /** One draw in [0, 1) per delayed send. Tests and replay pass a seeded one. */
  random?: () => number;
  /** Local clock for time elapsed inside a dispatch: the group client's (default, monotonic). */
  clock?: Clock;
  restored?: Partial<PersistedGroupState>;
  /** After every change worth persisting (budget event, sent reply, agent chain). */
  onStateChange?: (state: MonitorSnapshot) => void;
  /** The one structured record per dispatch (also logged as `monitor.dispatch`). */
  onDecision?: (record: DispatchDecision) => void;
}

export interface GroupMonitor {
  handle: DispatchHandler;
  snapshot(): MonitorSnapshot;
  /** The exact prompt the next model call for `batch` would get, with the current state. No model call. */
  buildPrompt(batch: DispatchBatch): PromptParts;
  /**
   * One of our own messages came back (echo, or history after a restart): its text joins the
   * reply memory, its time the last-speak time, and a dispatch of what it answered is skipped.
   */
  rememberOwnMessage(m: Pick<GroupMessage, "msgId" | "content" | "timestamp" | "metadata">): void;
  close(): void;
}

export function createGroupMonitor(p: MonitorParams): GroupMonitor {
  const { settings, identity, groupId } = p;
  const selfAid = identity.aid;
  const logger = childLogger(p.logger ?? silentLogger, { identity: p.identityId, group: groupId });
  const random = p.random ?? Math.random;
  // The group client's clock: `batch.now` is server time estimated on it, and elapsed time added
  // to it must come from the same clock (a wall-clock step would move it by the step).
  const localNow = p.clock ? () => p.clock!.now() : monotonicNow;
  const memberTypes = p.memberTypes ?? new MemberDirectory({ humans: p.humans, agents: p.agents ?? [], owner: identity.owner });
  // Per identity, not per group (shared across its groups: memory per runtime group).
  const stablePrefix = sharedAcpSystemPrompt(identity);
  // Aborted by close(): cancels in-flight model calls and pending send delays.
  const lifetime = new AbortController();
  const delays = new DelayWaits(lifetime.signal);

  let lastSelfSpeakAt = p.restored?.lastSelfSpeakAt ?? null;
  let memory: ReplyMemory = { hashes: p.restored?.replyHashes ?? [], texts: p.restored?.replyTexts ?? [] };
  let budgetEvents: BudgetEvent[] = [...(p.restored?.budgetEvents ?? [])].map((e) => [e[0], e[1], e[2]]);
  let agentChain = p.restored?.agentChain ?? 0;
  // Who paid for each addressed call (src/monitor/sender-share.ts): one sender's share is bounded.
  let senderCharges: SenderCharge[] = (p.restored?.senderCharges ?? []).map((c) => [c[0], c[1], c[2]]);
  let ownReplies: OwnReply[] = [];
  /** Other members' latest messages from earlier batches (dedup.othersHistorySize), oldest first. */
  let othersRecent: InboundMessage[] = [];
  /** A reply whose send never left, or may not have: delivered by the batch's retry, without a new model call. */
  let unsent: PreparedReply | undefined;
  /** Two-phase: the decision of a batch whose reply call failed, so its retry neither decides nor pays again. */
  let decided: { ids: ReadonlySet<string>; replyType: ReplyType; delayHint: ReturnType<typeof delayHintFor> } | undefined;
  // The newest msg id our own returning messages say they answered (src/group/answered.ts).
  let answeredThrough: number | undefined;
  const floorContext: FloorContext = { selfAid, isAgent: (sender) => memberTypes.typeOf(sender).type === "agent" };

  const snapshot = (): MonitorSnapshot => ({
    lastSelfSpeakAt,
    replyHashes: [...memory.hashes],
    replyTexts: [...memory.texts],
    budgetEvents: budgetEvents.map((e) => [e[0], e[1], e[2]]),
    agentChain,
    // Left out while empty: a group nobody addressed saves what it saved before.
    ...(senderCharges.length > 0 ? { senderCharges: senderCharges.map((c): [number, number, string] => [c[0], c[1], c[2]]) } : {}),
  });
  const emitState = () => safeCall(() => p.onStateChange?.(snapshot()), "monitor.on-state-change-failed");
  function safeCall(fn: () => void, event: string): void {
    try {
      fn();
    } catch (err) {
      logger.log("error", event, errorFields(err));
    }
  }

  const buildPrompt = (batch: DispatchBatch, overrides: { replyType?: ReplyType; budgetRatio?: number } = {}): PromptParts =>
    assembleDispatchPrompt({
      identity,
      settings,
      batch,
      budgetRatio: overrides.budgetRatio ?? budgetUsageRatio(budgetEvents, settings.budget, batch.now, poolOf(batch)),
      lastSelfSpeakAt,
      ownReplies,
      replyType: overrides.replyType,
      stablePrefix,
      memberTypes,
    });

  // Handled conditions come back as outcomes; only a bug throws, and then the group client retries.
  async function handle(batch: DispatchBatch): Promise<DispatchOutcome> {
    try {
      return await runDispatch(batch);
    } catch (err) {
      // A back-end failure handed to the group client's retry is its one warn line there
      // (group.dispatch-failed, with the cause); anything else thrown here is a bug.
      const level = retriedFailures.has(err as object) ? "debug" : "error";
      logger.log(level, "monitor.dispatch-failed", { dispatchId: batch.dispatchId, attempt: batch.attempt, ...errorFields(err) });
      throw err;
    }
  }

  async function runDispatch(batch: DispatchBatch): Promise<DispatchOutcome> {
    const started = localNow();
    const nowAt = () => batch.now + (localNow() - started);
    const record: DispatchDecision = {
      identityId: p.identityId,
      groupId,
      dispatchId: batch.dispatchId,
      attempt: batch.attempt,
      trigger: batch.mentionInfo.triggerType,
      at: batch.now,
      messageIds: batch.messages.map((m) => m.msgId),
      addressing: batch.messages.flatMap((m) => (m.addressing ? [{ msgId: m.msgId, reason: m.addressing }] : [])),
      vitality: batch.vitality,
      mentionInfo: batch.mentionInfo,
      replyType: null,
      budgetRatio: 0,
      budgetPool: poolOf(batch),
      modelCalls: 0,
      tokens: 0,
      delayMs: 0,
      agentChain,
      outcome: { sent: false },
    };
    // The dispatch whose model call wrote the reply now in play (this one, or the one whose reply
    // a retry delivers): the back-end hears what the group saw of it.
    let writtenBy: number | undefined;
    const finish = (outcome: DispatchOutcome, detail?: string): DispatchOutcome => {
      if (writtenBy !== undefined) {
        const about = { identityId: p.identityId, groupId, dispatchId: writtenBy };
        const s: ReplySettlement = outcome.sent ? { ...about, sent: true, text: outcome.text ?? "" } : { ...about, sent: false, reason: outcome.skipReason ?? "silent" };
        safeCall(() => p.backend.settled?.(s), "monitor.backend-settled-failed");
      }
      record.outcome = outcome;
      if (detail) record.detail = detail;
      record.agentChain = agentChain;
      const level = outcome.skipReason === "send-failed" || outcome.skipReason === "backend-failed" ? "warn" : "info";
      logger.log(level, "monitor.dispatch", decisionLogFields(record));
      safeCall(() => p.onDecision?.(record), "monitor.on-decision-failed");
      return outcome;
    };
    const skip = (reason: SkipReason, detail?: string): DispatchOutcome =>
      finish({ sent: false, skipReason: reason, budgetRatio: record.budgetRatio, ...(record.replyType ? { replyType: record.replyType } : {}) }, detail);

    if (lifetime.signal.aborted) return skip("group-closed");
    await initDedup();
    const others: InboundMessage[] = batch.messages.filter((m) => m.sender !== selfAid);
    // Answered before a restart (our reply came back in the history): never again.
    if (allAnswered(others, answeredThrough)) return skip("already-answered", `through:${answeredThrough}`);
    const batchIds = new Set(batch.messages.map((m) => m.msgId));
    if (unsent !== undefined) {
      const pending = unsent;
      unsent = undefined;
      // The retry of the batch whose reply did not get out: deliver that reply, no new model call —
      // unless it claimed an open question that someone else answered meanwhile (and surely did not
      // leave): then the batch is decided afresh, and the floor yields.
      const claimed = pending.claim === undefined || pending.maybeSent ? undefined : others.find((m) => m.msgId === pending.claim);
      const answeredMeanwhile = claimed !== undefined && findAnswer(claimed, [...othersRecent, ...others, ...(batch.heldNow?.() ?? [])], floorContext) !== undefined;
      if (!answeredMeanwhile && [...pending.ids].every((id) => batchIds.has(id))) {
        record.replyType = pending.replyType;
        record.budgetRatio = pending.ratio;
        // What arrived since that reply was written goes back to the group client for a dispatch
        // of its own (a mention among it must get its own answer).
        const notHandled = batch.messages.filter((m) => !pending.ids.has(m.msgId)).map((m) => m.msgId);
        writtenBy = pending.writtenBy;
        return deliver(pending, batch, record, finish, skip, nowAt, notHandled);
      }
    }
    if (others.length === 0) return skip("silent", "only-own-messages");
    const recentBefore = othersRecent;
    if (settings.dedup.othersHistorySize > 0) othersRecent = [...othersRecent, ...others].slice(-settings.dedup.othersHistorySize);

    const guard = checkLoopGuard({ agentChain, maxAgentChain: settings.maxAgentChain, messages: others, humans: memberTypes });
    if (guard.agentChain !== agentChain) {
      agentChain = guard.agentChain;
      emitState();
    }
    if (!guard.ok) return skip("bot-loop-guard", `agent-chain=${agentChain}`);

    const mentioned = batch.mentionInfo.mentioned;
    // Replies that answer no mention go through the floor (src/monitor/floor.ts): an engaged
    // follow-up too, since every agent that talked with its sender may hold it as engaged.
    const unaddressed = !mentioned;
    if (unaddressed && batch.mentionInfo.triggerType === "normal" && onlyAgentAnswers({ batch: others, ctx: floorContext, isOurs: (id) => ownReplies.some((o) => o.msgId === id) })) {
      return skip("agent-answer", "answers-to-others");
    }
    // Only a room with other agents in it contends for the floor; alone, a reply keeps its own timing.
    // Settled before the model call when it can be: an answer already there will not go away.
    const seenAround = () => [...recentBefore, ...others, ...(batch.heldNow?.() ?? [])];
    const inRoom = unaddressed && memberTypes.anyAgent?.(selfAid) === true;
    let floor = inRoom ? decideFloor({ batch: others, seen: seenAround(), ctx: floorContext }) : undefined;
    if (floor?.take === "yield") return skip(floor.reason, floor.detail);
    budgetEvents = pruneBudgetEvents(budgetEvents, batch.now);
    const pool = poolOf(batch);
    let parts = buildPrompt(batch, { budgetRatio: budgetUsageRatio(budgetEvents, settings.budget, batch.now, pool) });
    // The prompt's own size must fit: a window is never overrun by the call that would cross it.
    const nextCallTokens = estimateTokens(parts.systemPrompt) + estimateTokens(parts.body);
    senderCharges = pruneSenderCharges(senderCharges, batch.now);
    const payer =
      pool === "addressed"
        ? choosePayer({ messages: others, owner: identity.owner, charges: senderCharges, settings: settings.budget, share: settings.senderShare, now: batch.now, nextCallTokens })
        : ({ ok: true, payer: undefined, owner: false } as const);
    if (!payer.ok) return skip("sender-over-share", describeOverShare(payer));
    if (payer.payer !== undefined) record.payer = payer.payer;
    // The owner is checked against the allowance counting only their own calls: others cannot use it up.
    const poolEvents = (): BudgetEvent[] => (payer.owner ? ownerBudgetEvents(senderCharges, payer.payer) : budgetEvents);
    const budget = checkBudget({ events: poolEvents(), settings: settings.budget, now: batch.now, pool, nextCallTokens });
    record.budgetRatio = budget.ratio;
    if (!budget.ok) return skip("over-budget", describeOverBudget(budget));

    record.replyType = parts.replyType;
    record.replyTypeReason = parts.replyTypeReason;
    const ownEvents: BudgetEvent[] = [];
    const call = async (prompt: PromptParts, phase?: "decide" | "reply"): Promise<string | undefined> => {
      const request: GenerateRequest = {
        identityId: p.identityId,
        groupId,
        dispatchId: batch.dispatchId,
        trigger: batch.mentionInfo.triggerType,
        systemPrompt: prompt.systemPrompt,
        stablePrefix: prompt.stablePrefix,
        body: phase === "decide" ? `${prompt.body}\n\n${DECIDE_INSTRUCTION}` : prompt.body,
        messages: others,
        mentionInfo: batch.mentionInfo,
        replyType: prompt.replyType,
        maxChars: settings.replyPolicy.maxCharsPerMessage,
        signal: lifetime.signal,
        ...(phase ? { phase } : {}),
      };
      const calledAt = nowAt();
      record.modelCalls++;
      let result;
      try {
        result = await p.backend.generate(request);
      } catch (err) {
        if (lifetime.signal.aborted) return undefined;
        const retryable = (err as { retryable?: unknown } | null)?.retryable !== false;
        // One warn line per failure: a retried one is logged by the group client with its retry.
        logger.log(retryable ? "debug" : "warn", "monitor.backend-failed", { dispatchId: batch.dispatchId, phase: phase ?? "reply", retryable, ...errorFields(err) });
        // A transient failure (timeout, 5xx, a busy host) is thrown so the group client re-queues
        // the batch with backoff; one that a retry cannot fix (bad request, auth) ends here.
        if (retryable) {
          if (typeof err === "object" && err !== null) retriedFailures.add(err);
          throw err;
        }
        return undefined;
      }
      if (typeof result?.text !== "string") {
        logger.log("warn", "monitor.backend-failed", { dispatchId: batch.dispatchId, phase: phase ?? "reply", error: "back-end returned no text" });
        return undefined;
      }
      const tokens = result.usage
        ? result.usage.promptTokens + result.usage.completionTokens
        : estimateTokens(request.systemPrompt) + estimateTokens(request.body) + estimateTokens(result.text);
      const event: BudgetEvent = [calledAt, tokens, pool === "addressed" ? 1 : 0];
      ownEvents.push(event);
      budgetEvents = recordBudgetEvent(budgetEvents, event);
      if (payer.payer !== undefined) senderCharges = recordSenderCharge(senderCharges, [calledAt, tokens, payer.payer]);
      record.tokens += tokens;
      emitState();
      return result.text;
    };

    let delayHint = delayHintFor(parts.replyType);
    if (settings.decision === "two-phase") {
      // A retry after a failed reply call reuses the decision: it was made and paid for already.
      let d = decided !== undefined && [...decided.ids].every((id) => batchIds.has(id)) ? decided : undefined;
      decided = undefined;
      if (d === undefined) {
        const raw = await call(parts, "decide");
        if (lifetime.signal.aborted) return skip("group-closed");
        if (raw === undefined) return skip("backend-failed", "decide");
        const parsed = parseDecision(raw);
        if (!parsed.ok) return skip("silent", "decision-unparseable");
        if (!parsed.decision.wantToReply) return skip("two-phase-declined");
        const replyType = minReplyType(parts.replyType, parsed.decision.replyType ?? parts.replyType);
        d = { ids: batchIds, replyType, delayHint: parsed.decision.delayHint ?? delayHintFor(replyType) };
      } else record.detail = "decision-reused";
      parts = buildPrompt(batch, { budgetRatio: budget.ratio, replyType: d.replyType });
      record.replyType = d.replyType;
      delayHint = d.delayHint;
      decided = d;
    }

    const raw = await call(parts, settings.decision === "two-phase" ? "reply" : undefined);
    decided = undefined;
    const intent = raw === undefined ? undefined : parseIntent(raw);
    // A back-end that keeps a history stored this reply; from here on it hears what became of it.
    if (intent?.reply) writtenBy = batch.dispatchId;
    if (lifetime.signal.aborted) return skip("group-closed");
    if (intent === undefined) return skip("backend-failed");
    if (!intent.reply) return skip("silent", intent.reason);

    let replyType: ReplyType = record.replyType ?? parts.replyType;
    // Outbound gets the inbound cleaning: no escape sequences, controls, bidi overrides or lone surrogates.
    let text = trimReply(cleanOutboundText(intent.text), replyType, settings.replyPolicy);
    // Markdown stripping can join a token the model split ("NO_**REPLY**"): read the intent again.
    if (hasNoReplyToken(text)) {
      const again = parseIntent(text);
      if (!again.reply) return skip("silent", again.reason);
      text = again.text;
    }
    if (text === "") return skip("empty-after-trim");
    let dup = checkDuplicate({ text, memory, threshold: settings.dedup.similarityThreshold });
    if (dup.duplicate) {
      const detail = `${dup.reason}:${dup.similarity.toFixed(2)}`;
      if (settings.dedup.action === "skip" || replyType === "reaction") return skip("duplicate-of-recent-reply", detail);
      replyType = "reaction";
      record.replyType = replyType;
      record.detail = `downgraded:${detail}`;
      text = toReaction(text, settings.replyPolicy.maxReactionChars);
      if (text === "") return skip("duplicate-of-recent-reply", detail);
      dup = checkDuplicate({ text, memory, threshold: settings.dedup.similarityThreshold });
      if (dup.duplicate) return skip("duplicate-of-recent-reply", `${dup.reason}:${dup.similarity.toFixed(2)}`);
    }

    // The draw is taken either way, so a reply outside the floor keeps the same delays.
    const draw = random();
    if (floor !== undefined) {
      // Answers that came in while the model wrote.
      floor = decideFloor({ batch: others, seen: seenAround(), ctx: floorContext });
      if (floor.take === "yield") return skip(floor.reason, floor.detail);
    }
    // Claiming a question: the send waits this agent's rank of the delay range, so the agents of a
    // room speak in turn and each later one sees the earlier answer before its own goes out.
    const delayMs = chooseDelayMs({ settings: settings.delay, hint: delayHint, mentioned, random: floor?.take === "claim" ? floor.rank : draw });
    record.delayMs = delayMs;
    let waitMs = delayMs;
    let waitedFor = floor?.take === "claim" ? floor.question : undefined;
    for (;;) {
      await delays.wait(waitMs, batch.mentionSignal);
      const after = checkAfterDelay({
        closed: lifetime.signal.aborted,
        answeringMention: mentioned,
        newerMention: batch.hasPendingMention(),
        // This dispatch's own calls are paid for; the re-check asks whether anything else used the budget up meanwhile.
        budget: checkBudget({ events: poolEvents().filter((e) => !ownEvents.some((o) => o[0] === e[0] && o[1] === e[1])), settings: settings.budget, now: nowAt(), pool }),
      });
      if (!after.ok) return skip(after.reason, after.detail ? `after-delay ${after.detail}` : "after-delay");
      if (floor === undefined) break;
      floor = decideFloor({ batch: others, seen: seenAround(), ctx: floorContext });
      if (floor.take === "yield") return skip(floor.reason, `after-delay ${floor.detail}`);
      // The question waited for was answered, another of the batch is open: wait this agent's turn
      // for that one too, or every agent that switched to it would answer it at once.
      if (floor.take !== "claim" || floor.question === waitedFor) break;
      waitedFor = floor.question;
      waitMs = chooseDelayMs({ settings: settings.delay, hint: delayHint, mentioned, random: floor.rank });
      record.delayMs += waitMs;
    }

    // Someone else may have said it meanwhile (another agent answering the same question).
    const recent = settings.dedup.othersHistorySize === 0 ? [] : [...recentBefore, ...others, ...(batch.heldNow?.() ?? [])].slice(-settings.dedup.othersHistorySize);
    const said = checkOthersDuplicate({ text, recent, threshold: settings.dedup.similarityThreshold, selfAid });
    if (said.duplicate) {
      const detail = `said-by:${said.sender}:${said.reason}:${said.similarity.toFixed(2)}`;
      if (settings.dedup.action === "skip" || replyType === "reaction") return skip("duplicate-of-other-member", detail);
      replyType = "reaction";
      record.replyType = replyType;
      record.detail = `downgraded:${detail}`;
      text = toReaction(text, settings.replyPolicy.maxReactionChars);
      dup = checkDuplicate({ text, memory, threshold: settings.dedup.similarityThreshold });
      if (text === "" || dup.duplicate) return skip("duplicate-of-other-member", detail);
    }
    // Answered before a restart that lost our state (our reply came back in the history): never again.
    if (allAnswered(others, answeredThrough)) return skip("already-answered", `through:${answeredThrough}`);

    const claim = floor?.take === "claim" ? floor.question : undefined;
    const { replyTo, metadata } = addressReply({ others, mentioned, replyType, text, reactions: p.sender.reactions === true, ...(claim ? { claim } : {}) });
    const prepared: PreparedReply = {
      ids: batchIds,
      text,
      replyType,
      replyTo,
      metadata,
      hash: dup.hash,
      normalized: dup.normalized,
      hasHuman: guard.hasHuman,
      ratio: budget.ratio,
      maybeSent: false,
      // A minute of slack for clock estimates: our dedup never lets the same text out twice that close.
      since: nowAt() - 60_000,
      afterMsgId: batch.newestMsgId,
      writtenBy: batch.dispatchId,
      ...(claim ? { claim } : {}),
    };
    return deliver(prepared, batch, record, finish, skip, nowAt);
  }

  /**
   * Sends a prepared reply and records it. A send that never left (no connection) or may have
   * (connection lost, no answer in time) is kept and the batch thrown back for a retry; before
   * sending again after the latter, our own echo is looked for, so it never goes out twice.
   */
  async function deliver(
    r: PreparedReply,
    batch: DispatchBatch,
    record: DispatchDecision,
    finish: (outcome: DispatchOutcome, detail?: string) => DispatchOutcome,
    skip: (reason: SkipReason, detail?: string) => DispatchOutcome,
    nowAt: () => number,
    notHandled?: readonly string[],
  ): Promise<DispatchOutcome> {
    const sent = await sendPrepared({ reply: r, groupId, sender: p.sender, findOwnEcho: batch.findOwnEcho });
    if (!sent.ok) {
      // Logged with its context, never posted: the group sees nothing of our failures.
      logger.log("warn", "monitor.send-failed", { dispatchId: batch.dispatchId, replyType: r.replyType, chars: r.text.length, kind: sent.kind, ...errorFields(sent.error) });
      // Closed while the reply waited (for a session, or an answer): nothing surely reached the
      // group, so the batch stays unsettled and the next run answers it. A copy the server did
      // store comes back in the history with `answered_through` and settles the batch there.
      if (lifetime.signal.aborted) return skip("group-closed", `send-${sent.kind}`);
      if (sent.kind === "failed") return skip("send-failed");
      unsent = { ...r, maybeSent: r.maybeSent || sent.kind === "maybe-sent" };
      finish({ sent: false, skipReason: "send-failed", budgetRatio: r.ratio, replyType: r.replyType }, `retry-with-batch:${sent.kind}`);
      throw new ReplyNotDeliveredError({ groupId, dispatchId: batch.dispatchId, sendError: String((sent.error as { code?: unknown })?.code ?? "unknown") });
    }
    if (sent.via !== "send") record.detail = `delivered-before:${sent.via}`;
    const sentAt = Number.isFinite(sent.timestamp) && sent.timestamp > 0 ? sent.timestamp : nowAt();
    lastSelfSpeakAt = Math.max(lastSelfSpeakAt ?? 0, sentAt);
    memory = rememberReply(memory, r.hash, r.normalized, settings.dedup.historySize);
    agentChain = nextAgentChain(agentChain, r.hasHuman);
    // The echo may have been remembered already (it can arrive before the send's answer).
    ownReplies = [...ownReplies.filter((o) => o.msgId !== sent.msgId), { timestamp: sentAt, text: r.text, msgId: sent.msgId }].slice(-settings.dedup.historySize);
    emitState();
    return finish(
      { sent: true, replyType: r.replyType, text: r.text, budgetRatio: r.ratio, sentMsgId: sent.msgId, sentAt, ...(r.replyTo ? { replyTo: r.replyTo } : {}), ...(notHandled?.length ? { notHandled } : {}) },
      record.detail,
    );
  }

  return {
    handle,
    snapshot,
    buildPrompt: (batch) => buildPrompt(batch),
    rememberOwnMessage(m) {
      const through = answeredThroughOf(m.metadata);
      if (through !== undefined && (answeredThrough === undefined || through > answeredThrough)) answeredThrough = through;
      const restore = () => {
        const normalized = normalizeForDedup(stripControls(m.content));
        const hash = hashNormalized(normalized);
        const known = memory.hashes.includes(hash);
        const later = Number.isFinite(m.timestamp) && m.timestamp > (lastSelfSpeakAt ?? 0);
        if (known && !later) return;
        if (!known) {
          memory = rememberReply(memory, hash, normalized, settings.dedup.historySize);
          ownReplies = [...ownReplies, { timestamp: m.timestamp, text: m.content, msgId: m.msgId }].slice(-settings.dedup.historySize);
        }
        if (later) lastSelfSpeakAt = m.timestamp;
        emitState();
      };
      // Hashing needs the wasm module; at start-up the first pull may come before it is ready.
      void initDedup()
        .then(restore)
        .catch((err: unknown) => logger.log("warn", "monitor.remember-own-failed", { msgId: m.msgId, ...errorFields(err) }));
    },
    close() {
      delays.clear();
      lifetime.abort();
    },
  };
}

/** Addressed talk (a mention, a reply to us, an engaged follow-up) draws from its own allowance. */
function poolOf(batch: DispatchBatch): BudgetPool {
  return batch.mentionInfo.mentioned || batch.mentionInfo.triggerType === "engaged" ? "addressed" : "unaddressed";
}

// Back-end errors thrown on to the group client's retry (logged there, once).
const retriedFailures = new WeakSet<object>();

/** The seed's entry point: hand one batch to an identity's monitor for that group. */
export function handleGroupMessagesForIdentity(monitor: GroupMonitor, batch: DispatchBatch): Promise<DispatchOutcome> {
  return monitor.handle(batch);
}
