// Which of a log's lines open with a member's bare name (room.ts's open questions): a question that
// opens with `bob …?` is put to bob when bob is a member (a sender of the log, or one of the room's
// agents), and open to the room when not. Knowing that needs every member, and a log may have a new
// sender on every line: instead of a set of them, each line's sender's keys and each line's asked
// key (floor.ts's `openQuestionAsks`, with its position) go to buckets by the key's hash
// (hash-buckets.ts: 8 KB of each in memory, the rest in temp files with `spill`); `join` then reads
// each bucket on its own — its member keys in a set, its asked keys checked against them — and sets
// a bit per line whose asked key is a member's. Held: a bucket per BUCKET_LINES lines of log, a
// bucket's distinct keys while it is joined, the few most recent senders (not written twice), and
// the bits up to the last line that asks a member.
import { memberKeys } from "../group/addressee.ts";
import { openQuestionAsks } from "../monitor/floor.ts";
import { HashBuckets } from "./hash-buckets.ts";
import { idHash } from "./id-check.ts";
import type { LogLine } from "./log.ts";
import { BUCKET_LINES } from "./orphan-join.ts";

/** Senders remembered (by their hash's low bits) so that a sender's keys are not written on each of its lines. */
const RECENT_SENDERS = 4096;

/** A member's key, or a line's asked key with the line's position. */
type KeyRecord = [string] | [string, number];

/**
 * `line` for every line of the log in order (each position once), then `join` once, then
 * `asksMember`. `members`: names that are members though they may send nothing (the room's agents'
 * personas and aids). `lines`: the log's, to size the buckets; `spill: false` holds every record (a
 * log in memory). `opts`: a bucket per `bucketLines` lines, `writeBytes` each in memory, and `hash`,
 * a key's bucket key (below 2^52; tests give colliding ones).
 */
export class MemberAsks {
  readonly #hash: (key: string) => number;
  readonly #buckets: HashBuckets<KeyRecord>;
  /** The last sender seen in each slot: its keys are written already. */
  readonly #recent: Array<string | undefined> = new Array<string | undefined>(RECENT_SENDERS).fill(undefined);
  /** A bit per line whose asked key is a member's, after `join` (undefined: none is). */
  #bits: Uint8Array | undefined;
  #joined = false;

  constructor(p: { members: Iterable<string>; lines: number; spill: boolean; bucketLines?: number; writeBytes?: number; hash?: (key: string) => number }) {
    this.#hash = p.hash ?? idHash;
    const buckets = Math.ceil(p.lines / Math.max(1, p.bucketLines ?? BUCKET_LINES));
    this.#buckets = new HashBuckets<KeyRecord>({ name: "member-keys", buckets, spill: p.spill, writeBytes: p.writeBytes });
    for (const name of p.members) this.#member(name);
  }

  /** The log line at `ordinal`. */
  line(l: Pick<LogLine, "sender" | "content">, ordinal: number): void {
    if (this.#joined) throw new Error("MemberAsks: a line after join");
    const slot = this.#hash(l.sender) & (RECENT_SENDERS - 1);
    if (this.#recent[slot] !== l.sender) {
      this.#recent[slot] = l.sender;
      this.#member(l.sender);
    }
    const asks = openQuestionAsks(l.content, l.sender);
    if (typeof asks === "string") this.#buckets.add(this.#hash(asks), [asks, ordinal]);
  }

  /** Joins the lines' asked keys with the members' keys, a bucket at a time; once, after the last line. */
  join(): void {
    if (this.#joined) throw new Error("MemberAsks: join twice");
    this.#joined = true;
    this.#recent.fill(undefined);
    for (let b = 0; b < this.#buckets.count; b++) {
      const keys = new Set<string>();
      const asked: Array<[string, number]> = [];
      for (const r of this.#buckets.records(b)) {
        if (r.length === 1) keys.add(r[0]);
        else asked.push(r);
      }
      for (const [key, ordinal] of asked) {
        if (!keys.has(key)) continue;
        const bits = this.#grow(ordinal);
        bits[ordinal >> 3]! |= 1 << (ordinal & 7);
      }
    }
    this.#buckets.remove();
  }

  /** Whether the line at `ordinal` opens with a member's bare name (floor.ts's asked key is a member's). */
  asksMember(ordinal: number): boolean {
    if (!this.#joined) throw new Error("MemberAsks: asksMember before join");
    const bits = this.#bits;
    return bits !== undefined && ordinal >> 3 < bits.length && (bits[ordinal >> 3]! & (1 << (ordinal & 7))) !== 0;
  }

  /** Removes the temp files (if any); not used after. */
  remove(): void {
    this.#buckets.remove();
    this.#bits = undefined;
  }

  #member(name: string): void {
    for (const k of memberKeys(name)) this.#buckets.add(this.#hash(k), [k]);
  }

  /** The bits, long enough for `ordinal`. */
  #grow(ordinal: number): Uint8Array {
    const need = (ordinal >> 3) + 1;
    const had = this.#bits;
    if (had !== undefined && had.length >= need) return had;
    const bits = new Uint8Array(Math.max(need, (had?.length ?? 0) * 2));
    if (had !== undefined) bits.set(had);
    return (this.#bits = bits);
  }
}
