// Which lines open with a member's bare name, joined on disk (member-asks.ts: the members' keys and
// each line's asked key in buckets by the key's hash), against a set of every member's keys held in
// memory, as the room measured it before: for any small log — senders that are aids (`bob.acp.io`,
// whose user part is a member's key too) or bare nicks in any case, lines that open with a member's
// name, a non-member's, the asker's own, a marked `@name` or `name:`, questions and not, the
// room's agents as members that send nothing — with buckets of one line, 1-byte buffers and
// hashes that put every key in one bucket.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leadingName, memberKeys, nickKey } from "../../src/group/addressee.ts";
import { isOpenQuestion, isQuestion } from "../../src/monitor/floor.ts";
import { idHash } from "../../src/replay/id-check.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { MemberAsks } from "../../src/replay/member-asks.ts";
import type { ReplaySent } from "../../src/replay/replay.ts";
import { measureRoom } from "../../src/replay/room.ts";
import { usePrivateTmpdir } from "../support/private-tmpdir.ts";

const tempFolders = usePrivateTmpdir("member-asks");
const replayTemp = () => tempFolders("acp-replay-");

type Agent = { persona: string; aid: string };

/** Whether each line is an open question, by a set of every member's keys (the log's senders, the agents' personas and aids), as floor.ts decided it before. */
function openBySet(lines: ReadonlyArray<Pick<LogLine, "sender" | "content">>, agents: readonly Agent[]): boolean[] {
  const keys = new Set<string>();
  for (const l of lines) for (const k of memberKeys(l.sender)) keys.add(k);
  for (const a of agents) for (const k of [...memberKeys(a.persona), ...memberKeys(a.aid)]) keys.add(k);
  return lines.map((l) => {
    if (!isQuestion(l.content)) return false;
    const lead = leadingName(l.content);
    if (lead === null) return true;
    const key = nickKey(lead.name);
    if (memberKeys(l.sender).includes(key)) return true;
    return !lead.marked && !keys.has(key);
  });
}

const sender = fc.constantFrom("ann", "Ann", "bob.acp.io", "BOB", "cyd_", "dee.agentcp.io", "u1", "u2.x", "eve");
const agent = fc.constantFrom<Agent>({ persona: "ada", aid: "ada.acp.io" }, { persona: "Max", aid: "max" }, { persona: "zed", aid: "zoe.acp.io" });
/** The name a line opens with: a sender's (or its user part), an agent's, nobody's, or the asker's own (`self`). */
const name = fc.constantFrom("ann", "ANN", "bob", "bob.acp.io", "cyd", "cyd_", "dee", "u1", "u2", "eve", "ada", "zoe", "max", "zed", "nobody", "fred.acp.io", "self");
const line = fc.record({
  sender,
  name,
  // How the name opens the line: bare, `@name`, `name:`, `name,`, or no name at all.
  form: fc.constantFrom("bare", "at", "colon", "comma", "none"),
  question: fc.boolean(),
});
const content = (l: { sender: string; name: string; form: string; question: boolean }): string => {
  const n = l.name === "self" ? l.sender : l.name;
  const lead = { bare: `${n} `, at: `@${n} `, colon: `${n}: `, comma: `${n}, `, none: "" }[l.form];
  return `${lead}does the build work${l.question ? "?" : "."}`;
};
// Bucket keys: the real hash, one for every key (all collide), or two.
const hashes: Record<string, (key: string) => number> = { idHash, same: () => 0, twoKeys: (s) => (s.length % 2) * 2 ** 51 };

