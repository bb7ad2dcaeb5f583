// The room counts its agents' replies as they are sent (RoomTally): a log line a reply answers by
// its position, anything else by id (joined with the lines before the figures). Whatever the
// replies, each line's answering agents and first answer are those of the replies kept whole and
// matched by id, as the room measured them before — also with its bits paged to temp files a few
// entries at a time, and its replies by id in buckets of a few bytes, by hashes that collide.
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
        tally.joinIds(lines);
        expect(tally.replies).toBe(w.replies.length);
        w.replies.forEach((r, k) => expect(tally.sentAt(k)).toBe(r.ts));
        lines.forEach((l, i) => {
          expect(tally.answeredBy(i)).toBe(by.get(l.id)?.size ?? 0);
          // The first answer is kept for the people's annotated open questions (and for anything answered by id).
          if (!w.lines[i]!.agentLine && isAnnotatedOpen(l)) expect(tally.firstAnswer(i)).toBe(first.get(l.id));
        });
        tally.remove();
      }),
      { numRuns: 500 },
    );
  });

  it("answers by id, joined with the lines, equal a map of every reply by id beside the answers by position", () => {
    // An id's bucket key: the real hash, or one of a few values, so that ids share buckets and bits.
    const collide = (k: number) => (id: string) => {
      let sum = 0;
      for (let i = 0; i < id.length; i++) sum += id.charCodeAt(i);
      return Math.floor((((sum % k) + 0.5) / k) * 2 ** 52);
    };
    const world = fc.record({
      // `repeat`: the line takes an earlier line's id (a timeline measured by hand may repeat one).
      lines: fc.array(fc.record({ question: fc.boolean(), annotated: fc.boolean(), agentLine: fc.boolean(), repeat: fc.option(fc.nat(), { freq: 6 }) }), { minLength: 1, maxLength: 40 }),
      agents: fc.integer({ min: 1, max: 11 }),
      // The lines' count given (a replay), or learnt from the join's walk (measureRoom without `count`).
      countGiven: fc.boolean(),
      // Held, or paged and bucketed with a few entries and bytes each (temp files).
      opts: fc.option(
        fc.record({ pageEntries: fc.constantFrom(1, 2, 4, 8), heldPages: fc.integer({ min: 1, max: 3 }), bucketLines: fc.integer({ min: 1, max: 8 }), writeBytes: fc.integer({ min: 1, max: 64 }) }),
      ),
      collisions: fc.option(fc.integer({ min: 1, max: 5 })),
      replies: fc.array(
        fc.record({
          agent: fc.nat(),
          // Sent in any order of their times.
          ts: fc.integer({ min: 0, max: 100_000 }),
          targets: fc.array(fc.record({ kind: fc.constantFrom("position", "line-id", "agent-message", "unknown-id"), line: fc.nat({ max: 60 }) }), { maxLength: 6 }),
        }),
        { maxLength: 30 },
      ),
    });
    fc.assert(
      fc.property(world, (w) => {
        const ids: string[] = [];
        const lines = w.lines.map((l, i) => {
          ids.push(l.repeat !== null && i > 0 ? ids[l.repeat % i]! : `m${i}`);
          return { ...line(i, l.question, l.annotated), id: ids[i]! };
        });
        const count = w.countGiven ? lines.length : 0;
        const hash = w.collisions === null ? {} : { hash: collide(w.collisions) };
        const tally = w.opts === null ? new RoomTally(count, w.agents, false, hash) : new RoomTally(count, w.agents, true, { ...w.opts, ...hash });
        const keepsFirst = lines.map((l, i) => !w.lines[i]!.agentLine && isAnnotatedOpen(l));
        lines.forEach((l, i) => tally.line(l, i, w.lines[i]!.agentLine));
        // The model: answers by position (a first answer only for a person's annotated open question) and by id, apart.
        const atAgents = lines.map(() => new Set<number>());
        const atFirst = lines.map((): number | undefined => undefined);
        const byId = new Map<string, { agents: Set<number>; first: number }>();
        for (const r of w.replies) {
          const agent = r.agent % w.agents;
          const targets: ReplyTarget[] = r.targets.map((t) => {
            const i = t.line % lines.length;
            if (t.kind === "position") return t.line < count ? t.line : count + t.line;
            return t.kind === "line-id" ? lines[i]!.id : t.kind === "agent-message" ? `a${agent}:reply-${t.line}` : `x${t.line}`;
          });
          for (const t of targets) {
            if (typeof t === "number") {
              if (t >= count) continue;
              atAgents[t]!.add(agent);
              if (keepsFirst[t]) atFirst[t] = Math.min(atFirst[t] ?? Infinity, r.ts);
              continue;
            }
            const by = byId.get(t) ?? { agents: new Set<number>(), first: Infinity };
            by.agents.add(agent);
            by.first = Math.min(by.first, r.ts);
            byId.set(t, by);
          }
          tally.reply(agent, r.ts, targets);
        }
        tally.joinIds(lines);
        lines.forEach((l, i) => {
          const by = byId.get(l.id);
          expect(tally.answeredBy(i)).toBe(new Set([...atAgents[i]!, ...(by?.agents ?? [])]).size);
          const first = Math.min(atFirst[i] ?? Infinity, by?.first ?? Infinity);
          expect(tally.firstAnswer(i)).toBe(first === Infinity ? undefined : first);
        });
        tally.remove();
      }),
      { numRuns: 500 },
    );
  });

  it("reads answers by id only once joined with the lines, and takes no reply after", () => {
    const tally = new RoomTally(2, 2);
    tally.reply(0, 5, ["m1"]);
    expect(() => tally.answeredBy(1)).toThrow(/joinIds/);
    tally.joinIds([{ id: "m0" }, { id: "m1" }]);
    expect([tally.answeredBy(0), tally.answeredBy(1), tally.firstAnswer(1)]).toEqual([0, 1, 5]);
    expect(() => tally.reply(1, 6, [0])).toThrow(/after joinIds/);
    tally.remove();
  });

  it("refuses a reply from an agent it was not told of", () => {
    expect(() => new RoomTally(3, 2).reply(2, 0, [0])).toThrow(RangeError);
  });
});
