// A sliding window per key (a source address): at most `limit` events in `windowMs`. Timestamps
// are pruned on read with an explicit `now`; nothing runs a timer. The number of keys is bounded
// too, so a flood of distinct sources cannot grow it: the key counted (or refused) longest ago goes first.
import { BoundedMap } from "../../util/bounded-map.ts";

export class SlidingWindowPerKey {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #events: BoundedMap<string, number[]>;

  constructor(params: { limit: number; windowMs: number; maxKeys?: number }) {
    if (!Number.isInteger(params.limit) || params.limit < 1) throw new TypeError(`Expected \`limit\` to be a positive integer, got \`${params.limit}\``);
    this.#limit = params.limit;
    this.#windowMs = params.windowMs;
    this.#events = new BoundedMap(params.maxKeys ?? 10_000);
  }

  /** Counts an event for `key` at `now` when the window has room; false (nothing counted) when it has none. */
  take(key: string, now: number): boolean {
    const events = (this.#events.get(key) ?? []).filter((t) => now - t < this.#windowMs);
    if (events.length >= this.#limit) {
      this.#events.set(key, events);
      return false;
    }
    events.push(now);
    this.#events.set(key, events);
    return true;
  }
}
