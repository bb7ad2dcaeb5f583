// The room's orphan figures (room.ts) join a log's annotated open questions with the people's
// replies that point at them: walked from its file, that join is on disk (orphan-join.ts), so
// what it holds does not grow with the questions' count. Each count runs in a child process
// (room-questions-heap-child.ts, --expose-gc) that makes the log line by line as it is walked;
// held in a Map by id, as before, 80,000 questions kept about 11 MB more live than 10,000.
// The figures against a Map in memory: orphan-join.property.test.ts.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir, type TempDir } from "./helpers.ts";

const CHILD = fileURLToPath(new URL("./room-questions-heap-child.ts", import.meta.url));
/** What 70,000 more questions may add to what the figures hold live (heap and typed arrays). */
const MAX_GROWTH_MB = 1.5;

let dir: TempDir;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.remove());

function child(questions: number): { baseMb: number; liveMb: number; open: number; orphaned: number } {
  const r = JSON.parse(execFileSync(process.execPath, ["--expose-gc", CHILD, String(questions)], { encoding: "utf8", env: { ...process.env, TMPDIR: dir.path } })) as { baseMb: number; liveMb: number; open: number; orphaned: number };
  console.log(`room questions ${questions}: ${JSON.stringify(r)}`);
  return r;
}

describe("the room's orphan figures of a log walked from its file", () => {
  it("hold no more live for 80,000 annotated open questions than for 10,000", () => {
    const small = child(10_000);
    const large = child(80_000);
    // Every third question is answered only by its asker: orphaned.
    expect([small.open, small.orphaned]).toEqual([10_000, 3334]);
    expect([large.open, large.orphaned]).toEqual([80_000, 26_667]);
    expect(large.liveMb - large.baseMb - (small.liveMb - small.baseMb)).toBeLessThan(MAX_GROWTH_MB);
    // The join's temp files are gone.
    expect(readdirSync(dir.path)).toEqual([]);
  }, 120_000);
});
