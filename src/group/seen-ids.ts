// Bounded dedup of msg ids. ACP ids increase per group, so the ids near the newest one live in a
// 1024-bit circular bitmap (128 bytes, O(1), no allocation per message). Everything else — ids
// far below the newest (a reconnect backlog arriving after newer pushes) and non-numeric ids
// (replay logs) — goes to a Set bounded by a ring of the most recent 512. Nothing is allocated
// until the first message.

const WINDOW_BITS = 1024;
const WINDOW_WORDS = WINDOW_BITS / 32;
export const SEEN_OTHER_CAPACITY = 512;

export class SeenIds {
  /** Highest numeric id seen, or -1. */
  #top = -1;
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
    if (num > this.#top) {
      this.#advance(num);
      return false;
    }
    if (num <= this.#top - WINDOW_BITS) return this.#otherCheckAndAdd(num);
    const bits = this.#bits as Uint32Array;
    const slot = num % WINDOW_BITS;
    const word = slot >>> 5;
    const mask = 1 << (slot & 31);
    if (((bits[word] as number) & mask) !== 0) return true;
    bits[word] = (bits[word] as number) | mask;
    return false;
  }

  /** Moves the window's top to `num`, clearing the slots of ids skipped over (never seen). */
  #advance(num: number): void {
    const bits = (this.#bits ??= new Uint32Array(WINDOW_WORDS));
    if (this.#top < 0 || num - this.#top >= WINDOW_BITS) bits.fill(0);
    else {
      // Clear the skipped slots: bit by bit up to a word boundary, then whole words.
      let id = this.#top + 1;
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
    const slot = num % WINDOW_BITS;
    bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
    this.#top = num;
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
