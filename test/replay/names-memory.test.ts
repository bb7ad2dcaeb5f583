// What counting a log's names holds (issue 30, point 6: a log with a new name on every line).
// Each size runs in a child (names-heap-child.ts, --expose-gc). Before, the suite's choice of
// personas counted every name directed at in a map: 180,000 more names kept 11.6 MB more live;
// counted a bucket at a time on disk (key-counts.ts), 0.0 MB.
import { describe, expect, it } from "vitest";
import { memoryChild } from "../support/memory-child.ts";

/** What 180,000 more distinct names may add to what the count holds live (heap and typed arrays). */
const MAX_GROWTH_MB = 2;

const children = memoryChild<{ baseMb: number; liveMb: number }>(new URL("./names-heap-child.ts", import.meta.url), "names");
const child = (lines: number) => children.run(lines);

describe("counting a log's names", () => {
  it(`the suite's personas of 200,000 lines, each directed at a name of its own, keep at most ${MAX_GROWTH_MB} MB more live than of 20,000`, () => {
    const small = child(20_000);
    const large = child(200_000);
    expect(large.liveMb - large.baseMb - (small.liveMb - small.baseMb)).toBeLessThanOrEqual(MAX_GROWTH_MB);
  }, 60_000);
});
