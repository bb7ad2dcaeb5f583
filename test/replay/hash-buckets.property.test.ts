// HashBuckets (hash-buckets.ts), the buckets the replay's joins by id share: every record comes back
// from the bucket of its hash, each bucket's in the order given, whether the bucket stayed in memory
// or was written to its temp file a few bytes at a time; records longer than the bytes held, odd
// strings (newlines, quotes, non-BMP characters) and one bucket or many; the temp files are 0600
// and gone after `remove`.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HashBuckets } from "../../src/replay/hash-buckets.ts";
import { usePrivateTmpdir } from "../support/private-tmpdir.ts";

const tempFolders = usePrivateTmpdir("hash-buckets");
const TWO_52 = 2 ** 52;

describe("HashBuckets", () => {
  it("property: each bucket gives back its records in the order given, each in the bucket its hash names", () => {
    const record = fc.tuple(fc.integer({ min: 0, max: TWO_52 - 1 }), fc.tuple(fc.nat(), fc.string({ unit: "binary", maxLength: 40 })));
    fc.assert(
      fc.property(fc.array(record, { maxLength: 60 }), fc.integer({ min: 1, max: 9 }), fc.boolean(), fc.constantFrom(1, 16, 200, 8192), (records, count, spill, writeBytes) => {
        const buckets = new HashBuckets<[number, string]>({ name: "test", buckets: count, spill, writeBytes });
        try {
          for (const [hash, r] of records) buckets.add(hash, r);
          expect(buckets.count).toBe(spill ? count : 1);
          const got: Array<Array<[number, string]>> = [];
          for (let b = 0; b < buckets.count; b++) got.push([...buckets.records(b)]);
          // The model: a bucket per equal slice of the hashes, records in the order given.
          const want = Array.from({ length: buckets.count }, () => [] as Array<[number, string]>);
          for (const [hash, r] of records) want[buckets.count === 1 ? 0 : Math.floor((hash / TWO_52) * buckets.count)]!.push(r);
          expect(got).toEqual(want);
          // A second read gives the same.
          for (let b = 0; b < buckets.count; b++) expect([...buckets.records(b)]).toEqual(want[b]);
          const folders = [...tempFolders("acp-replay-test-")];
          // Held in memory unless spilled and some bucket outgrew its bytes.
          if (!spill) expect(folders).toEqual([]);
          for (const dir of folders) for (const f of readdirSync(join(process.env.TMPDIR!, dir))) expect(statSync(join(process.env.TMPDIR!, dir, f)).mode & 0o777).toBe(0o600);
        } finally {
          buckets.remove();
        }
        expect([...tempFolders("acp-replay-test-")]).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it("a bucket written to its file: records past the bytes held go to the file, and come back first", () => {
    const buckets = new HashBuckets<string>({ name: "test", buckets: 2, spill: true, writeBytes: 16 });
    try {
      for (const s of ["a", "bb", "a long record of more than sixteen bytes", "c"]) buckets.add(0, s);
      buckets.add(TWO_52 - 1, "other");
      expect([...tempFolders("acp-replay-test-")]).toHaveLength(1);
      expect([...buckets.records(0)]).toEqual(["a", "bb", "a long record of more than sixteen bytes", "c"]);
      expect([...buckets.records(1)]).toEqual(["other"]);
    } finally {
      buckets.remove();
    }
    expect([...tempFolders("acp-replay-test-")]).toEqual([]);
  });
});
