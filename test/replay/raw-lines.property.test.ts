// rawLines reads a file a chunk at a time. A line cut by the end of a read is moved to the chunk's
// start, not copied out: a merge of hundreds of sorted runs reads each in 4-16 KB pieces, and a
// copy per cut line was a Buffer outside the heap every read (at 1,500 MB out of order, ArrayBuffers
// rose from 10 to 42 MB during one walk, freed only by a full collection). Real files in a temp folder.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import { rawLines } from "../../src/replay/log.ts";
import { tempDir } from "./helpers.ts";

const dir = tempDir();
afterAll(() => dir.remove());

/** What rawLines gives for `text`: each `\n`-ended line (and a last one without it), null past `max` bytes. */
function expected(text: string, max: number): Array<{ text: string | null; line: number }> {
  const parts = text.split("\n");
  if (parts.at(-1) === "") parts.pop();
  return parts.map((p, i) => ({ text: Buffer.byteLength(p) <= max ? p : null, line: i + 1 }));
}

describe("rawLines", () => {
  it("property: any lines (any Unicode, blank, longer than the chunk or the limit, a last one without its newline) read in any chunk size come back as they are", () => {
    let n = 0;
    const piece = fc.oneof(fc.string({ unit: "grapheme", maxLength: 30 }), fc.string({ unit: "binary", maxLength: 8 }), fc.constant("é✓😀"));
    const line = fc.array(piece, { maxLength: 6 }).map((ps) => ps.join("").replaceAll("\n", " "));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), fc.boolean(), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 0, max: 200 }), (lines, lastNewline, chunk, max) => {
        const text = lines.join("\n") + (lastNewline && lines.length > 0 ? "\n" : "");
        const f = dir.text(`log-${n++}.jsonl`, text);
        expect([...rawLines(f, max, Buffer.alloc(chunk))]).toEqual(expected(text, max));
        expect([...rawLines(f, max, chunk)]).toEqual(expected(text, max));
      }),
      { numRuns: 500 },
    );
  });

  it("copies no line cut by a read unless it is longer than the chunk: 2,000 lines read in 1 KB pieces make no Buffer", () => {
    const lines = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: `m${i}`, ts: i, sender: "ann", content: `line ${i} ${"x".repeat(i % 97)}` }));
    const f = join(dir.path, "cut.jsonl");
    writeFileSync(f, `${lines.join("\n")}\n`);
    const from = vi.spyOn(Buffer, "from");
    const concat = vi.spyOn(Buffer, "concat");
    try {
      const got: string[] = [];
      for (const r of rawLines(f, 1 << 20, Buffer.alloc(1024))) got.push(r.text!);
      expect(got).toEqual(lines);
      // About 150 reads, most of them ending inside a line.
      expect(from).toHaveBeenCalledTimes(0);
      expect(concat).toHaveBeenCalledTimes(0);
    } finally {
      from.mockRestore();
      concat.mockRestore();
    }
  });
});
