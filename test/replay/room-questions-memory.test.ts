// The room's orphan figures (room.ts) join a log's annotated open questions with the people's
// replies that point at them: walked from its file, that join is on disk (orphan-join.ts), so
// what it holds does not grow with the questions' count. Each count runs in a child process
// (room-questions-heap-child.ts, --expose-gc) that makes the log line by line as it is walked;
// held in a Map by id, as before, 80,000 questions kept about 11 MB more live than 10,000.
// The figures against a Map in memory: orphan-join.property.test.ts.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { memoryChild } from "../support/memory-child.ts";

/** What 70,000 more questions may add to what the figures hold live (heap and typed arrays). */
const MAX_GROWTH_MB = 1.5;

const children = memoryChild<{ baseMb: number; liveMb: number; open: number; orphaned: number }>(new URL("./room-questions-heap-child.ts", import.meta.url), "room questions");
const child = (questions: number) => children.run(questions);

describe("the room's orphan figures of a log walked from its file", () => {
  it("hold no more live for 80,000 annotated open questions than for 10,000", () => {
    const small = child(10_000);
    const large = child(80_000);
    // Every third question is answered only by its asker: orphaned.
    expect([small.open, small.orphaned]).toEqual([10_000, 3334]);
    expect([large.open, large.orphaned]).toEqual([80_000, 26_667]);
    expect(large.liveMb - large.baseMb - (small.liveMb - small.baseMb)).toBeLessThan(MAX_GROWTH_MB);
    // The join's temp files are gone.
    expect(readdirSync(children.tmp)).toEqual([]);
  }, 120_000);
});
