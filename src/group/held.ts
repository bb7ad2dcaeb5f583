// A FIFO of held messages whose front can be dropped in O(1): under overload every feed drops the
// oldest few, and shifting a 500-element array per feed would cost more than the feed itself.

const COMPACT_AT = 256;

/** What a holder may read of a queue without changing it. */
export interface ReadonlyHeldQueue<T> {
  readonly length: number;
  some(predicate: (item: T) => boolean): boolean;
  toArray(): T[];
}

export class HeldQueue<T> implements ReadonlyHeldQueue<T> {
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

  /** A copy of what is held, in order. */
  toArray(): T[] {
    return this.#items.slice(this.#head);
  }

  /** Removes and returns the items matching `predicate`, keeping the others in order. */
  removeWhere(predicate: (item: T) => boolean): T[] {
    if (!this.some(predicate)) return [];
    const removed: T[] = [];
    const kept: T[] = [];
    for (const item of this.takeAll()) (predicate(item) ? removed : kept).push(item);
    this.#items = kept;
    return removed;
  }

  some(predicate: (item: T) => boolean): boolean {
    for (let i = this.#head; i < this.#items.length; i++) if (predicate(this.#items[i] as T)) return true;
    return false;
  }
}

/**
 * What a group holds between arrival and dispatch: the buffer gate (`incoming`, debounce not yet
 * elapsed) and the dispatch gate (`pending`, waiting for the lock, cooldown or a retry), plus the
 * number of feed batches behind them. Every dispatch takes everything held.
 */
export class HeldMessages<T extends { isMention: boolean }> {
  readonly #incoming = new HeldQueue<T>();
  readonly #pending = new HeldQueue<T>();
  /** Everything held, counted here so the per-message capacity check reads one field, not two queues. */
  #count = 0;
  /** Feed batches (or re-queued batches' counts) behind what is held: `batchesMerged`. */
  #batches = 0;

  /** Held behind the buffer gate (read-only: messages enter through {@link add}). */
  get incoming(): ReadonlyHeldQueue<T> {
    return this.#incoming;
  }

  /** Held behind the dispatch gate (read-only: they enter through {@link flush} and {@link requeue}). */
  get pending(): ReadonlyHeldQueue<T> {
    return this.#pending;
  }

  get length(): number {
    return this.#count;
  }

  /** A feed call added messages: one more batch behind what is held. */
  batchArrived(): void {
    this.#batches++;
  }

  /** A message arrives behind the buffer gate. */
  add(item: T): void {
    this.#incoming.push(item);
    this.#count++;
  }

  /** The buffer gate opened: incoming → pending. */
  flush(): void {
    this.#pending.moveFrom(this.#incoming);
  }

  /** Everything held, in arrival order (re-queued first), and how many batches it merges. */
  takeAll(): { messages: T[]; batchesMerged: number } {
    this.flush();
    const batchesMerged = Math.max(1, this.#batches);
    this.#batches = 0;
    this.#count = 0;
    return { messages: this.#pending.takeAll(), batchesMerged };
  }

  /** A failed dispatch goes back in front of whatever arrived meanwhile. */
  requeue(messages: readonly T[], batchesMerged: number): void {
    this.#pending.prepend(messages);
    this.#count += messages.length;
    this.#batches += batchesMerged;
  }

  /** Drops the oldest past `max` (pending ones are older than anything still incoming). */
  dropOverCapacity(max: number): readonly T[] {
    const excess = this.length - max;
    // Runs per feed call: no allocation when nothing is dropped.
    if (excess <= 0) return NOTHING;
    const dropped = this.#pending.dropFront(excess);
    if (dropped.length < excess) for (const m of this.#incoming.dropFront(excess - dropped.length)) dropped.push(m);
    this.#count -= dropped.length;
    return dropped;
  }

  /** Everything held right now, oldest first (pending before incoming), as a copy. */
  snapshot(): T[] {
    return this.#pending.toArray().concat(this.#incoming.toArray());
  }

  /** Removes every held message matching `predicate` (pending first, then incoming). */
  removeWhere(predicate: (m: T) => boolean): T[] {
    const removed = this.#pending.removeWhere(predicate);
    for (const m of this.#incoming.removeWhere(predicate)) removed.push(m);
    this.#count -= removed.length;
    return removed;
  }

  holdsMention(): boolean {
    const isMention = (m: T) => m.isMention;
    return this.#incoming.some(isMention) || this.#pending.some(isMention);
  }
}

const NOTHING: readonly never[] = Object.freeze([]);
