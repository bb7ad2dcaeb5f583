// What a room replay keeps of its agents' replies for the room's figures (room.ts), counted as the
// replies are sent: which agents answered each log line (bits by the line's position), the earliest
// answer to each annotated open question, and when each reply was sent — not the replies, their
// texts or the ids they answer, so that a long replay keeps a few bits and a double a line and a
// double a reply. All are paged columns (paged-column.ts): a log walked from its file keeps a few
// pages of each in memory and the rest in temp files.
import { isQuestion } from "../monitor/floor.ts";
import type { LogLine } from "./log.ts";
import { PAGE_ENTRIES, PagedColumn } from "./paged-column.ts";

/** What a reply answers: a log line by its position (a line the dispatch carried), or anything else by id. */
export type ReplyTarget = number | string;

/** An annotated open question: a person's question the annotators direct at nobody but its asker. */
export function isAnnotatedOpen(l: LogLine): boolean {
  if (l.directedTo === undefined || !isQuestion(l.content)) return false;
  const asker = l.sender.toLowerCase();
  return !l.directedTo.some((d) => d.toLowerCase() !== asker);
}

export class RoomTally {
  readonly #agents: number;
  /** Bytes a line in #answered: one bit per agent. */
  readonly #width: number;
  readonly #count: number;
  readonly #answered: PagedColumn;
  /** One bit a line: a person's annotated open question (only those keep their first answer's time). */
  readonly #annotatedOpen: PagedColumn;
  /** One bit a line: an annotated open question answered by position, whose first answer's time is in #firstAnswer. */
  readonly #hasFirst: PagedColumn;
  /** By position: when an annotated open question was first answered (a double a line, 8 KB pages unless `pages` says). */
  readonly #firstAnswer: PagedColumn;
  /** Targets not known by position (another agent's reply, or replies given by id): by id. */
  readonly #byId = new Map<string, { agents: Set<number>; first: number }>();
  /** When each reply was sent, in the order sent (a double a reply, in pages like the bits). */
  readonly #sentAt: PagedColumn;
  #replies = 0;

  /** `count` lines, `agents` agents (numbered from 0); `spill`: pages past a few go to temp files (a log walked from its file), `pages` sizes them. */
  constructor(count: number, agents: number, spill = false, pages: { pageEntries?: number; heldPages?: number } = {}) {
    this.#agents = agents;
    this.#width = Math.ceil(agents / 8);
    this.#count = count;
    this.#answered = new PagedColumn({ name: "answered", spill, ...pages });
    this.#annotatedOpen = new PagedColumn({ name: "annotated-open", spill, ...pages });
    this.#hasFirst = new PagedColumn({ name: "has-first-answer", spill, ...pages });
    this.#firstAnswer = new PagedColumn({ name: "first-answer", width: 8, spill, pageEntries: PAGE_ENTRIES / 8, ...pages });
    this.#sentAt = new PagedColumn({ name: "sent-at", width: 8, spill, pageEntries: PAGE_ENTRIES / 8, ...pages });
  }

  /** Removes the temp files (if any); not used after. */
  remove(): void {
    this.#answered.remove();
    this.#annotatedOpen.remove();
    this.#hasFirst.remove();
    this.#firstAnswer.remove();
    this.#sentAt.remove();
  }

  /** The log line at `ordinal` is fed; `agentLine`: one of the room's agents sent it. */
  line(l: LogLine, ordinal: number, agentLine: boolean): void {
    if (!agentLine && isAnnotatedOpen(l)) this.#annotatedOpen.set(ordinal >> 3, this.#annotatedOpen.get(ordinal >> 3) | (1 << (ordinal & 7)));
  }

  /** Agent `agent` sent a reply at `ts` answering `targets`. */
  reply(agent: number, ts: number, targets: readonly ReplyTarget[]): void {
    if (!(agent >= 0 && agent < this.#agents)) throw new RangeError(`agent ${agent} of ${this.#agents}`);
    this.#sentAt.set(this.#replies++, ts);
    for (const t of targets) {
      if (typeof t === "string") {
        const by = this.#byId.get(t);
        if (by === undefined) this.#byId.set(t, { agents: new Set([agent]), first: ts });
        else {
          by.agents.add(agent);
          if (ts < by.first) by.first = ts;
        }
        continue;
      }
      if (!(Number.isInteger(t) && t >= 0 && t < this.#count)) continue;
      const at = t * this.#width + (agent >> 3);
      this.#answered.set(at, this.#answered.get(at) | (1 << (agent & 7)));
      if (this.#annotatedOpen.get(t >> 3) & (1 << (t & 7))) {
        const has = this.#hasFirst.get(t >> 3);
        if (!(has & (1 << (t & 7)))) this.#hasFirst.set(t >> 3, has | (1 << (t & 7)));
        else if (this.#firstAnswer.get(t) <= ts) continue;
        this.#firstAnswer.set(t, ts);
      }
    }
  }

  /** Replies sent, and the time of the k-th (in the order sent). */
  get replies(): number {
    return this.#replies;
  }
  sentAt(k: number): number {
    if (!(Number.isInteger(k) && k >= 0 && k < this.#replies)) throw new RangeError(`reply ${k} of ${this.#replies}`);
    return this.#sentAt.get(k);
  }

  /** How many different agents answered the line at `ordinal` with this id. */
  answeredBy(ordinal: number, id: string): number {
    const byId = this.#byId.get(id)?.agents;
    let n = 0;
    for (let a = 0; a < this.#agents; a++) if (this.#has(ordinal, a) || byId?.has(a)) n++;
    return n;
  }

  /** When the line at `ordinal` with this id was first answered (an annotated open question's, or one answered by id), if it was. */
  firstAnswer(ordinal: number, id: string): number | undefined {
    const a = this.#hasFirstAt(ordinal) ? this.#firstAnswer.get(ordinal) : undefined;
    const b = this.#byId.get(id)?.first;
    return a === undefined ? b : b === undefined ? a : Math.min(a, b);
  }

  #hasFirstAt(ordinal: number): boolean {
    if (!(Number.isInteger(ordinal) && ordinal >= 0 && ordinal < this.#count)) return false;
    return (this.#hasFirst.get(ordinal >> 3) & (1 << (ordinal & 7))) !== 0;
  }

  #has(ordinal: number, agent: number): boolean {
    if (!(Number.isInteger(ordinal) && ordinal >= 0 && ordinal < this.#count)) return false;
    return (this.#answered.get(ordinal * this.#width + (agent >> 3)) & (1 << (agent & 7))) !== 0;
  }
}
