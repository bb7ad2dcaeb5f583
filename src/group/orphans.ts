// Orphaned questions: in a room of agents, a person's open question that nobody answered within a
// grace period is a trigger of its own. The group client watches each question a person asks the
// room (not a mention of us, not a line addressed to another member) and, at its due time — the
// grace period plus this agent's rank of the spread (util/rank.ts), so the agents of a room come
// in turn — hands it to the agent side as an `orphan` dispatch. Whether anyone answered meanwhile,
// and whether it is still fresh, the agent side decides (src/monitor/dispatch/gate.ts): the answer
// detection is the floor's. Pure: the watch list and its decisions; the timer is in gates.ts.
import type { GroupSettings, InboundMessage } from "../types.ts";
import { floorRank } from "../util/rank.ts";
import { leadingName, nickKey } from "./addressee.ts";
import type { RoomTalk } from "./exchanges.ts";

/** A line that asks: it ends in `?` or the fullwidth `？` (trailing spaces aside). */
export function isQuestion(content: string): boolean {
  const t = content.trimEnd();
  return t.endsWith("?") || t.endsWith("？");
}

// Words that carry letters or digits; a run of Han or kana (no spaces between words) counts per character.
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’_-]*/gu;
const HAS_LETTER = /\p{L}/u;
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;

/**
 * Whether a line could be an answer: past an opening address to the asker (`sam: …`), at least
 * two words with letters, or four Han/kana characters. `.`, `no`, `ok`, `+1` and a bare name are
 * not; a short real answer ("yes") is left to the model, which sees it.
 */
export function saysSomething(content: string, askerKeys: readonly string[] = []): boolean {
  let text = content;
  const lead = leadingName(text);
  if (lead !== null && askerKeys.includes(nickKey(lead.name))) {
    const at = text.indexOf(lead.name) + lead.name.length;
    text = text.slice(at).replace(/^[\s:,：，、]+/u, "");
  }
  let words = 0;
  for (const w of text.matchAll(WORD)) if (HAS_LETTER.test(w[0]) && ++words >= 2) return true;
  let unspaced = 0;
  for (const _ of text.matchAll(UNSPACED)) if (++unspaced >= 4) return true;
  return false;
}

/**
 * A line the watch takes: a question to the room that says something (two words: not a bare `?`
 * or `huh?`) — not ours to answer now (a mention), not passive,
 * not opening with an address to another member, from an asker in no exchange with anyone
 * (exchanges.ts) since `freshMs` before it. Whether a line is an open question is read off the
 * room's lines alone (never off this agent's own conversation state or names), so every agent of a
 * room watches the same questions. The asker's type is the caller's: only a person's counts.
 */
export function mayBeOrphaned(m: Pick<InboundMessage, "sender" | "content" | "timestamp" | "isMention" | "passive">, talk: Pick<RoomTalk, "addressesSomeone" | "inExchangeSince">, settings: GroupSettings["orphans"]): boolean {
  // `?`, `huh?`: a reaction to what was just said, not a question the room could answer.
  if (m.isMention || m.passive !== undefined || !isQuestion(m.content) || !saysSomething(m.content)) return false;
  return !talk.addressesSomeone(m.sender, m.content) && !askerInExchange(m, talk, settings);
}

/**
 * The asker addressed someone, or someone addressed them, within `freshMs` before the question or
 * at any time since: the question most likely belongs to that exchange (a follow-up to whoever is
 * helping them), or has been taken up in it — either way it is not the room's to answer. `freshMs`
 * is the horizon of a question's own life: chat that recent is the conversation it is asked in.
 */
export function askerInExchange(q: Pick<InboundMessage, "sender" | "timestamp">, talk: Pick<RoomTalk, "inExchangeSince">, settings: GroupSettings["orphans"]): boolean {
  return talk.inExchangeSince(q.sender, q.timestamp - settings.freshMs);
}

/**
 * How long people have to answer a question first. Once the room has shown how fast its people
 * answer each other (exchanges.ts: the median time from a member's line to a person's reply that
 * addresses them), {@link GRACE_PER_LATENCY} times that — a slow channel waits longer than a busy
 * one — kept within half and twice `graceMs` and early enough that the last agent of the spread
 * still answers while the question is fresh. Until then, `graceMs`.
 */
export function orphanGraceMs(settings: GroupSettings["orphans"], answerLatencyMs: number | undefined): number {
  if (answerLatencyMs === undefined || !settings.adaptiveGrace) return settings.graceMs;
  const high = Math.max(settings.graceMs / 2, Math.min(2 * settings.graceMs, settings.freshMs - settings.spreadMs - LATEST_ANSWER_SLACK_MS));
  return Math.round(Math.min(high, Math.max(settings.graceMs / 2, GRACE_PER_LATENCY * answerLatencyMs)));
}

/**
 * The grace as a multiple of the room's median answer latency. That median is how long a reply to
 * someone already in a conversation takes; a question to the room must first be noticed and
 * thought about by someone who was not in it, so people get half as long again before an agent
 * steps in. Not fitted to a log: it is a property of how the latency is measured.
 */
export const GRACE_PER_LATENCY = 1.5;
/** Room left after the spread for the model's answer and its send delay before the question goes stale. */
export const LATEST_ANSWER_SLACK_MS = 20_000;

/** When this agent takes the question, local time: asked + grace + its rank of the spread. */
export function orphanDue(p: { askedLocal: number; aid: string; msgId: string; settings: GroupSettings["orphans"]; graceMs?: number }): number {
  return p.askedLocal + (p.graceMs ?? p.settings.graceMs) + Math.floor(floorRank(p.aid, p.msgId) * p.settings.spreadMs);
}

/** At most this many questions are watched at once; past it the oldest goes (a flood of questions cannot grow memory). */
export const MAX_WATCHED_QUESTIONS = 32;

/** The questions waiting for their due time, earliest first. */
export class OrphanWatch {
  #due: Array<{ at: number; message: InboundMessage }> = [];

  get size(): number {
    return this.#due.length;
  }

  /** Watches `message` until local time `at` (once per msg id). */
  add(message: InboundMessage, at: number): void {
    if (this.#due.some((d) => d.message.msgId === message.msgId)) return;
    const i = this.#due.findIndex((d) => d.at > at);
    this.#due.splice(i < 0 ? this.#due.length : i, 0, { at, message });
    if (this.#due.length > MAX_WATCHED_QUESTIONS) {
      // The question asked longest ago goes: its freshness runs out first.
      let oldest = 0;
      for (let j = 1; j < this.#due.length; j++) if (this.#due[j]!.message.timestamp < this.#due[oldest]!.message.timestamp) oldest = j;
      this.#due.splice(oldest, 1);
    }
  }

  /** The earliest due time after local `now`, if any (those due already wait for the lock). */
  nextAfter(now: number): number | undefined {
    return this.#due.find((d) => d.at > now)?.at;
  }

  /** The earliest question due at local `now`, taken off the list. */
  takeDue(now: number): InboundMessage | undefined {
    const first = this.#due[0];
    if (first === undefined || first.at > now) return undefined;
    this.#due.shift();
    return first.message;
  }

  clear(): void {
    this.#due = [];
  }
}
