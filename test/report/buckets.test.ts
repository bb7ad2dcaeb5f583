// The page's buckets: text sorted by key as it comes, given back whole per key in the order added,
// whether it stayed in memory or went to a temp file (read back in chunks that split UTF-8
// characters); the temp files go with `remove`.
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Buckets } from "../../src/report/buckets.ts";
import { usePrivateTmpdir } from "../support/private-tmpdir.ts";

const tempFolders = usePrivateTmpdir("buckets");
const pageDirs = () => [...tempFolders("acp-replay-page-")];

describe("Buckets", () => {
  it("property: each key drains exactly its text in order, keys in first-use order, spilled or not", () => {
    const piece = fc.string({ unit: fc.constantFrom("a", "é", "漢", "👍", ",", '"', "\u2028"), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("x", "y", "m:0:plain", "col:text"), piece), { maxLength: 300 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 9 }), (adds, flushBytes, readBytes) => {
        const b = new Buckets({ flushBytes, readBytes });
        const want = new Map<string, string>();
        try {
          for (const [k, t] of adds) {
            b.add(k, t);
            want.set(k, (want.get(k) ?? "") + t);
          }
          expect(b.keys()).toEqual([...want.keys()]);
          for (const [k, text] of want) {
            const got: string[] = [];
            b.drain(k, (s) => got.push(s));
            expect(got.join("")).toBe(text);
          }
          const none: string[] = [];
          b.drain("never", (s) => none.push(s));
          expect(none).toEqual([]);
        } finally {
          b.remove();
        }
      }),
      { numRuns: 200 },
    );
  });

  it("a spilled bucket of 2 MB, mostly ASCII with a character past Latin-1 here and there, drains in pieces of at most 16 K characters (never a two-byte string of 128 KB, which V8 keeps in its large-object space)", () => {
    const b = new Buckets();
    const line = `${"a".repeat(1000)}漢`;
    try {
      for (let i = 0; i < 2000; i++) b.add("col:text", line);
      const got: string[] = [];
      b.drain("col:text", (s) => got.push(s));
      expect(got.join("")).toBe(line.repeat(2000));
      expect(Math.max(...got.map((s) => s.length))).toBeLessThanOrEqual(16 * 1024);
    } finally {
      b.remove();
    }
  });

  it("a bucket past its size goes to a temp file of its own, removed with the buckets", () => {
    const before = new Set(pageDirs());
    const b = new Buckets({ flushBytes: 10 });
    b.add("k", "0123456789abc");
    const made = pageDirs().filter((d) => !before.has(d));
    expect(made).toHaveLength(1);
    b.add("k", "tail");
    const got: string[] = [];
    b.drain("k", (s) => got.push(s));
    expect(got.join("")).toBe("0123456789abctail");
    b.remove();
    expect(existsSync(`${tmpdir()}/${made[0]}`)).toBe(false);
  });
});
