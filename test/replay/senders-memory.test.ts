// A replay's memory per distinct sender: a log where every line has a sender of its own (issue 30,
// point 6). Each size runs in a child (senders-heap-child.ts, --expose-gc). A replay keeps no table
// of the log's senders: the directory answers for them without one (replay.ts). With a copy per
// reader (the group client's people, the look-alike names' tables), 30,000 more senders kept about
// 11 MB more live; with one table, 60,000 more kept 6.6 MB; with none, 0.6 MB.
import { describe, expect, it } from "vitest";
import { memoryChild } from "../support/memory-child.ts";

/** What 60,000 more distinct senders may add to what the replay holds live (heap and typed arrays). */
const MAX_GROWTH_MB = 1.5;

const children = memoryChild<{ baseMb: number; liveMb: number }>(new URL("./senders-heap-child.ts", import.meta.url), "distinct senders");
const child = (senders: number) => children.run(senders);

describe("a replay's memory per distinct sender", () => {
  it(`70,000 lines from 70,000 senders keep at most ${MAX_GROWTH_MB} MB more live than 10,000 from 10,000`, () => {
    const small = child(10_000);
    const large = child(70_000);
    expect(large.liveMb - large.baseMb - (small.liveMb - small.baseMb)).toBeLessThanOrEqual(MAX_GROWTH_MB);
  }, 120_000);
});
