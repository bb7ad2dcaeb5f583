// A FIFO of held messages whose front can be dropped in O(1): under overload every feed drops the
// oldest few, and shifting a 500-element array per feed would cost more than the feed itself.

const COMPACT_AT = 256;

export class HeldQueue<T> {
  #items: T[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** Appends every item of `other`, emptying it. */
  moveFrom(other: HeldQueue<T>): void {
    if (other.length === 0) return;
    if (this.length === 0) {
      this.#items = other.takeAll();
      this.#head = 0;
      return;
    }
    for (const item of other.takeAll()) this.#items.push(item);
  }

  /** Puts `items` in front of what is held (a failed batch going back first). */
  prepend(items: readonly T[]): void {
    this.#items = items.concat(this.takeAll());
    this.#head = 0;
  }

  /** Removes up to `n` items from the front, oldest first. */
  dropFront(n: number): T[] {
    const count = Math.min(n, this.length);
    const dropped = this.#items.slice(this.#head, this.#head + count);
    this.#head += count;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= COMPACT_AT && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return dropped;
  }

  /** Everything held, in order; the queue is left empty. */
  takeAll(): T[] {
    const out = this.#head === 0 ? this.#items : this.#items.slice(this.#head);
    this.#items = [];
    this.#head = 0;
    return out;
  }

  some(predicate: (item: T) => boolean): boolean {
    for (let i = this.#head; i < this.#items.length; i++) if (predicate(this.#items[i] as T)) return true;
    return false;
  }
}
