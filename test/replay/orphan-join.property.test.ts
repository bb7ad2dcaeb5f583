// The room's orphan figures by the join (orphan-join.ts: buckets by the id's hash, on disk a few
// records at a time, the waits' median and 90th percentile by a radix select over a paged column)
// equal those of the questions held in a Map by id and the waits sorted in an array, as the room
// measured them before: for any questions and replies — ids that share a bucket or a whole hash,
// replies to ids no question has, replies by the asker, a reply before its question in the log,
// waits that are negative, fractional or equal.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { idHash } from "../../src/replay/id-check.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { OrphanJoin, ORPHAN_ANSWER_WITHIN_MS, type OrphanMetrics, type QuestionFacts } from "../../src/replay/orphan-join.ts";
import { isAnnotatedOpen } from "../../src/replay/room-tally.ts";
import { measureRoom } from "../../src/replay/room.ts";
import type { ReplaySent } from "../../src/replay/replay.ts";
import { usePrivateTmpdir } from "../support/private-tmpdir.ts";

const tempFolders = usePrivateTmpdir("orphan-join");
const replayTemp = () => tempFolders("acp-replay-");

/** The figures as the room measured them before the join: questions by id in a Map, a Set of the person-answered ones, the waits sorted. */
function mapOrphans(questions: readonly QuestionFacts[], replies: ReadonlyArray<{ id: string; sender: string }>): OrphanMetrics {
  const byId = new Map<string, QuestionFacts>();
  for (const q of questions) byId.set(q.id, q);
  const personAnswered = new Set<string>();
  for (const r of replies) {
    const q = byId.get(r.id);
    if (q !== undefined && q.asker !== r.sender) personAnswered.add(r.id);
  }
  const out: OrphanMetrics = { open: 0, orphaned: 0, orphanedAnsweredBy: { none: 0, one: 0, twoOrMore: 0 }, orphanedOnceInTime: 0, orphanedOnceInTimeRate: 0, personAnsweredAlsoByAgent: 0, timeToAnswerMs: { p50: null, p90: null } };
  const waits: number[] = [];
  for (const [id, q] of byId) {
    out.open++;
    const n = q.answeredBy;
    if (personAnswered.has(id)) {
      if (n > 0) out.personAnsweredAlsoByAgent++;
      continue;
    }
    out.orphaned++;
    if (n === 0) out.orphanedAnsweredBy.none++;
    else if (n === 1) out.orphanedAnsweredBy.one++;
    else out.orphanedAnsweredBy.twoOrMore++;
    if (n === 0) continue;
    waits.push(q.waitMs!);
    if (n === 1 && q.waitMs! <= ORPHAN_ANSWER_WITHIN_MS) out.orphanedOnceInTime++;
  }
  out.orphanedOnceInTimeRate = out.orphaned === 0 ? 0 : out.orphanedOnceInTime / out.orphaned;
  waits.sort((a, b) => a - b);
  const at = (q: number) => (waits.length === 0 ? null : waits[Math.min(waits.length - 1, Math.floor(q * waits.length))]!);
  out.timeToAnswerMs = { p50: at(0.5), p90: at(0.9) };
  return out;
}

/** The figures as written out (text and JSON): -0 and 0 print alike. */
const printed = (m: OrphanMetrics): unknown => JSON.parse(JSON.stringify(m));

