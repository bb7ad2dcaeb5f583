// countKeys (key-counts.ts) against a plain map of every name: the same distinct count and the
// same top names, whatever the names (repeats, colliding hashes, ties), the buckets and the writes.
import { readdirSync } from "node:fs";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countKeys } from "../../src/replay/key-counts.ts";
import { tempDir, type TempDir } from "./helpers.ts";

let dir: TempDir;
let saved: string | undefined;
beforeEach(() => {
  dir = tempDir();
  saved = process.env.TMPDIR;
  process.env.TMPDIR = dir.path;
});
afterEach(() => {
  if (saved === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = saved;
  dir.remove();
});

/** The model: every name in a map, sorted whole. */
function model(names: readonly string[], top: number, min: number): { distinct: number; top: Array<[string, number]> } {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  const sorted = [...counts].filter(([, c]) => c >= min).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { distinct: counts.size, top: sorted.slice(0, top) };
}

describe("countKeys", () => {
  it("property: the distinct names and the top ones are a plain map's, from memory or temp files, and no file is left", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("ann", "bob", "cy", "dee", "Ann", "ännа", "e", "f", "g", "h", ""), { maxLength: 60 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        fc.constantFrom(1, 3, 1000),
        fc.constantFrom(1, 16, 8192),
        fc.boolean(),
        (names, top, min, spill, bucketLines, writeBytes, collide) => {
          const got = countKeys(names, { top, min, total: names.length, spill, bucketLines, writeBytes, ...(collide ? { hash: (n: string) => n.length % 2 } : {}) });
          expect(got).toEqual(model(names, top, min));
          expect(readdirSync(dir.path)).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
