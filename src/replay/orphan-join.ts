// The room's orphan figures (room.ts): a log's annotated open questions joined by id with the
// people's replies that point at them — which questions another person answered. Walked from its
// file, a log's questions and replies go to buckets by their id's hash (hash-buckets.ts: 8 KB of
// each in memory, the rest in temp files); then each bucket is joined on its own, in memory, about BUCKET_LINES lines of log's
// worth at a time. The times to a first answer go to a paged column of doubles (paged-column.ts),
// and their median and 90th percentile are found by a radix select over it (16 bits a walk), exact,
// as a sort gives them. Nothing held grows with the questions' count but the buckets' 8 KB each (a
// bucket per BUCKET_LINES lines of log: 0.8 MB at 6.5 million lines). A reply whose id's hash no
// question has (a bit set of 8 million, 1 MB) is not written at all.
import { HashBuckets } from "./hash-buckets.ts";
import { idHash } from "./id-check.ts";
import { PagedColumn } from "./paged-column.ts";

/** An answer later than this after its question is late: the asker has likely moved on. */
export const ORPHAN_ANSWER_WITHIN_MS = 180_000;

/**
 * Open questions by the log's annotation: a person's line ending in `?`/`？` in the annotated part
 * that the annotators direct at nobody but its asker. Orphaned: no other person replied to it (the
 * log's `replyTo`). Only annotated lines count: elsewhere the log does not say who answered.
 */
export interface OrphanMetrics {
  open: number;
  orphaned: number;
  /** Orphaned questions by how many different agents answered them. */
  orphanedAnsweredBy: { none: number; one: number; twoOrMore: number };
  /** Orphaned questions exactly one agent answered, within {@link ORPHAN_ANSWER_WITHIN_MS} of the question. */
  orphanedOnceInTime: number;
  /** orphanedOnceInTime / orphaned (0 when none were orphaned). */
  orphanedOnceInTimeRate: number;
  /** Questions a person answered that an agent answered too. */
  personAnsweredAlsoByAgent: number;
  /** Time from an orphaned question to the first agent's answer to it: median and 90th percentile, ms (null: none answered). */
  timeToAnswerMs: { p50: number | null; p90: number | null };
}

/** What the join needs of an annotated open question, as the room counted it. */
export interface QuestionFacts {
  id: string;
  /** Its asker, lower-cased. */
  asker: string;
  /** How many different agents answered it. */
  answeredBy: number;
  /** Time from it to the first agent's answer, ms (given when an agent answered it). */
  waitMs: number | undefined;
}

/** Log lines per bucket by default (about 16 MB of log). */
export const BUCKET_LINES = 64 * 1024;
/** Bits of the questions' hashes, to pass over the replies to anything else. */
const SEEN_BITS = 1 << 23;

/** A bucket's record: a question (id, asker, agents that answered it, wait or null), or a person's reply (id, sender lower-cased). */
type JoinRecord = [0, string, string, number, number | null] | [1, string, string];

/**
 * Questions first (`question`, in log order), then the people's replies (`reply`), then `measure`.
 * `spill: false` holds every record (a log in memory); `lines`: the log's, to size the buckets;
 * `hash`: an id's bucket key (below 2^52; tests give colliding ones); `writeBytes`: what a bucket
 * holds before it is written; `pages`: the waits' column.
 */
export class OrphanJoin {
  readonly #spill: boolean;
  readonly #hash: (id: string) => number;
  readonly #pages: { pageEntries?: number; heldPages?: number };
  readonly #buckets: HashBuckets<JoinRecord>;
  /** A bit per hash (modulo SEEN_BITS) of the questions' ids. */
  readonly #seen = new Uint8Array(SEEN_BITS / 8);
  #questions = 0;
  #replying = false;

  constructor(p: { spill: boolean; lines: number; bucketLines?: number; hash?: (id: string) => number; writeBytes?: number; pages?: { pageEntries?: number; heldPages?: number } }) {
    this.#spill = p.spill;
    this.#hash = p.hash ?? idHash;
    this.#pages = p.pages ?? {};
    const buckets = Math.ceil(p.lines / Math.max(1, p.bucketLines ?? BUCKET_LINES));
    this.#buckets = new HashBuckets<JoinRecord>({ name: "orphans", buckets, spill: p.spill, writeBytes: p.writeBytes });
  }

  /** Annotated open questions given so far. */
  get questions(): number {
    return this.#questions;
  }

