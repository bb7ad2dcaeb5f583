// How often each name comes in a log (its senders, the names its lines are directed at) without a
// table of every name: a log may have a new one on every line. The names go to buckets by their
// hash (hash-buckets.ts: 8 KB of each in memory, the rest in temp files, 0600, removed at the end)
// and each bucket is counted on its own. Memory: one bucket's distinct names while it is counted,
// and the `top` kept.
import { HashBuckets } from "./hash-buckets.ts";
import { idHash } from "./id-check.ts";
import { BUCKET_LINES } from "./orphan-join.ts";

export interface KeyCounts {
  /** How many distinct names came. */
  distinct: number;
  /** The `top` names that come most (at least `min` times), most first, ties in `tie` order. */
  top: Array<[name: string, count: number]>;
}

/**
 * Counts `names` (repeats welcome; `total`: about how many, to size the buckets). `spill: false`
 * holds them (a log in memory). `tie` orders two names that came as often (default: by UTF-16 code
 * units). `hash`, `bucketLines` (names per bucket) and `writeBytes` are for tests (colliding names, many buckets, tiny writes).
 */
export function countKeys(
  names: Iterable<string>,
  p: { top: number; min?: number; total: number; spill: boolean; tie?: (a: string, b: string) => number; hash?: (name: string) => number; bucketLines?: number; writeBytes?: number },
): KeyCounts {
  const tie = p.tie ?? ((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0));
  const hash = p.hash ?? idHash;
  const min = p.min ?? 1;
  const buckets = new HashBuckets<string>({
    name: "counts",
    buckets: Math.ceil(Math.max(1, p.total) / (p.bucketLines ?? BUCKET_LINES)),
    spill: p.spill,
    ...(p.writeBytes !== undefined ? { writeBytes: p.writeBytes } : {}),
  });
  try {
    for (const name of names) buckets.add(hash(name), name);
    const order = (a: [string, number], b: [string, number]) => b[1] - a[1] || tie(a[0], b[0]);
    let distinct = 0;
    let top: Array<[string, number]> = [];
    for (let b = 0; b < buckets.count; b++) {
      const counts = new Map<string, number>();
      for (const name of buckets.records(b)) counts.set(name, (counts.get(name) ?? 0) + 1);
      distinct += counts.size;
      for (const entry of counts) if (entry[1] >= min) top.push(entry);
      // Cut back to `top` once past twice that: what is cut can never climb back.
      if (top.length > 2 * p.top) top = top.sort(order).slice(0, p.top);
    }
    return { distinct, top: top.sort(order).slice(0, Math.max(0, p.top)) };
  } finally {
    buckets.remove();
  }
}