describe("MemberAsks", () => {
  it("says of each line what a set of every member's keys says, in buckets on disk or in memory", () => {
    const world = fc.record({
      lines: fc.array(line, { maxLength: 40 }),
      agents: fc.uniqueArray(agent, { maxLength: 3 }),
      spill: fc.boolean(),
      // The lines' count as given: the log's, or none (a timeline measured without it).
      counted: fc.boolean(),
      bucketLines: fc.integer({ min: 1, max: 8 }),
      writeBytes: fc.integer({ min: 1, max: 64 }),
      hash: fc.constantFrom(...Object.keys(hashes)),
    });
    fc.assert(
      fc.property(world, (w) => {
        const lines = w.lines.map((l) => ({ sender: l.sender, content: content(l) }));
        const before = replayTemp();
        const asks = new MemberAsks({
          members: w.agents.flatMap((a) => [a.persona, a.aid]),
          lines: w.counted ? lines.length : 0,
          spill: w.spill,
          bucketLines: w.bucketLines,
          writeBytes: w.writeBytes,
          hash: hashes[w.hash]!,
        });
        try {
          lines.forEach((l, i) => asks.line(l, i));
          asks.join();
          expect(lines.map((l, i) => isOpenQuestion(l.content, () => asks.asksMember(i), l.sender))).toEqual(openBySet(lines, w.agents));
        } finally {
          asks.remove();
        }
        // Its temp files went with it.
        expect([...replayTemp()].filter((d) => !before.has(d))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it("refuses a line after the join, a second join, and a question before it", () => {
    const asks = new MemberAsks({ members: ["ann"], lines: 1, spill: false });
    expect(() => asks.asksMember(0)).toThrow(/before join/);
    asks.line({ sender: "bob", content: "ann why?" }, 0);
    asks.join();
    expect(asks.asksMember(0)).toBe(true);
    expect(asks.asksMember(1)).toBe(false);
    expect(() => asks.line({ sender: "bob", content: "hi" }, 1)).toThrow(/after join/);
    expect(() => asks.join()).toThrow(/twice/);
    asks.remove();
  });
});

describe("measureRoom's open questions", () => {
  it("equal those of a set of every member's keys, the agents' answers matched by id, walked from a file or held", () => {
    const T0 = 1_767_600_000_000;
    const world = fc.record({
      lines: fc.array(fc.record({ line, agentLine: fc.boolean(), mentioned: fc.boolean(), ts: fc.integer({ min: 0, max: 60_000 }) }), { maxLength: 40 }),
      agents: fc.uniqueArray(agent, { minLength: 1, maxLength: 3, selector: (a) => a.aid }),
      sent: fc.array(fc.record({ agent: fc.nat(), ts: fc.integer({ min: 0, max: 90_000 }), answers: fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 3 }), replyTo: fc.option(fc.nat({ max: 50 })) }), { maxLength: 12 }),
      spill: fc.boolean(),
    });
    fc.assert(
      fc.property(world, (w) => {
        const agentAids = new Set(w.agents.map((a) => a.aid));
        const lines: LogLine[] = w.lines
          .map((l, i) => ({ id: `m${i}`, ts: T0 + l.ts, sender: l.agentLine ? w.agents[0]!.aid : l.line.sender, content: content(l.line), line: i + 1 }))
          .sort((a, b) => a.ts - b.ts);
        const isAgentLine = (l: LogLine) => agentAids.has(l.sender);
        const mentionedIds = new Set(w.lines.flatMap((l, i) => (l.mentioned ? [`m${i}`] : [])));
        const sent: ReplaySent[] = w.sent.map((s, k) => {
          const aid = w.agents[s.agent % w.agents.length]!.aid;
          return { aid, msgId: `${aid}:${k}`, timestamp: T0 + s.ts, content: "x", metadata: s.replyTo === null ? null : { reply_to: `m${s.replyTo}` }, answers: s.answers.map((j) => `m${j}`) };
        });
        // The reference: each line's answering agents by id (its `reply_to`, else every message it answers), the open questions by the set.
        const answeredBy = new Map<string, Set<string>>();
        for (const s of sent) {
          const replyTo = s.metadata === null ? undefined : String(s.metadata["reply_to"]);
          for (const id of replyTo === undefined ? s.answers : [replyTo]) answeredBy.set(id, (answeredBy.get(id) ?? new Set()).add(s.aid));
        }
        const open = openBySet(lines, w.agents);
        const want = { openQuestions: 0, answeredBy: { none: 0, one: 0, twoOrMore: 0 } };
        lines.forEach((l, i) => {
          if (isAgentLine(l) || mentionedIds.has(l.id) || !open[i]) return;
          want.openQuestions++;
          const n = answeredBy.get(l.id)?.size ?? 0;
          if (n === 0) want.answeredBy.none++;
          else if (n === 1) want.answeredBy.one++;
          else want.answeredBy.twoOrMore++;
        });
        const answered = want.answeredBy.one + want.answeredBy.twoOrMore;
        const before = replayTemp();
        const m = measureRoom({ lines, isAgentLine, agentNames: w.agents, sent, mentioned: (_, id) => mentionedIds.has(id), count: lines.length, spill: w.spill });
        expect({ openQuestions: m.openQuestions, answeredBy: m.answeredBy, multiAnswerRate: m.multiAnswerRate }).toEqual({ ...want, multiAnswerRate: answered === 0 ? 0 : want.answeredBy.twoOrMore / answered });
        expect([...replayTemp()].filter((d) => !before.has(d))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
