// The one bounded table: a Map (or Set) that keeps at most `max` entries, with one eviction
// policy for every cache and memory in the project — writing a key, new or not, makes it the
// newest, and past `max` the oldest written goes. Reads (`get`, `has`) never reorder, so a lookup
// costs what a Map's does. Built on Map's insertion order: no per-entry allocation beyond the
// Map's own, nothing allocated up front (an idle group's empty table is one small object).
// Chosen over the registry's lru-cache: that one allocates its arrays for `max` entries up front
// (~3.9 KB for max 128, measured), which the per-group tables cannot afford, and its `get` reorders.
// Pure.

function checkMax(max: number): number {
  if (!Number.isSafeInteger(max) || max < 1) throw new TypeError(`Expected \`max\` to be a positive integer, got \`${max}\``);
  return max;
}

export class BoundedMap<K, V> implements Iterable<[K, V]> {
  readonly #map = new Map<K, V>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = checkMax(max);
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Writes `key` as the newest entry; past `max`, the oldest written goes. */
  set(key: K, value: V): this {
    const map = this.#map;
    map.delete(key);
    map.set(key, value);
    if (map.size > this.#max) evictOldest(map);
    return this;
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }

  /** Oldest written first. */
  keys(): MapIterator<K> {
    return this.#map.keys();
  }

  values(): MapIterator<V> {
    return this.#map.values();
  }

  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map.entries();
  }
}

export class BoundedSet<T> implements Iterable<T> {
  readonly #set = new Set<T>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = checkMax(max);
  }

  get size(): number {
    return this.#set.size;
  }

  has(value: T): boolean {
    return this.#set.has(value);
  }

  /** Writes `value` as the newest entry; past `max`, the oldest written goes. */
  add(value: T): this {
    const set = this.#set;
    set.delete(value);
    set.add(value);
    if (set.size > this.#max) evictOldest(set);
    return this;
  }

  delete(value: T): boolean {
    return this.#set.delete(value);
  }

  clear(): void {
    this.#set.clear();
  }

  /** Oldest written first. */
  values(): SetIterator<T> {
    return this.#set.values();
  }

  [Symbol.iterator](): SetIterator<T> {
    return this.#set.values();
  }
}

function evictOldest<K>(table: Map<K, unknown> | Set<K>): void {
  for (const entry of table.keys()) {
    table.delete(entry);
    return;
  }
}
