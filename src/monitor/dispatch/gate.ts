// The gates before any prompt is built: a batch our replies answered already, the retry of a reply
// that did not get out, a batch of only our own lines, the bot-loop guard, an answer meant for
// others, and — unaddressed, in a room with other agents — the floor. Mechanical; no model call.
import type { InboundMessage, UnsentReply } from "../../types.ts";
import { allAnswered } from "../../group/answered.ts";
import { decideFloor, findAnswer, askedAgain, onlyAgentAnswers, takenUp, type FloorDecision } from "../floor.ts";
import { checkLoopGuard } from "../loop-guard.ts";
import type { DispatchRun, Skip, Step } from "./run.ts";

/** What passed the gates, for the steps after the model call. */
export interface Gated {
  /** Other members' lines from earlier batches, as they were before this one. */
  readonly recentBefore: readonly InboundMessage[];
  /** A person spoke in the batch: answering it ends the agents' chain. */
  readonly hasHuman: boolean;
  /** Unaddressed, with other agents in the room: who takes the floor (decided again before the send). */
  readonly floor: FloorDecision | undefined;
}

/** Our own reply to every line of the batch came back in the history (after a restart): never again. */
export function alreadyAnswered(run: DispatchRun): Skip | undefined {
  const through = run.group.memory.answeredThrough;
  return allAnswered(run.others, through) ? { skip: "already-answered", detail: `through:${through}` } : undefined;
}

/**
 * The retry of the batch whose reply did not get out: that reply is delivered, no new model call —
 * unless it claimed an open question that someone else answered meanwhile (and surely did not
 * leave): then the batch is decided afresh, and the floor yields.
 */
export function redelivery(run: DispatchRun): { reply: UnsentReply; notHandled: string[] } | undefined {
  const { m, batch, record } = run;
  const pending = batch.carried?.reply;
  if (pending === undefined) return undefined;
  const claimed = pending.claim === undefined || pending.maybeSent ? undefined : run.others.find((msg) => msg.msgId === pending.claim);
  const answeredMeanwhile = claimed !== undefined && findAnswer(claimed, run.seenAround(m.state.othersRecent), m.floorContext) !== undefined;
  if (answeredMeanwhile || ![...pending.ids].every((id) => run.batchIds.has(id))) return undefined;
  record.replyType = pending.replyType;
  record.budgetRatio = pending.ratio;
  // What arrived since that reply was written goes back to the group client for a dispatch
  // of its own (a mention among it must get its own answer).
  const notHandled = batch.messages.filter((msg) => !pending.ids.has(msg.msgId)).map((msg) => msg.msgId);
  run.replyWrittenBy(pending.writtenBy);
  return { reply: pending, notHandled };
}

/**
 * A direct conversation's gate: only that there is a line of the peer's to answer. Its loop limits
 * (end markers, a turn cap, idle and length) are the direct conversation's own (src/direct/).
 */
export function directGate(run: DispatchRun): Step<Gated> {
  if (run.others.length === 0) return { skip: "silent", detail: "only-own-messages" };
  return { recentBefore: [], hasHuman: run.others.some((msg) => run.m.memberTypes.typeOf(msg.sender).type === "human"), floor: undefined };
}

