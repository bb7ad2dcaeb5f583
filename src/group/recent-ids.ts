// Bounded memory of recently seen msg ids (dedup) and who sent each (to resolve replies).
// A Map plus a ring of keys: O(1) per message, no growth past `capacity`, nothing preallocated.

/** Numeric ids are stored as numbers (cheaper than strings); any other id as its string. */
export type MsgKey = number | string;

export class RecentIds {
  readonly capacity: number;
  #senders = new Map<MsgKey, string>();
  #ring: MsgKey[] = [];
  #next = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new TypeError(`Expected \`capacity\` to be a positive integer, got \`${capacity}\``);
    }
    this.capacity = capacity;
  }

  get size(): number {
    return this.#senders.size;
  }

  has(key: MsgKey): boolean {
    return this.#senders.has(key);
  }

  senderOf(key: MsgKey): string | undefined {
    return this.#senders.get(key);
  }

  /** Remembers `key`; past capacity the oldest key is forgotten. The key must not be present. */
  add(key: MsgKey, sender: string): void {
    if (this.#ring.length < this.capacity) {
      this.#ring.push(key);
    } else {
      this.#senders.delete(this.#ring[this.#next] as MsgKey);
      this.#ring[this.#next] = key;
      this.#next = (this.#next + 1) % this.capacity;
    }
    this.#senders.set(key, sender);
  }
}
