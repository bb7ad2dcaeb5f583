// What a room replay keeps of its agents' replies for the room's figures (room.ts), counted as the
// replies are sent: which agents answered each log line (bits by the line's position), the earliest
// answer to each annotated open question, and when each reply was sent — not the replies, their
// texts or the ids they answer, so that a long replay keeps a few bits and a double a line and a
// double a reply. All are paged columns (paged-column.ts): a log walked from its file keeps a few
// pages of each in memory and the rest in temp files. A reply that answers by id (a line its batch
// did not carry, or another agent's message) goes to buckets by the id's hash (hash-buckets.ts:
// 8 KB of each in memory, the rest in temp files); before the figures, `joinIds` walks the lines
// once, writing to buckets only the lines whose id's hash a reply named (a bit set of 8 million,
// 1 MB, while replies by id wait), and joins each bucket in memory (its lines, about BUCKET_LINES
// of them, by id; its replies streamed past them), so each answer by id lands in the columns by
// the line's position. Nothing held grows with the replies by id but the buckets' 8 KB each.
import { isQuestion } from "../monitor/floor.ts";
import { HashBuckets } from "./hash-buckets.ts";
import { idHash } from "./id-check.ts";
import type { LogLine } from "./log.ts";
import { BUCKET_LINES } from "./orphan-join.ts";
import { PAGE_ENTRIES, PagedColumn } from "./paged-column.ts";

/** What a reply answers: a log line by its position (a line the dispatch carried), or anything else by id. */
export type ReplyTarget = number | string;

/** An annotated open question: a person's question the annotators direct at nobody but its asker. */
export function isAnnotatedOpen(l: LogLine): boolean {
  if (l.directedTo === undefined || !isQuestion(l.content)) return false;
  const asker = l.sender.toLowerCase();
  return !l.directedTo.some((d) => d.toLowerCase() !== asker);
}

/** Bits of the hashes of the ids replies answered, to pass over the lines no reply named. */
const SEEN_BITS = 1 << 23;

/** A reply by id, in its id's bucket: the id, the agent, when sent. */
type TargetRecord = [string, number, number];
/** A line whose id's hash a reply named, in its id's bucket: the id, the line's position. */
type LineRecord = [string, number];

/**
 * Lines (`line`) and replies (`reply`) as the replay feeds and sends them, then `joinIds` once
 * with the lines in order, then the answers by position (`answeredBy`, `firstAnswer`).
 */
export class RoomTally {
  readonly #agents: number;
  /** Bytes a line in #answered: one bit per agent. */
  readonly #width: number;
  /** Lines: as given, or as many as `joinIds` walked if more (a timeline measured without its count). */
  #count: number;
  readonly #answered: PagedColumn;
  /** One bit a line: a person's annotated open question (only those keep their first answer's time). */
  readonly #annotatedOpen: PagedColumn;
  /** One bit a line: an annotated open question answered by position, or a line answered by id, whose first answer's time is in #firstAnswer. */
  readonly #hasFirst: PagedColumn;
  /** By position: when such a line was first answered (a double a line, 8 KB pages unless `opts` says). */
  readonly #firstAnswer: PagedColumn;
  readonly #hash: (id: string) => number;
  /** Targets not known by position (another agent's reply, or a line answered by id), until `joinIds`. */
  readonly #targets: HashBuckets<TargetRecord>;
  /** The lines whose id's hash is in #seen, while `joinIds` joins them with #targets (same buckets). */
  readonly #lines: HashBuckets<LineRecord>;
  /** A bit per hash (modulo SEEN_BITS) of #targets' ids: from the first reply by id until `joinIds`. */
  #seen: Uint8Array | undefined;
  #joined = false;
  /** When each reply was sent, in the order sent (a double a reply, in pages like the bits). */
  readonly #sentAt: PagedColumn;
  #replies = 0;

  /**
   * `count` lines, `agents` agents (numbered from 0); `spill`: pages past a few, and the buckets of
   * the replies by id, go to temp files (a log walked from its file). `opts`: the pages' sizes, the
   * buckets' (a bucket per `bucketLines` of `count`, `writeBytes` each in memory) and `hash`, an
   * id's bucket key (below 2^52; tests give colliding ones).
   */
  constructor(
    count: number,
    agents: number,
    spill = false,
    opts: { pageEntries?: number; heldPages?: number; bucketLines?: number; writeBytes?: number; hash?: (id: string) => number } = {},
  ) {
    const { bucketLines = BUCKET_LINES, writeBytes, hash = idHash, ...pages } = opts;
    this.#agents = agents;
    this.#width = Math.ceil(agents / 8);
    this.#count = count;
    this.#answered = new PagedColumn({ name: "answered", spill, ...pages });
    this.#annotatedOpen = new PagedColumn({ name: "annotated-open", spill, ...pages });
    this.#hasFirst = new PagedColumn({ name: "has-first-answer", spill, ...pages });
    this.#firstAnswer = new PagedColumn({ name: "first-answer", width: 8, spill, pageEntries: PAGE_ENTRIES / 8, ...pages });
    this.#sentAt = new PagedColumn({ name: "sent-at", width: 8, spill, pageEntries: PAGE_ENTRIES / 8, ...pages });
    this.#hash = hash;
    const buckets = Math.ceil(count / Math.max(1, bucketLines));
    this.#targets = new HashBuckets<TargetRecord>({ name: "answers-by-id", buckets, spill, writeBytes });
    this.#lines = new HashBuckets<LineRecord>({ name: "lines-answered-by-id", buckets, spill, writeBytes });
  }

