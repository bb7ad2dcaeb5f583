// A room's agents may answer by id (a reply_to naming a line the dispatch batch did not carry, or
// another agent's message): those answers go to buckets on disk by the id's hash and are joined
// with the log's lines before the figures (room-tally.ts), so what the tally holds does not grow
// with them. Each count runs in a child process (room-replies-heap-child.ts, --expose-gc); held in
// a Map by id, as before, 1,000,000 replies kept about 307 MB more live than 200,000.
// The answers against a Map in memory: room-tally.property.test.ts.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { memoryChild } from "../support/memory-child.ts";

/** What 800,000 more replies by id may add to what the tally holds live (heap and typed arrays). */
const MAX_GROWTH_MB = 1.5;

const children = memoryChild<{ baseMb: number; liveMb: number; answered: number; first: number }>(new URL("./room-replies-heap-child.ts", import.meta.url), "room replies by id");
const child = (replies: number) => children.run(replies);

/** The sum over the lines answered of their first answer's time (from the child's start time): reply 50·j answers line j. */
const firstSum = (replies: number, lines: number) => {
  let sum = 0;
  for (let j = 0; j < Math.min(lines, replies / 50); j++) sum += ((50 * j * 7919) % replies) * 10;
  return sum;
};

describe("a room tally of a log walked from its file", () => {
  it("holds no more live for 1,000,000 replies by id than for 200,000", () => {
    const small = child(200_000);
    const large = child(1_000_000);
    // Every 50th reply answers a line of the 20,000: 4,000 of them, then each line once.
    expect([small.answered, small.first]).toEqual([4000, firstSum(200_000, 20_000)]);
    expect([large.answered, large.first]).toEqual([20_000, firstSum(1_000_000, 20_000)]);
    expect(large.liveMb - large.baseMb - (small.liveMb - small.baseMb)).toBeLessThan(MAX_GROWTH_MB);
    // The tally's temp files are gone.
    expect(readdirSync(children.tmp)).toEqual([]);
  }, 120_000);
});
