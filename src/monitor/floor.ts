// Taking the floor in a room of agents. When a person asks the room an open question, every agent
// that wants to answer settles who does without a coordinator and without an extra model call:
// each derives a rank for the question from its own aid and the question's msg id and waits that
// share of its send delay; the first to speak names the question in `reply_to`; the others see an
// answer to it arrive (from an agent of ours, an agent that just posts, or a person) and yield.
// Only a credible answer moves the floor: one that says something, from a sender our config, the
// owner or the group service vouches for. Anyone may join an open group and point a line at a
// question; a stranger's line (or a `.`, a `no`) never silences the room — the agents go on, and
// the model, which sees that line with the rest, decides whether anything is left to say.
// Pure: messages and names in, a decision with a reason out. Never touches a timer.
import { leadingName, memberKeys, nickKey } from "../group/addressee.ts";
import type { InboundMessage } from "../types.ts";
import { isQuestion, saysSomething } from "../group/orphans.ts";
import { floorRank } from "../util/rank.ts";

export { floorRank, isQuestion, saysSomething };

export type FloorMessage = Pick<InboundMessage, "msgId" | "sender" | "content" | "timestamp" | "metadata"> &
  Partial<Pick<InboundMessage, "isMention" | "passive" | "engaged" | "maybeOurs">>;


/**
 * A question addressed to nobody: it does not open with a marked address (`bob: …`, `@bob …`,
 * `bob, …`) nor with the bare name of a known member other than the asker (`Dave here, …?` from
 * dave is open). `isMember` takes a nick key.
 */
export function isOpenQuestion(content: string, isMember: (key: string) => boolean, asker?: string): boolean {
  const asks = openQuestionAsks(content, asker);
  return typeof asks === "boolean" ? asks : !isMember(asks);
}

/**
 * {@link isOpenQuestion} without the members: whether the line is an open question (`true` /
 * `false`) when the line alone decides, else the nick key it asks about — the bare name it opens
 * with, open unless that is a member's. A replay that does not hold its log's members asks it per
 * line and joins the keys with the members on disk (src/replay/member-asks.ts).
 */
export function openQuestionAsks(content: string, asker?: string): boolean | string {
  if (!isQuestion(content)) return false;
  const lead = leadingName(content);
  if (lead === null) return true;
  const key = nickKey(lead.name);
  // People open with their own name too ("Dave here, …"): that addresses nobody.
  if (asker !== undefined && memberKeys(asker).includes(key)) return true;
  return lead.marked ? false : key;
}

/** `reply_to` of a message: plain (`metadata.reply_to`) or inside `group_meta`. */
export function replyToOf(metadata: Readonly<Record<string, unknown>> | null): string | undefined {
  if (metadata === null) return undefined;
  const meta = metadata["group_meta"];
  const inner = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>)["reply_to"] : undefined;
  for (const v of [metadata["reply_to"], inner]) {
    if (typeof v === "string" && v !== "") return v;
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
  }
  return undefined;
}

export interface FloorContext {
  selfAid: string;
  /** The sender is known to be an agent. */
  isAgent(sender: string): boolean;
  /**
   * Our config, the owner or the group service says who the sender is (a person or an agent).
   * A stranger — a sender nobody but itself vouches for — never moves the floor.
   */
  isVouched(sender: string): boolean;
}

/**
 * Someone's answer to question `q` among `seen`: a message after it, from neither the asker nor
 * us, that names `q` in `reply_to`; or that has no `reply_to` and either comes from an agent (an
 * agent that just posts) or opens by addressing the asker (how people answer in chat). Only a
 * credible one counts: from a vouched-for sender, and saying something ({@link saysSomething}).
 */
export function findAnswer(q: FloorMessage, seen: readonly FloorMessage[], ctx: FloorContext): FloorMessage | undefined {
  const asker = q.sender.toLowerCase();
  const self = ctx.selfAid.toLowerCase();
  const askerKeys = memberKeys(q.sender);
  for (const m of seen) {
    if (m.msgId === q.msgId || m.timestamp < q.timestamp) continue;
    const sender = m.sender.toLowerCase();
    if (sender === asker || sender === self) continue;
    const replyTo = replyToOf(m.metadata);
    let answers: boolean;
    if (replyTo !== undefined) answers = replyTo === q.msgId;
    else if (ctx.isAgent(m.sender)) answers = true;
    else {
      const lead = leadingName(m.content);
      answers = lead !== null && askerKeys.includes(nickKey(lead.name));
    }
    if (answers && ctx.isVouched(m.sender) && saysSomething(m.content, askerKeys)) return m;
  }
  return undefined;
}

export type FloorDecision =
  /** No open question from a person in the batch: the floor has nothing to settle. */
  | { take: "none" }
  /** Answer `question` (the newest one still open), after `rank` of the send delay. */
  | { take: "claim"; question: string; rank: number }
  /**
   * Every open question of the batch has an answer from someone else; or the batch asks only
   * questions put to other members by name.
   */
  | { take: "yield"; reason: "answered-by-other" | "addressed-to-other"; detail: string };