  /** Removes the temp files (if any); not used after. */
  remove(): void {
    this.#answered.remove();
    this.#annotatedOpen.remove();
    this.#hasFirst.remove();
    this.#firstAnswer.remove();
    this.#sentAt.remove();
    this.#targets.remove();
    this.#lines.remove();
    this.#seen = undefined;
  }

  /** The log line at `ordinal` is fed; `agentLine`: one of the room's agents sent it. */
  line(l: LogLine, ordinal: number, agentLine: boolean): void {
    if (!agentLine && isAnnotatedOpen(l)) this.#annotatedOpen.set(ordinal >> 3, this.#annotatedOpen.get(ordinal >> 3) | (1 << (ordinal & 7)));
  }

  /** Agent `agent` sent a reply at `ts` answering `targets`. */
  reply(agent: number, ts: number, targets: readonly ReplyTarget[]): void {
    if (this.#joined) throw new Error("RoomTally: a reply after joinIds");
    if (!(agent >= 0 && agent < this.#agents)) throw new RangeError(`agent ${agent} of ${this.#agents}`);
    this.#sentAt.set(this.#replies++, ts);
    for (const t of targets) {
      if (typeof t === "string") {
        const h = this.#hash(t);
        const seen = (this.#seen ??= new Uint8Array(SEEN_BITS / 8));
        seen[(h % SEEN_BITS) >> 3]! |= 1 << (h & 7);
        this.#targets.add(h, [t, agent, ts]);
      } else if (Number.isInteger(t) && t >= 0 && t < this.#count) this.#answer(t, agent, ts, false);
    }
  }

  /**
   * Joins the replies given by id with the lines they name: each line with such an id (every one,
   * should two lines share it) is answered by those replies' agents, first at the earliest of their
   * times. Once, after the last reply and before the answers are read; walks `lines` (the log in
   * order, as the positions count them) once if any reply was given by id. An id no line has (another
   * agent's message) answers nothing.
   */
  joinIds(lines: Iterable<{ readonly id: string }>): void {
    if (this.#joined) throw new Error("RoomTally: joinIds twice");
    this.#joined = true;
    const seen = this.#seen;
    if (seen === undefined) return;
    let ordinal = 0;
    for (const l of lines) {
      const h = this.#hash(l.id);
      if (seen[(h % SEEN_BITS) >> 3]! & (1 << (h & 7))) this.#lines.add(h, [l.id, ordinal]);
      ordinal++;
    }
    if (ordinal > this.#count) this.#count = ordinal;
    for (let b = 0; b < this.#lines.count; b++) {
      // The bucket's lines by id (a line's position, or several should lines share an id), then its replies streamed past them.
      const at = new Map<string, number | number[]>();
      for (const [id, o] of this.#lines.records(b)) {
        const had = at.get(id);
        if (had === undefined) at.set(id, o);
        else if (typeof had === "number") at.set(id, [had, o]);
        else had.push(o);
      }
      if (at.size === 0) continue;
      for (const [id, agent, ts] of this.#targets.records(b)) {
        const o = at.get(id);
        if (typeof o === "number") this.#answer(o, agent, ts, true);
        else if (o !== undefined) for (const x of o) this.#answer(x, agent, ts, true);
      }
    }
    this.#targets.remove();
    this.#lines.remove();
    this.#seen = undefined;
  }

  /** Line `t` answered by `agent` at `ts`; its first answer is kept for an annotated open question, or for any line answered by id. */
  #answer(t: number, agent: number, ts: number, byId: boolean): void {
    const at = t * this.#width + (agent >> 3);
    this.#answered.set(at, this.#answered.get(at) | (1 << (agent & 7)));
    if (!byId && !(this.#annotatedOpen.get(t >> 3) & (1 << (t & 7)))) return;
    const has = this.#hasFirst.get(t >> 3);
    if (!(has & (1 << (t & 7)))) this.#hasFirst.set(t >> 3, has | (1 << (t & 7)));
    else if (this.#firstAnswer.get(t) <= ts) return;
    this.#firstAnswer.set(t, ts);
  }

  /** Replies sent, and the time of the k-th (in the order sent). */
  get replies(): number {
    return this.#replies;
  }
  sentAt(k: number): number {
    if (!(Number.isInteger(k) && k >= 0 && k < this.#replies)) throw new RangeError(`reply ${k} of ${this.#replies}`);
    return this.#sentAt.get(k);
  }

  /** How many different agents answered the line at `ordinal`. */
  answeredBy(ordinal: number): number {
    this.#readable();
    let n = 0;
    for (let a = 0; a < this.#agents; a++) if (this.#has(ordinal, a)) n++;
    return n;
  }

  /** When the line at `ordinal` was first answered (an annotated open question's, or one answered by id), if it was. */
  firstAnswer(ordinal: number): number | undefined {
    this.#readable();
    return this.#hasFirstAt(ordinal) ? this.#firstAnswer.get(ordinal) : undefined;
  }

  #readable(): void {
    if (this.#seen !== undefined) throw new Error("RoomTally: replies by id not joined with the lines (joinIds) before the answers are read");
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
