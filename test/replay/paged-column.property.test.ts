// A per-line column spilled to a temp file a page at a time reads back what an array in memory
// would: any length, any page size and number of pages held, writes and reads in any order (mostly
// near a moving position, as a replay touches them, some anywhere), widths of 1, 2 and 4 bytes and of doubles.
import { statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PagedColumn, type ColumnWidth } from "../../src/replay/paged-column.ts";
import { ReasonColumn } from "../../src/replay/reason-column.ts";
import type { AddressingReason } from "../../src/types.ts";
import { usePrivateTmpdir } from "../support/private-tmpdir.ts";

const tempFolders = usePrivateTmpdir("paged-column");
const columnDirs = () => tempFolders("acp-replay-column-");

const op = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), near: fc.boolean(), at: fc.nat(), v: fc.nat() }),
  fc.record({ kind: fc.constant("get" as const), near: fc.boolean(), at: fc.nat() }),
  fc.record({ kind: fc.constant("step" as const), by: fc.integer({ min: 0, max: 40 }) }),
);

describe("PagedColumn", () => {
  it("reads back every entry as an array in memory holds it, whatever the order, page size and pages held", () => {
    const world = fc.record({
      length: fc.integer({ min: 1, max: 600 }),
      width: fc.constantFrom<ColumnWidth>(1, 2, 4, 8),
      pageEntries: fc.constantFrom(1, 2, 4, 8, 16, 64, 256),
      heldPages: fc.integer({ min: 1, max: 5 }),
      spill: fc.boolean(),
      ops: fc.array(op, { maxLength: 300 }),
    });
    fc.assert(
      fc.property(world, (w) => {
        const before = columnDirs();
        // Doubles (width 8): fractions and negatives too, as times and their differences.
        const value = (v: number) => (w.width === 8 ? v / 3 - 1e6 : v % 2 ** (8 * w.width));
        const ref = w.width === 1 ? new Uint8Array(w.length) : w.width === 2 ? new Uint16Array(w.length) : w.width === 4 ? new Uint32Array(w.length) : new Float64Array(w.length);
        const col = new PagedColumn({ name: "test", width: w.width, spill: w.spill, pageEntries: w.pageEntries, heldPages: w.heldPages });
        try {
          let pos = 0;
          for (const o of w.ops) {
            if (o.kind === "step") {
              pos = Math.min(w.length - 1, pos + o.by);
              continue;
            }
            // Near the moving position (a dispatch's recent lines) or anywhere in the column.
            const i = o.near ? Math.max(0, pos - (o.at % 50)) : o.at % w.length;
            if (o.kind === "set") {
              ref[i] = value(o.v);
              col.set(i, value(o.v));
            } else expect(col.get(i)).toBe(ref[i]);
          }
          // Read back in order, as the report walks the lines, twice.
          for (let pass = 0; pass < 2; pass++) for (let i = 0; i < w.length; i++) expect(col.get(i)).toBe(ref[i]);
        } finally {
          col.remove();
        }
        // Its temp folder went with it.
        expect([...columnDirs()].filter((d) => !before.has(d))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("holds only the pages it may in memory: the rest is in a file of 0600 (width × entries)", () => {
    const before = columnDirs();
    const col = new PagedColumn({ name: "bits", width: 2, spill: true, pageEntries: 16, heldPages: 2 });
    try {
      for (let i = 0; i < 160; i++) col.set(i, i * 7);
      const made = [...columnDirs()].filter((d) => !before.has(d));
      expect(made).toHaveLength(1);
      const file = join(tmpdir(), made[0]!, "bits.bin");
      const st = statSync(file);
      expect(st.mode & 0o777).toBe(0o600);
      // Ten pages written, the last two still held: eight pages of 16 two-byte entries on disk.
      expect(st.size).toBe(8 * 16 * 2);
      for (let i = 0; i < 160; i++) expect(col.get(i)).toBe(i * 7);
    } finally {
      col.remove();
    }
    expect([...columnDirs()].filter((d) => !before.has(d))).toEqual([]);
  });

  it("kept in memory (a log in memory), it never writes a file", () => {
    const before = columnDirs();
    const col = new PagedColumn({ name: "bits", spill: false, pageEntries: 4, heldPages: 1 });
    for (let i = 0; i < 100; i++) col.set(i, i);
    for (let i = 0; i < 100; i++) expect(col.get(i)).toBe(i);
    expect([...columnDirs()].filter((d) => !before.has(d))).toEqual([]);
    col.remove();
  });

  it("refuses a position that is not a whole number from 0", () => {
    const col = new PagedColumn({ name: "bits", spill: true });
    expect(() => col.get(-1)).toThrow(RangeError);
    expect(() => col.set(1.5, 1)).toThrow(RangeError);
    col.remove();
  });
});

describe("ReasonColumn", () => {
  it("reads back each line's reason after widening past 255 and 65,535 reasons, paged to a file", () => {
    const count = 70_000;
    const reasons = new ReasonColumn(count, { spill: true, pageEntries: 1024, heldPages: 2 });
    try {
      // A reason per line for the first 66,000 lines (each its own label), then every tenth line none.
      const reasonOf = (i: number): AddressingReason | undefined => (i < 66_000 ? { rule: "addressed-other", name: `p${i}` } : i % 10 === 0 ? undefined : { rule: "mention" });
      for (let i = 0; i < count; i++) reasons.set(i, reasonOf(i));
      for (let i = 0; i < count; i++) expect(reasons.get(i)).toEqual(reasonOf(i));
    } finally {
      reasons.remove();
    }
  });
});
