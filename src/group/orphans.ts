// Orphaned questions: in a room of agents, a person's open question that nobody answered within a
// grace period is a trigger of its own. The group client watches each question a person asks the
// room (not a mention of us, not a line addressed to another member) and, at its due time — the
// grace period plus this agent's rank of the spread (util/rank.ts), so the agents of a room come
// in turn — hands it to the agent side as an `orphan` dispatch. Whether anyone answered meanwhile,
// and whether it is still fresh, the agent side decides (src/monitor/dispatch/gate.ts): the answer
// detection is the floor's. Pure: the watch list and its decisions; the timer is in gates.ts.
import type { GroupSettings, InboundMessage } from "../types.ts";
import { floorRank } from "../util/rank.ts";

/** A line that asks: it ends in `?` or the fullwidth `？` (trailing spaces aside). */
export function isQuestion(content: string): boolean {
  const t = content.trimEnd();
  return t.endsWith("?") || t.endsWith("？");
}

/**
 * A line the watch takes: a question that is neither ours to answer now (a mention) nor put to
 * another member by name, nor passive. The asker's type is the caller's: only a person's counts.
 */
export function mayBeOrphaned(m: Pick<InboundMessage, "content" | "isMention" | "passive" | "addressing">): boolean {
  if (m.isMention || m.passive !== undefined) return false;
  if (m.addressing?.rule === "addressed-other" || m.addressing?.rule === "continues-addressed-other") return false;
  return isQuestion(m.content);
}

/** When this agent takes the question, local time: asked + grace + its rank of the spread. */
export function orphanDue(p: { askedLocal: number; aid: string; msgId: string; settings: GroupSettings["orphans"] }): number {
  return p.askedLocal + p.settings.graceMs + Math.floor(floorRank(p.aid, p.msgId) * p.settings.spreadMs);
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
