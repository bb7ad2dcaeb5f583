// A log out of time order is merged from sorted runs on disk. What a walk reads into does not grow
// with the runs past 256 of them (all the runs' read buffers in one piece of at most 4 MB, kept
// from walk to walk; past 1,024 runs, about 2 GB of log, they are merged on disk first), and walks that overlap (one started while another is under way, one left
// early) each give readLog's lines. A file's walk reads into the buffer of a walk that ended. Real
// files in a temp folder.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { rawLines, readLog, type LogLine } from "../../src/replay/log.ts";
import { MAX_MERGE_RUNS, MERGE_READ_BYTES, mergeChunkBytes, sortRuns } from "../../src/replay/sort-runs.ts";
import { tempDir } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});
const MB = 1024 * 1024;
const KB = 1024;

/** A log of `n` lines with each pair swapped (out of order everywhere). */
function shuffledLog(n: number): string {
  const d = tempDir("sort-runs");
  dirs.push(d);
  const f = join(d.dir, "chat.jsonl");
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const j = i ^ 1;
    out.push(JSON.stringify({ id: `m${j}`, ts: 1_700_000_000_000 + j * 1000, sender: `s${j % 3}`, content: `line ${j} of a log out of order` }));
  }
  writeFileSync(f, `${out.join("\n")}\n`);
  return f;
}

const same = (s: string) => s;

