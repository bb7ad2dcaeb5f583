// Text written a piece at a time through a byte buffer (file-writer.ts) lands in the file as each
// piece's UTF-8 in order, whatever the pieces (empty, ASCII, any Unicode, longer than the buffer)
// and the buffer's size. Real files.
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FileWriter } from "../../src/replay/file-writer.ts";
import { tempDir } from "../support/runtime-harness.ts";

const dir = tempDir("file-writer");
afterAll(() => dir.remove());

describe("FileWriter", () => {
  it("property: the file holds each piece's UTF-8, in order, for any pieces and buffer size", () => {
    const piece = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: "grapheme", minLength: 50, maxLength: 400 }));
    let n = 0;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 1, max: 600 }), (pieces, bytes) => {
        const f = join(dir.dir, `out-${n++}.txt`);
        const fd = openSync(f, "w");
        try {
          const out = new FileWriter(fd, bytes);
          for (const p of pieces) out.write(p);
          out.flush();
        } finally {
          closeSync(fd);
        }
        expect(readFileSync(f).equals(Buffer.concat(pieces.map((p) => Buffer.from(p, "utf8"))))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