// A few ids that collide often, and any others (lone surrogates and all).
const id = fc.oneof(fc.constantFrom("q1", "q2", "q3", "Q1", "", "m0"), fc.string({ unit: "binary", maxLength: 4 }));
const person = fc.constantFrom("ann", "bob", "cyd");
const wait = fc.oneof(fc.integer({ min: -5000, max: 400_000 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, ORPHAN_ANSWER_WITHIN_MS, ORPHAN_ANSWER_WITHIN_MS + 1));
// Bucket keys: the real hash, one for every id (all collide), or two.
const hashes: Record<string, (id: string) => number> = { idHash, same: () => 0, twoKeys: (s) => (s.length % 2) * 2 ** 51 };

describe("OrphanJoin", () => {
  it("gives the figures of the questions in a Map by id, in buckets on disk or in memory", () => {
    const world = fc.record({
      questions: fc.array(
        fc.record({ id, asker: person, answeredBy: fc.integer({ min: 0, max: 3 }), wait }).map((q): QuestionFacts => ({ id: q.id, asker: q.asker, answeredBy: q.answeredBy, waitMs: q.answeredBy === 0 ? undefined : q.wait })),
        { maxLength: 60 },
      ),
      replies: fc.array(fc.record({ id, sender: person }), { maxLength: 60 }),
      spill: fc.boolean(),
      lines: fc.integer({ min: 0, max: 300 }),
      bucketLines: fc.integer({ min: 1, max: 40 }),
      hash: fc.constantFrom(...Object.keys(hashes)),
      writeBytes: fc.integer({ min: 1, max: 400 }),
      pages: fc.record({ pageEntries: fc.constantFrom(1, 2, 4, 8), heldPages: fc.integer({ min: 1, max: 3 }) }),
    });
    fc.assert(
      fc.property(world, (w) => {
        const before = replayTemp();
        const join = new OrphanJoin({ spill: w.spill, lines: w.lines, bucketLines: w.bucketLines, hash: hashes[w.hash]!, writeBytes: w.writeBytes, pages: w.pages });
        try {
          for (const q of w.questions) join.question(q);
          expect(join.questions).toBe(w.questions.length);
          for (const r of w.replies) join.reply(r.id, r.sender);
          expect(printed(join.measure())).toEqual(printed(mapOrphans(w.questions, w.replies)));
        } finally {
          join.remove();
        }
        // Its temp files went with it.
        expect([...replayTemp()].filter((d) => !before.has(d))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it("refuses a question after the replies, and an answered question with no first answer", () => {
    const join = new OrphanJoin({ spill: false, lines: 0 });
    expect(() => join.question({ id: "q", asker: "ann", answeredBy: 1, waitMs: undefined })).toThrow(RangeError);
    join.reply("q", "bob");
    expect(() => join.question({ id: "q", asker: "ann", answeredBy: 0, waitMs: undefined })).toThrow(/after the replies/);
    join.remove();
  });
});

describe("measureRoom's orphan figures", () => {
  it("equal those of the annotated questions in a Map by id, the agents' answers matched by id, walked from a file or held", () => {
    const T0 = 1_767_600_000_000;
    const world = fc.record({
      lines: fc.array(
        fc.record({
          kind: fc.constantFrom("question", "reply", "agent", "other"),
          sender: fc.constantFrom("ann", "Ann", "bob", "cyd"),
          ts: fc.integer({ min: 0, max: 600_000 }),
          // A reply to a line by its place: earlier, later (out of order), or past the log's end (no such id).
          to: fc.array(fc.nat({ max: 50 }), { maxLength: 3 }),
          directedTo: fc.constantFrom<string[] | undefined>([], ["ann"], ["bob"], undefined),
        }),
        { maxLength: 40 },
      ),
      sent: fc.array(fc.record({ aid: fc.constantFrom("a", "b"), ts: fc.integer({ min: 0, max: 900_000 }), answers: fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 3 }) }), { maxLength: 12 }),
      spill: fc.boolean(),
    });
    fc.assert(
      fc.property(world, (w) => {
        const lines: LogLine[] = w.lines.map((l, i) => ({
          id: `m${i}`,
          ts: T0 + l.ts,
          sender: l.kind === "agent" ? "a" : l.sender,
          content: l.kind === "question" ? "anyone know why apt hangs?" : "ok",
          line: i + 1,
          ...(l.directedTo === undefined ? {} : { directedTo: l.directedTo }),
          ...(l.kind === "reply" ? { replyTo: l.to.map((j) => `m${j}`) } : {}),
        }));
        const isAgentLine = (l: LogLine) => l.sender === "a";
        const sent: ReplaySent[] = w.sent.map((s, k) => ({ aid: s.aid, msgId: `${s.aid}:${k}`, timestamp: T0 + s.ts, content: "x", metadata: null, answers: s.answers.map((j) => `m${j}`) }));
        // The reference: the agents' answers by id, the annotated questions in a Map.
        const agents = new Map<string, Set<string>>();
        const first = new Map<string, number>();
        for (const s of sent) {
          for (const a of s.answers) {
            agents.set(a, (agents.get(a) ?? new Set()).add(s.aid));
            first.set(a, Math.min(first.get(a) ?? Infinity, s.timestamp));
          }
        }
        const questions: QuestionFacts[] = lines
          .filter((l) => !isAgentLine(l) && isAnnotatedOpen(l))
          .map((l) => {
            const n = agents.get(l.id)?.size ?? 0;
            return { id: l.id, asker: l.sender.toLowerCase(), answeredBy: n, waitMs: n === 0 ? undefined : first.get(l.id)! - l.ts };
          });
        const replies = questions.length === 0 ? [] : lines.filter((l) => !isAgentLine(l)).flatMap((l) => (l.replyTo ?? []).map((id) => ({ id, sender: l.sender.toLowerCase() })));
        const before = replayTemp();
        const m = measureRoom({ lines, isAgentLine, agentNames: [{ persona: "a", aid: "a" }, { persona: "b", aid: "b" }], sent, mentioned: () => false, count: lines.length, spill: w.spill });
        expect(printed(m.orphans)).toEqual(printed(mapOrphans(questions, replies)));
        expect([...replayTemp()].filter((d) => !before.has(d))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
