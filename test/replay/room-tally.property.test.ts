// The room counts its agents' replies as they are sent (RoomTally): a log line a reply answers by
// its position, anything else by id. Whatever the replies, each line's answering agents and first
// answer are those of the replies kept whole and matched by id, as the room measured them before —
// also with its bits paged to temp files a few entries at a time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LogLine } from "../../src/replay/log.ts";
import { isAnnotatedOpen, RoomTally, type ReplyTarget } from "../../src/replay/room-tally.ts";

const line = (i: number, question: boolean, annotated: boolean): LogLine => ({
  id: `m${i}`,
  ts: 1000 * i,
  sender: `p${i % 3}`,
  content: question ? "anyone know why apt hangs?" : "ok",
  line: i + 1,
  ...(annotated ? { directedTo: [] } : {}),
});

describe("RoomTally", () => {
  it("answering agents and first answers by position equal those of the replies matched by id", () => {
    const world = fc.record({
      lines: fc.array(fc.record({ question: fc.boolean(), annotated: fc.boolean(), agentLine: fc.boolean() }), { minLength: 1, maxLength: 40 }),
      agents: fc.integer({ min: 1, max: 11 }),
      // Paged to a temp file (a log walked from its file) with pages of a few entries, or held in memory.
      pages: fc.option(fc.record({ pageEntries: fc.constantFrom(1, 2, 4, 8), heldPages: fc.integer({ min: 1, max: 3 }) })),
      replies: fc.array(
        fc.record({
          agent: fc.nat(),
          ts: fc.integer({ min: 0, max: 100_000 }),
          // A target: a log line (given by position or, as a reply the dispatch did not carry as a line, by id), or another agent's reply.
          targets: fc.array(fc.record({ line: fc.nat(), byPosition: fc.boolean(), reply: fc.boolean() }), { maxLength: 6 }),
        }),
        { maxLength: 30 },
      ),
    });
    fc.assert(
      fc.property(world, (w) => {
        const lines = w.lines.map((l, i) => line(i, l.question, l.annotated));
        const tally = w.pages === null ? new RoomTally(lines.length, w.agents) : new RoomTally(lines.length, w.agents, true, w.pages);
        lines.forEach((l, i) => tally.line(l, i, w.lines[i]!.agentLine));
        // The reference: every reply kept, its targets by id.
        const by = new Map<string, Set<number>>();
        const first = new Map<string, number>();
        for (const r of w.replies) {
          const agent = r.agent % w.agents;
          const targets: ReplyTarget[] = [];
          for (const t of r.targets) {
            const i = t.line % lines.length;
            const id = t.reply ? `a${agent}:reply-${i}` : lines[i]!.id;
            targets.push(!t.reply && t.byPosition ? i : id);
            by.set(id, (by.get(id) ?? new Set()).add(agent));
            first.set(id, Math.min(first.get(id) ?? Infinity, r.ts));
          }
          tally.reply(agent, r.ts, targets);
        }
        expect(tally.replies).toBe(w.replies.length);
        w.replies.forEach((r, k) => expect(tally.sentAt(k)).toBe(r.ts));
        lines.forEach((l, i) => {
          expect(tally.answeredBy(i, l.id)).toBe(by.get(l.id)?.size ?? 0);
          // The first answer is kept for the people's annotated open questions (and for anything answered by id).
          if (!w.lines[i]!.agentLine && isAnnotatedOpen(l)) expect(tally.firstAnswer(i, l.id)).toBe(first.get(l.id));
        });
        tally.remove();
      }),
      { numRuns: 500 },
    );
  });

  it("refuses a reply from an agent it was not told of", () => {
    expect(() => new RoomTally(3, 2).reply(2, 0, [0])).toThrow(RangeError);
  });
});