  /** An annotated open question; a later one with the same id takes its place. */
  question(q: QuestionFacts): void {
    if (this.#replying) throw new Error("OrphanJoin: a question after the replies");
    if (q.answeredBy > 0 && q.waitMs === undefined) throw new RangeError(`question ${q.id}: answered by ${q.answeredBy} agents, with no first answer`);
    this.#questions++;
    // -0 ranks as 0, as a sort by difference does.
    const wait = q.waitMs === undefined ? null : q.waitMs === 0 ? 0 : q.waitMs;
    const h = this.#hash(q.id);
    this.#seen[(h % SEEN_BITS) >> 3]! |= 1 << (h & 7);
    this.#buckets.add(h, [0, q.id, q.asker, q.answeredBy, wait]);
  }

  /** A person's (`sender`, lower-cased) reply to the message `id`. */
  reply(id: string, sender: string): void {
    this.#replying = true;
    const h = this.#hash(id);
    if (this.#seen[(h % SEEN_BITS) >> 3]! & (1 << (h & 7))) this.#buckets.add(h, [1, id, sender]);
  }

  /** The figures; the records are not used after (call `remove`). */
  measure(): OrphanMetrics {
    const out: OrphanMetrics = { open: 0, orphaned: 0, orphanedAnsweredBy: { none: 0, one: 0, twoOrMore: 0 }, orphanedOnceInTime: 0, orphanedOnceInTimeRate: 0, personAnsweredAlsoByAgent: 0, timeToAnswerMs: { p50: null, p90: null } };
    const waits = new PagedColumn({ name: "orphan-waits", width: 8, spill: this.#spill, ...this.#pages });
    let n = 0;
    try {
      for (let b = 0; b < this.#buckets.count; b++) {
        // A bucket's questions by id, then whether another person replied to each.
        const questions = new Map<string, { asker: string; answeredBy: number; wait: number | null; byPerson: boolean }>();
        for (const r of this.#buckets.records(b)) {
          if (r[0] === 0) questions.set(r[1], { asker: r[2], answeredBy: r[3], wait: r[4], byPerson: false });
          else {
            const q = questions.get(r[1]);
            if (q !== undefined && q.asker !== r[2]) q.byPerson = true;
          }
        }
        for (const q of questions.values()) {
          out.open++;
          if (q.byPerson) {
            if (q.answeredBy > 0) out.personAnsweredAlsoByAgent++;
            continue;
          }
          out.orphaned++;
          if (q.answeredBy === 0) out.orphanedAnsweredBy.none++;
          else if (q.answeredBy === 1) out.orphanedAnsweredBy.one++;
          else out.orphanedAnsweredBy.twoOrMore++;
          if (q.answeredBy === 0) continue;
          waits.set(n++, q.wait!);
          if (q.answeredBy === 1 && q.wait! <= ORPHAN_ANSWER_WITHIN_MS) out.orphanedOnceInTime++;
        }
      }
      out.orphanedOnceInTimeRate = out.orphaned === 0 ? 0 : out.orphanedOnceInTime / out.orphaned;
      const at = (q: number) => (n === 0 ? null : selectDouble(waits, n, Math.min(n - 1, Math.floor(q * n))));
      out.timeToAnswerMs = { p50: at(0.5), p90: at(0.9) };
      return out;
    } finally {
      waits.remove();
    }
  }

  /** Removes the temp files (if any); not used after. */
  remove(): void {
    this.#buckets.remove();
  }
}

// A double's bits as an unsigned 64-bit key in the doubles' order (two 32-bit halves).
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LE ? 1 : 0;
const LO = LE ? 0 : 1;

/** The key's 16-bit digit `d` (0: the top) of `x` (not NaN). */
function digit(x: number, d: number): number {
  f64[0] = x;
  let hi = u32[HI]!;
  let lo = u32[LO]!;
  // Negatives in reverse, below the positives: all bits flipped; positives: the sign bit set.
  if (hi & 0x80000000) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else hi = (hi | 0x80000000) >>> 0;
  return d === 0 ? hi >>> 16 : d === 1 ? hi & 0xffff : d === 2 ? lo >>> 16 : lo & 0xffff;
}

/** The `k`-th smallest (from 0) of the first `n` entries of a column of doubles: four walks, each narrowing the key by 16 bits. */
function selectDouble(col: PagedColumn, n: number, k: number): number {
  if (!(Number.isInteger(k) && k >= 0 && k < n)) throw new RangeError(`select ${k} of ${n}`);
  const counts = new Uint32Array(1 << 16);
  const prefix: number[] = [];
  const matches = (x: number) => prefix.every((p, d) => digit(x, d) === p);
  for (let d = 0; d < 4; d++) {
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const x = col.get(i);
      if (matches(x)) counts[digit(x, d)]!++;
    }
    let v = 0;
    while (k >= counts[v]!) k -= counts[v++]!;
    prefix.push(v);
  }
  // Every entry with the whole key is the same double.
  for (let i = 0; i < n; i++) if (matches(col.get(i))) return col.get(i);
  throw new Error("selectDouble: no entry with the selected key");
}