export function gate(run: DispatchRun): Step<Gated> {
  const { m, batch, others } = run;
  const { state, settings } = m;
  if (others.length === 0) return { skip: "silent", detail: "only-own-messages" };
  if (batch.orphan !== undefined) return orphanGate(run, batch.orphan);
  const recentBefore = state.rememberOthers(others, settings.dedup.othersHistorySize);
  state.noteRoomLines(others.map((msg) => ({ ts: msg.timestamp, agent: m.floorContext.isAgent(msg.sender) })));
  state.countLines(others.map((msg) => msg.timestamp));

  const guard = checkLoopGuard({ agentChain: state.agentChain, maxAgentChain: settings.maxAgentChain, messages: others, humans: m.memberTypes });
  if (state.setAgentChain(guard.agentChain)) m.emitState();
  if (!guard.ok) return { skip: "bot-loop-guard", detail: `agent-chain=${state.agentChain}` };

  // Replies that answer no mention go through the floor (src/monitor/floor.ts): an engaged
  // follow-up too, since every agent that talked with its sender may hold it as engaged.
  const unaddressed = !batch.mentionInfo.mentioned;
  if (unaddressed && batch.mentionInfo.triggerType === "normal" && onlyAgentAnswers({ batch: others, ctx: m.floorContext, isOurs: (id) => run.group.memory.ownReplies.some((o) => o.msgId === id) })) {
    return { skip: "agent-answer", detail: "answers-to-others" };
  }
  // Only a room with other agents in it contends for the floor; alone, a reply keeps its own timing.
  // Settled before the model call when it can be: an answer already there will not go away.
  const inRoom = unaddressed && m.memberTypes.anyAgent?.(m.identity.aid) === true;
  // A follow-up that is only possibly ours (no mention, no engaged line) is a guess; in a room whose
  // agents have had their share of the talk, a wrong guess is one more agent's line nobody asked for.
  if (inRoom && settings.orphans.enabled && batch.mentionInfo.triggerType === "engaged" && !others.some((msg) => msg.engaged)) {
    const share = state.agentsAtShare(settings.orphans.maxAgentShare, batch.now);
    if (share.at) return { skip: "agents-share", detail: `maybe-ours:${share.agents}/${share.people}` };
  }
  const floor = inRoom ? decideFloor({ batch: others, seen: run.seenAround(recentBefore), ctx: m.floorContext }) : undefined;
  if (floor?.take === "yield") return { skip: floor.reason, detail: floor.detail };
  // A person's open question to the room is left to people first: if nobody answers it in the
  // grace period, the orphan path (src/group/orphans.ts) gives it to one agent of the room.
  if (floor?.take === "claim" && batch.mentionInfo.triggerType === "normal" && settings.orphans.enabled) {
    const q = others.find((msg) => msg.msgId === floor.question);
    if (q !== undefined && m.memberTypes.typeOf(q.sender).type === "human") return { skip: "left-to-people", detail: q.msgId };
  }
  return { recentBefore, hasHuman: guard.hasHuman, floor };
}

/**
 * An orphaned question (trigger `orphan`: a person's open question, watched by the group client
 * for its grace period): taken only while fresh, never twice by us, and only when nobody answered
 * it meanwhile — then it claims the floor at this agent's rank like any open question.
 */
function orphanGate(run: DispatchRun, questionId: string): Step<Gated> {
  const { m, batch, others } = run;
  const q = others.find((msg) => msg.msgId === questionId);
  if (q === undefined) return { skip: "orphan-stale", detail: `${questionId}:not-in-batch` };
  const ageMs = batch.now - q.timestamp;
  if (ageMs > m.settings.orphans.freshMs) return { skip: "orphan-stale", detail: `${q.msgId}:age:${Math.round(ageMs / 1000)}s` };
  if (m.state.answered(q.msgId)) return { skip: "orphan-stale", detail: `${q.msgId}:answered-by-us` };
  // Agents help the room; they do not take it over: with this answer, agents' lines of the day stay
  // within their share of people's. Held over the day, not the last hundred lines: a run of questions
  // nobody answers can each be helped after a quiet stretch; how many at once the orphan allowance's
  // short window bounds (budget.orphan, at the channel's pace).
  const share = m.state.agentsAtShare(m.settings.orphans.maxAgentShare, batch.now);
  if (share.at) return { skip: "agents-share", detail: `${q.msgId}:${share.agents}/${share.people}` };
  // What the group said since the question: its earlier batches (remembered) and what is held.
  const recentBefore = m.state.othersRecent;
  const seen = run.seenAround(recentBefore);
  const floor = decideFloor({ batch: [q], seen, ctx: m.floorContext });
  if (floor.take === "yield") return { skip: floor.reason, detail: floor.detail };
  if (floor.take === "none") return { skip: "addressed-to-other", detail: `${q.msgId}:not-open` };
  // Its asker asked again since: the newer question is the one to answer (watched on its own).
  const again = askedAgain(q, seen);
  if (again !== undefined) return { skip: "orphan-stale", detail: `${q.msgId}:asked-again:${again.msgId}` };
  // Answered without its asker's name: the asker has since replied to someone's line.
  const up = takenUp(q, seen, m.floorContext);
  if (up !== undefined) return { skip: "answered-by-other", detail: `${q.msgId}:taken-up:${up.sender}` };
  return { recentBefore, hasHuman: true, floor };
}

/**
 * What the model is shown for an orphaned question: the question and everything said after it
 * that this agent has seen (earlier batches and what is held), oldest first — so it can tell
 * whether anything is left to answer.
 */
export function orphanContext(run: DispatchRun, recentBefore: readonly InboundMessage[]): InboundMessage[] {
  const q = run.others[0]!;
  const byId = new Map<string, InboundMessage>([[q.msgId, q]]);
  for (const msg of run.seenAround(recentBefore)) if (msg.timestamp >= q.timestamp && !byId.has(msg.msgId) && msg.sender !== run.m.identity.aid) byId.set(msg.msgId, msg);
  return [...byId.values()].sort((a, b) => a.timestamp - b.timestamp);
}
