// The room's open questions (room.ts) need to know whether a question opens with a member's name,
// and a log may have a new sender on every line (issue 30, point 6). Walked from its file, the
// members' keys and the names the lines open with are joined on disk (member-asks.ts), so what the
// figures hold does not grow with the senders. Each count runs in a child process
// (room-senders-heap-child.ts, --expose-gc) that makes the log line by line as it is walked; with
// a set of every member's keys, as before, 200,000 senders kept 19.2 MB more live than 20,000 (now 0.3 MB).
// The figures against that set in memory: member-asks.property.test.ts.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { memoryChild } from "../support/memory-child.ts";

/** What 180,000 more distinct senders may add to what the figures hold live (heap and typed arrays). */
const MAX_GROWTH_MB = 1.5;

const children = memoryChild<{ baseMb: number; liveMb: number; open: number }>(new URL("./room-senders-heap-child.ts", import.meta.url), "room senders");
const child = (senders: number) => children.run(senders);

describe("the room's open questions of a log walked from its file", () => {
  it("hold no more live for 200,000 distinct senders than for 20,000", () => {
    const small = child(20_000);
    const large = child(200_000);
    // Every eighth line asks a name nobody has: open. Every other fourth asks the sender before it: not open.
    expect([small.open, large.open]).toEqual([2500, 25_000]);
    expect(large.liveMb - large.baseMb - (small.liveMb - small.baseMb)).toBeLessThan(MAX_GROWTH_MB);
    // The join's temp files are gone.
    expect(readdirSync(children.tmp)).toEqual([]);
  }, 120_000);
});
