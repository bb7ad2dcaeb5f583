// The scan of a log for a replay finds repeated ids by their hashes, sorted a bucket at a time
// (src/replay/id-check.ts): whatever the ids, the buckets (one in memory, or many in temp files)
// and when it is asked, the hashes it says came twice are exactly those of the ids added twice so
// far — the repeats the whole-log Set of readLog finds — and its temp files go with `remove`.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { idHash, IdHashes } from "../../src/replay/id-check.ts";
import { usePrivateTmpdir } from "../support/private-tmpdir.ts";

const tempFolders = usePrivateTmpdir("id-check");

describe("IdHashes", () => {
  it("says which ids came twice, exactly, at any point, in one bucket or many on disk", () => {
    const id = fc.oneof(fc.integer({ min: 0, max: 3000 }).map((n) => `g${n}`), fc.string({ maxLength: 12 }), fc.integer().map(String));
    fc.assert(
      fc.property(fc.array(id, { maxLength: 3000 }), fc.constantFrom(1, 2, 3, 50), fc.nat(), (ids, buckets, askAt) => {
        // One bucket held in memory, or several, each written to its file 1,024 hashes at a time.
        const hashes = new IdHashes(buckets * 1000, 1000);
        try {
          const seen = new Set<string>();
          const twice = new Set<number>();
          const at = ids.length === 0 ? 0 : askAt % (ids.length + 1);
          ids.forEach((x, i) => {
            if (i === at) expect(hashes.repeated(1e9)).toEqual(new Set(twice));
            hashes.add(x);
            if (seen.has(x)) twice.add(idHash(x));
            seen.add(x);
          });
          expect(hashes.repeated(1e9)).toEqual(twice);
          // Past `max` repeats it stops counting.
          if (twice.size > 0) expect(hashes.repeated(twice.size - 1)).toBeUndefined();
        } finally {
          hashes.remove();
        }
        expect([...tempFolders("")]).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it("no two of 2 million distinct ids share a hash (the second walk checks only real repeats)", () => {
    const hashes = new IdHashes(500 * 1024 * 1024);
    try {
      for (let n = 0; n < 2_000_000; n++) hashes.add(`g${n}`);
      expect(hashes.repeated(10)).toEqual(new Set());
      expect([...tempFolders("")]).toHaveLength(1);
    } finally {
      hashes.remove();
    }
    expect([...tempFolders("")]).toEqual([]);
  });
});