/**
 * For a reply to `batch` (another member's messages, oldest first) that is not an answer to a
 * mention: which open question it takes, or that it yields. `seen` is everything known to have
 * been said around it (earlier history, the batch, what arrived since). Questions from agents
 * are not the room's questions; a mention is ours to answer and never goes through the floor. An
 * engaged follow-up does: every agent that talked with the asker may hold it as engaged.
 */
export function decideFloor(p: {
  batch: readonly FloorMessage[];
  seen: readonly FloorMessage[];
  ctx: FloorContext;
}): FloorDecision {
  const keys = new Set<string>();
  for (const m of p.seen) for (const k of memberKeys(m.sender)) keys.add(k);
  for (const m of p.batch) for (const k of memberKeys(m.sender)) keys.add(k);
  const isMember = (key: string) => keys.has(key);
  const self = p.ctx.selfAid.toLowerCase();
  let answered: { q: FloorMessage; by: FloorMessage } | undefined;
  let toOther: FloorMessage | undefined;
  for (let i = p.batch.length - 1; i >= 0; i--) {
    const q = p.batch[i]!;
    if (q.isMention || q.passive !== undefined || q.sender.toLowerCase() === self || p.ctx.isAgent(q.sender)) continue;
    if (!isOpenQuestion(q.content, isMember, q.sender)) {
      if (isQuestion(q.content)) toOther ??= q;
      continue;
    }
    const by = findAnswer(q, p.seen, p.ctx);
    if (by === undefined) return { take: "claim", question: q.msgId, rank: floorRank(p.ctx.selfAid, q.msgId) };
    answered ??= { q, by };
  }
  if (answered === undefined) return toOther === undefined ? { take: "none" } : { take: "yield", reason: "addressed-to-other", detail: toOther.msgId };
  return { take: "yield", reason: "answered-by-other", detail: `${answered.q.msgId}:by:${answered.by.sender}` };
}

/**
 * Agents answering someone else: every message of an unaddressed batch is an agent's reply
 * (`reply_to`) to a message that is not ours. Answering it would answer an answer.
 */
export function onlyAgentAnswers(p: {
  batch: readonly FloorMessage[];
  ctx: FloorContext;
  isOurs: (msgId: string) => boolean;
}): boolean {
  let any = false;
  for (const m of p.batch) {
    if (m.passive !== undefined) continue;
    if (m.sender.toLowerCase() === p.ctx.selfAid.toLowerCase()) continue;
    if (m.isMention || m.engaged || m.maybeOurs) return false;
    const replyTo = replyToOf(m.metadata);
    if (!p.ctx.isAgent(m.sender) || replyTo === undefined || p.isOurs(replyTo)) return false;
    any = true;
  }
  return any;
}

/**
 * An orphaned question whose asker has since asked another open question (checked at its due time,
 * src/monitor/dispatch/gate.ts): that one is the asker's question now, and is watched on its own —
 * one asker gets one answer, to what they ask last, instead of one per line of a rephrased question.
 */
export function askedAgain(q: FloorMessage, seen: readonly FloorMessage[]): FloorMessage | undefined {
  const asker = q.sender.toLowerCase();
  const keys = new Set<string>();
  for (const m of seen) for (const k of memberKeys(m.sender)) keys.add(k);
  for (const m of seen) {
    if (m.msgId === q.msgId || m.timestamp < q.timestamp || m.passive !== undefined || m.isMention === true || m.sender.toLowerCase() !== asker) continue;
    if (isOpenQuestion(m.content, (k) => keys.has(k), m.sender) && saysSomething(m.content)) return m;
  }
  return undefined;
}

/**
 * Someone took question `q` up without naming its asker (checked at its due time,
 * src/monitor/dispatch/gate.ts): since it, the asker answered another member's line — spoke right
 * after it, and did not ask again (a new open question is {@link askedAgain}'s). People answer an
 * open question without a name as often as with one; what shows it was an answer is the asker's
 * turn that follows (a "thanks", a "that didn't work either"). The line answered must be credible
 * (vouched for, saying something) and not addressed to someone else (`ann: …`): the asker adding
 * detail after an unrelated line is no sign of an answer. Returns that line.
 */
export function takenUp(q: FloorMessage, seen: readonly FloorMessage[], ctx: FloorContext): FloorMessage | undefined {
  const asker = q.sender.toLowerCase();
  const self = ctx.selfAid.toLowerCase();
  const askerKeys = memberKeys(q.sender);
  // The line right before the one being read, when it is one the asker could be answering.
  let before: FloorMessage | undefined;
  for (const m of [...seen].sort((a, b) => a.timestamp - b.timestamp)) {
    if (m.msgId === q.msgId || m.timestamp < q.timestamp || m.passive !== undefined) continue;
    const sender = m.sender.toLowerCase();
    if (sender === asker) {
      if (before !== undefined && !isQuestion(m.content)) return before;
      before = undefined;
      continue;
    }
    const lead = leadingName(m.content);
    const toOther = lead !== null && lead.marked && !askerKeys.includes(nickKey(lead.name));
    before = sender !== self && !toOther && ctx.isVouched(m.sender) && saysSomething(m.content, askerKeys) ? m : undefined;
  }
  return undefined;
}
