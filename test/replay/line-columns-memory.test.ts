// What a replay walked from its file keeps per line (each line's bits and addressing reason, which
// agents of a room answered it, when a question was first answered, when each reply was sent) does
// not take memory in proportion to the log: a recorder and a room tally for 40 million lines hold a
// few pages, the rest goes to temp files as it is written.
// Their contents against arrays in memory: paged-column.property.test.ts, room-tally.property.test.ts.
import { describe, expect, it } from "vitest";
import { createReplayRecorder } from "../../src/replay/replay-report.ts";
import { RoomTally } from "../../src/replay/room-tally.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { usePrivateTmpdir } from "../support/private-tmpdir.ts";

const LINES = 40_000_000;
/** Memory outside the heap (typed arrays) the columns may take, whatever the lines' count. */
const MAX_ARRAY_BUFFERS_MB = 4;
const MB = 1024 * 1024;

const arrayBuffers = () => process.memoryUsage().arrayBuffers;
const tempFolders = usePrivateTmpdir("line-columns");
const replayTemp = () => tempFolders("acp-replay-");

const line = (i: number): LogLine => ({ id: `m${i}`, ts: 1000 * i, sender: "bob", content: "alice?", line: i + 1 });

describe("per-line columns of a log walked from its file", () => {
  it("a recorder for 40 million lines takes a few MB outside the heap, not a byte or two a line", () => {
    const before = arrayBuffers();
    const tempBefore = replayTemp();
    const recorder = createReplayRecorder({ count: LINES, persona: "alice", isPersona: (s) => s === "alice", spill: true });
    // The last lines of the log are fed and flagged: their bits are set near the end of the columns.
    const last = [line(LINES - 2), line(LINES - 1)];
    last.forEach((l, k) => recorder.onLine(l, LINES - 2 + k));
    expect((arrayBuffers() - before) / MB).toBeLessThan(MAX_ARRAY_BUFFERS_MB);
    const { view } = recorder.finish(0, []);
    expect(view.lineBits(LINES - 1)).toBe(0);
    view.close();
    // The columns' temp files went with the view.
    expect([...replayTemp()].filter((d) => !tempBefore.has(d))).toEqual([]);
  });

  it("a room tally for 40 million lines and three agents takes a few MB outside the heap", () => {
    const before = arrayBuffers();
    const tally = new RoomTally(LINES, 3, true);
    tally.reply(2, 5000, [LINES - 1, 0]);
    expect((arrayBuffers() - before) / MB).toBeLessThan(MAX_ARRAY_BUFFERS_MB);
    expect(tally.answeredBy(LINES - 1)).toBe(1);
    expect(tally.answeredBy(0)).toBe(1);
    expect(tally.answeredBy(1)).toBe(0);
    tally.remove();
  });

  it("a room tally of 4 million replies, each answering an annotated open question, keeps their times in pages too", () => {
    const replies = 4_000_000;
    const tally = new RoomTally(replies, 3, true);
    const before = arrayBuffers();
    // Each line an annotated open question, answered by the next reply, a second later.
    for (let i = 0; i < replies; i++) {
      const l = { ...line(i), directedTo: [] };
      tally.line(l, i, false);
      tally.reply(i % 3, l.ts + 1000, [i]);
    }
    expect((arrayBuffers() - before) / MB).toBeLessThan(MAX_ARRAY_BUFFERS_MB);
    expect([tally.replies, tally.sentAt(replies - 1), tally.firstAnswer(replies - 1)]).toEqual([replies, 1000 * replies, 1000 * replies]);
    tally.remove();
  });
});