describe("sortRuns' merge", () => {
  it("reads 16 KB a run up to 256 runs, 4 MB in all past that, never less than 4 KB a run", () => {
    expect(mergeChunkBytes(1)).toBe(16 * KB);
    expect(mergeChunkBytes(256)).toBe(16 * KB);
    expect(mergeChunkBytes(257)).toBe(15 * KB);
    expect(mergeChunkBytes(750)).toBe(5 * KB);
    expect(mergeChunkBytes(750) * 750).toBeLessThanOrEqual(MERGE_READ_BYTES);
    expect(mergeChunkBytes(1024)).toBe(4 * KB);
    expect(mergeChunkBytes(5000)).toBe(4 * KB);
  });

  it("1,000 runs are merged reading into 4 MB, not 16 KB a run, and the next walk reads into the same 4 MB", () => {
    const f = shuffledLog(1000);
    // About a line a run: a thousand runs.
    const runs = sortRuns(f, 1 << 20, same, 1);
    const before = process.memoryUsage().arrayBuffers;
    try {
      expect(runs.runs).toBe(1000);
      const want = readLog(f).lines;
      for (let walk = 0; walk < 2; walk++) {
        const it = runs.lines();
        const got: LogLine[] = [];
        // Every run open: the merge holds each one's next line.
        got.push(it.next().value as LogLine);
        expect((process.memoryUsage().arrayBuffers - before) / MB).toBeLessThan(5);
        for (const l of it) got.push(l);
        expect(got).toEqual(want);
      }
    } finally {
      runs.remove();
    }
  });

  it("a run of thousands of lines, some longer than the write buffer and more than a megabyte in all, is written in readLog's order", () => {
    const d = tempDir("sort-runs-long");
    dirs.push(d);
    const f = join(d.dir, "chat.jsonl");
    const out: string[] = [];
    for (let i = 0; i < 3000; i++) {
      // Times in a scramble with ties; every 500th line 100 KB long (some non-ASCII).
      const content = i % 500 === 7 ? `é${"x".repeat(100 * 1024)}` : `line ${i} ✓`;
      out.push(JSON.stringify({ id: `m${i}`, ts: (i * 7919) % 1000, sender: `s${i % 3}`, content }));
    }
    writeFileSync(f, `${out.join("\n")}\n`);
    // One run (the whole log) and runs of about 300 KB.
    for (const runBytes of [1 << 30, 300 * KB]) {
      const runs = sortRuns(f, 1 << 20, same, runBytes);
      try {
        expect([...runs.lines()]).toEqual(readLog(f).lines);
      } finally {
        runs.remove();
      }
    }
  });

  it("property: walks that overlap in any interleaving, or are left early, each give readLog's lines", () => {
    // 3,000 lines in runs of about 48 KB of log: each run's file is read in several 16 KB pieces.
    const f = shuffledLog(3000);
    const want = readLog(f).lines;
    const step = fc.record({ walk: fc.constantFrom("a", "b", "c", "stopA"), lines: fc.integer({ min: 1, max: 1500 }) });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const runs = sortRuns(f, 1 << 20, same, 48 * KB);
        try {
          expect(runs.runs).toBeGreaterThan(2);
          // Up to three walks under way at once; "stopA" leaves walk a early and starts it again.
          const walks = { a: runs.lines(), b: runs.lines(), c: runs.lines() };
          const got: Record<"a" | "b" | "c", LogLine[]> = { a: [], b: [], c: [] };
          for (const s of steps) {
            if (s.walk === "stopA") {
              walks.a.return(undefined);
              walks.a = runs.lines();
              got.a = [];
              continue;
            }
            for (let k = 0; k < s.lines; k++) {
              const r = walks[s.walk].next();
              if (r.done) break;
              got[s.walk].push(r.value);
            }
          }
          for (const k of ["a", "b", "c"] as const) {
            for (const l of walks[k]) got[k].push(l);
            expect(got[k]).toEqual(want);
          }
          // And a walk after them all.
          expect([...runs.lines()]).toEqual(want);
        } finally {
          runs.remove();
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe("rawLines' read buffers", () => {
  it("a walk that ended lends its buffer to the next: ten walks of a 2 MB file read into one 256 KB buffer, and two at once never share one", () => {
    const f = shuffledLog(20_000);
    const want = readLog(f).lines.length;
    const before = process.memoryUsage().arrayBuffers;
    for (let walk = 0; walk < 10; walk++) {
      let n = 0;
      for (const raw of rawLines(f, 1 << 20)) if (raw.text) n++;
      expect(n).toBe(want);
    }
    // Ten fresh 256 KB buffers would be 2.5 MB until a full collection.
    expect((process.memoryUsage().arrayBuffers - before) / MB).toBeLessThan(1);
    // Two walks at once, in steps: each reads the whole file.
    const a = rawLines(f, 1 << 20);
    const b = rawLines(f, 1 << 20);
    const texts: Record<"a" | "b", string[]> = { a: [], b: [] };
    for (let done = false; !done; ) {
      done = true;
      for (const [k, w] of [["a", a], ["b", b]] as const) {
        for (let i = 0; i < 997; i++) {
          const r = w.next();
          if (r.done) break;
          done = false;
          if (r.value.text) texts[k].push(r.value.text);
        }
      }
    }
    expect(texts.a).toHaveLength(want);
    expect(texts.b).toEqual(texts.a);
  });
});

describe("sortRuns past MAX_MERGE_RUNS runs", () => {
  it("3,000 runs are merged on disk down to at most 1,024 before a walk, which then reads into at most 4 MB", () => {
    const f = shuffledLog(3000);
    // About a line a run: three thousand runs.
    const runs = sortRuns(f, 1 << 20, same, 1);
    try {
      expect(runs.runs).toBeLessThanOrEqual(MAX_MERGE_RUNS);
      expect(mergeChunkBytes(runs.runs) * runs.runs).toBeLessThanOrEqual(MERGE_READ_BYTES);
      const before = process.memoryUsage().arrayBuffers;
      const it = runs.lines();
      const got: LogLine[] = [it.next().value as LogLine];
      expect((process.memoryUsage().arrayBuffers - before) / MB).toBeLessThan(5);
      for (const l of it) got.push(l);
      expect(got).toEqual(readLog(f).lines);
    } finally {
      runs.remove();
    }
  });

  it("property: any log in runs of any size, merged on disk at most 2-5 at a time, walks as readLog reads it, from as many files as a walk merges", () => {
    const line = fc.record({ ts: fc.integer({ min: 0, max: 40 }), content: fc.string({ unit: "grapheme", maxLength: 40 }) });
    let n = 0;
    fc.assert(
      fc.property(fc.array(line, { maxLength: 120 }), fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 2, max: 5 }), (ls, runBytes, maxRuns) => {
        const d = tempDir(`sort-runs-prop-${n++}`);
        dirs.push(d);
        const f = join(d.dir, "chat.jsonl");
        writeFileSync(f, ls.map((l, i) => JSON.stringify({ id: `m${i}`, ts: l.ts, sender: `s${i % 3}`, content: l.content })).join("\n") + "\n");
        const saved = process.env.TMPDIR;
        process.env.TMPDIR = d.dir;
        let runs;
        try {
          runs = sortRuns(f, 1 << 20, same, runBytes, maxRuns);
        } finally {
          if (saved === undefined) delete process.env.TMPDIR;
          else process.env.TMPDIR = saved;
        }
        try {
          expect(runs.runs).toBeLessThanOrEqual(maxRuns);
          const folder = readdirSync(d.dir).find((x) => x.startsWith("acp-replay-sort-"))!;
          expect(readdirSync(join(d.dir, folder))).toHaveLength(runs.runs);
          expect([...runs.lines()]).toEqual(readLog(f).lines);
        } finally {
          runs.remove();
        }
      }),
      { numRuns: 150 },
    );
  });
});
