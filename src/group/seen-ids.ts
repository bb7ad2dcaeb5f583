// Bounded dedup of msg ids. ACP ids increase per group, so the ids near the newest one live in a
// 1024-bit circular bitmap (128 bytes, O(1), no allocation per message), except the current run
// of consecutive ids up to the newest, which needs no bits at all. Everything else — ids
// far below the newest (a reconnect backlog arriving after newer pushes) and non-numeric ids
// (replay logs) — goes to a Set bounded by a ring of the most recent 512. Nothing is allocated
// until the first message.

const WINDOW_BITS = 1024;
const WINDOW_WORDS = WINDOW_BITS / 32;
export const SEEN_OTHER_CAPACITY = 512;

export class SeenIds {
  /** Highest numeric id seen, or -1. */
  #top = -1;
  /**
   * Every id from here to #top has been seen, and the bitmap is not kept for them: ids arriving
   * one after another (the usual case) touch nothing but #top. The bitmap answers for the ids of
   * the window below this point; a gap writes the run into it and starts a new run.
   */
  #runFrom = 0;
  #bits: Uint32Array | null = null;
  #other: Set<string | number> | null = null;
  #ring: Array<string | number> = [];
  #next = 0;

  /**
   * Records `msgId` (with `num`, its value when it is a canonical decimal integer) and tells
   * whether it had been seen already.
   */
  checkAndAdd(msgId: string, num: number | undefined): boolean {
    if (num === undefined) return this.#otherCheckAndAdd(msgId);
    const top = this.#top;
    if (num > top) {
      if (num === top + 1 && top >= 0) this.#top = num;
      else this.#jump(num);
      return false;
    }
    if (num <= top - WINDOW_BITS) return this.#otherCheckAndAdd(num);
    if (num >= this.#runFrom) return true;
    const bits = this.#bitmap();
    const slot = num % WINDOW_BITS;
    const word = slot >>> 5;
    const mask = 1 << (slot & 31);
    if (((bits[word] as number) & mask) !== 0) return true;
    bits[word] = (bits[word] as number) | mask;
    return false;
  }

  #bitmap(): Uint32Array {
    return (this.#bits ??= new Uint32Array(WINDOW_WORDS));
  }

  /**
   * A new top that skips ids (or the first id): the run so far goes into the bitmap, the skipped
   * ids' slots are cleared (never seen), and `num` starts a new run.
   */
  #jump(num: number): void {
    const top = this.#top;
    if (top < 0 || num - top >= WINDOW_BITS) {
      // Nothing below `num` in its window was seen (or it is all out of the window).
      this.#bits?.fill(0);
    } else {
      const bits = this.#bitmap();
      // The run [#runFrom, top], within the new window: seen.
      for (let id = Math.max(this.#runFrom, num - WINDOW_BITS + 1); id <= top; id++) {
        const slot = id % WINDOW_BITS;
        bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
      }
      // The skipped ids (top, num): never seen. Bit by bit up to a word boundary, then whole words.
      let id = top + 1;
      while (id < num && (id & 31) !== 0) {
        const slot = id % WINDOW_BITS;
        bits[slot >>> 5] = (bits[slot >>> 5] as number) & ~(1 << (slot & 31));
        id++;
      }
      while (id + 32 <= num) {
        bits[(id % WINDOW_BITS) >>> 5] = 0;
        id += 32;
      }
      for (; id < num; id++) {
        const slot = id % WINDOW_BITS;
        bits[slot >>> 5] = (bits[slot >>> 5] as number) & ~(1 << (slot & 31));
      }
    }
    this.#top = num;
    this.#runFrom = num;
  }

  #otherCheckAndAdd(key: string | number): boolean {
    const other = (this.#other ??= new Set());
    if (other.has(key)) return true;
    if (this.#ring.length < SEEN_OTHER_CAPACITY) this.#ring.push(key);
    else {
      other.delete(this.#ring[this.#next] as string | number);
      this.#ring[this.#next] = key;
      this.#next = (this.#next + 1) % SEEN_OTHER_CAPACITY;
    }
    other.add(key);
    return false;
  }
}

const REPLY_INDEX_CAPACITY = 64;

/** Who sent each of the last 64 messages: resolves `replyTo` on our own messages. */
export class RecentSenders {
  /** Pairs `[msgId, sender]` side by side in one ring: a message writes one place, not two. */
  #ring: string[] = [];
  #next = 0;

  add(msgId: string, sender: string): void {
    const ring = this.#ring;
    if (ring.length < 2 * REPLY_INDEX_CAPACITY) ring.push(msgId, sender);
    else {
      const at = this.#next;
      ring[at] = msgId;
      ring[at + 1] = sender;
      this.#next = at + 2 === 2 * REPLY_INDEX_CAPACITY ? 0 : at + 2;
    }
  }

  senderOf(msgId: string): string | undefined {
    // Newest first: from just before the next write position backwards, wrapping once.
    const ring = this.#ring;
    const n = ring.length;
    for (let k = 2; k <= n; k += 2) {
      const at = (this.#next - k + n) % n;
      if (ring[at] === msgId) return ring[at + 1];
    }
    return undefined;
  }
}
