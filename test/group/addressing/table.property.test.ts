// The table as a whole, over generated lines and conversations: decideAddressing answers what the
// first rule of ADDRESSING_RULES with an opinion answers (so its hand-written chain and the
// table keep one order), always answers, and changes nothing it reads.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ADDRESSING_RULES, decideAddressing } from "../../../src/group/addressing/rules.ts";
import type { AddressedLine, ConversationView, Verdict } from "../../../src/group/addressing/view.ts";
import type { MessageSignals } from "../../../src/group/signals.ts";
import { line, S, T, viewOf, type ViewSpec } from "./view.ts";

// Few people, so the line's sender is often the one the conversation's state is about.
const PEOPLE = ["bob", "carol", "puff"] as const;
const person = fc.constantFrom(...PEOPLE);
/** A time before T, on either side of every window the rules know (continuation 30 s, answer 60 s, direct 120 s). */
const ago = fc.oneof(fc.integer({ min: -2, max: 29 }), fc.integer({ min: 31, max: 59 }), fc.integer({ min: 61, max: 119 }), fc.integer({ min: 121, max: 200 })).map((s) => T - s * S);

const contentArb = fc.oneof(
  fc.constantFrom("hello", "a cow says moo", "Alice, can you look?", "jacob: did it mount?", "!info foo", "!raid | puff", "note: red build", "lol carol, try xkill", "carol: ask Alice", "can you paste it?"),
  person.map((p) => `${p}: are you there?`),
  person.map((p) => `${p} did you push?`),
  person.map((p) => `@${p}_ see above`),
);

const lineArb = fc.record({
  content: contentArb,
  sender: person,
  contentType: fc.constantFrom("text", "text", "text", "event"),
  mentionsUs: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  replyTo: fc.option(fc.constantFrom("100", "99"), { nil: undefined }),
  reaction: fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
});

const viewArb: fc.Arbitrary<ViewSpec> = fc.record({
  keywords: fc.constantFrom(["Alice", "alice.agentcp.io"], ["jacob_"]),
  ownIds: fc.constantFrom([], ["100"]),
  members: fc.subarray([...PEOPLE]),
  listed: fc.subarray([...PEOPLE]),
  lastSelfSpeakAt: fc.option(ago, { nil: undefined }),
  command: fc.option(fc.record({ ts: ago, target: fc.constantFrom(null, "puff") }), { nil: undefined }),
  openLine: fc.option(fc.record({ ts: ago, spoken: fc.subarray([...PEOPLE]) }), { nil: undefined }),
  lastSpeaker: fc.option(fc.constantFrom(...PEOPLE, "alice.agentcp.io"), { nil: undefined }),
  lastLineToUs: fc.boolean(),
  latestTo: fc.subarray([...PEOPLE]),
  awaiting: fc.array(fc.record({ sender: person, asked: fc.boolean() }), { maxLength: 2 }),
  engaged: fc.array(fc.record({ speaker: person, until: fc.integer({ min: -30, max: 900 }).map((s) => T + s * S), directAt: fc.option(ago, { nil: undefined }), shared: fc.boolean(), contested: fc.boolean() }), { maxLength: 2 }),
  recentSpeakers: fc.array(fc.constantFrom(...PEOPLE, "alice.agentcp.io"), { maxLength: 3 }),
  targets: fc.dictionary(person, fc.record({ to: fc.constantFrom("us" as const, "other" as const, "maybe-us" as const), ts: ago })),
});

function firstVerdict(l: AddressedLine, s: MessageSignals, v: ConversationView): Verdict | null {
  for (const rule of ADDRESSING_RULES) {
    const found = rule.decide(l, s, v);
    if (found !== null) return found;
  }
  return null;
}

/** Everything a rule could read of the view, as plain data. */
function snapshot(v: ConversationView, l: AddressedLine): unknown {
  return {
    command: v.command,
    openLine: v.openLine && { ts: v.openLine.ts, spoken: [...v.openLine.spoken] },
    lastSpeaker: v.lastSpeaker,
    lastLineToUs: v.lastLineToUs,
    privateExchange: PEOPLE.map((p) => v.privateExchange(p)),
    lastSelfSpeakAt: v.lastSelfSpeakAt,
    engaged: PEOPLE.map((p) => [v.engaged?.stateOf(p, l.timestamp) ?? null, v.engaged?.lastDirect(p) ?? null]),
    targets: PEOPLE.map((p) => v.targetOf(p) ?? null),
  };
}

describe("the addressing table over generated lines and conversations", () => {
  it("decideAddressing is the first opinion of ADDRESSING_RULES in order, says what that rule declares, there always is one, and the view is unchanged", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(lineArb, viewArb, (lp, spec) => {
        const signals: Partial<MessageSignals> = { mentionsUs: lp.mentionsUs, ...(lp.replyTo !== undefined ? { replyTo: lp.replyTo } : {}), ...(lp.reaction ? { reaction: { reaction: "👍" } } : {}) };
        const l = line(lp.content, { sender: lp.sender, contentType: lp.contentType, signals });
        const v = viewOf(spec);
        const before = snapshot(v, l.line);
        const decided = decideAddressing(l.line, l.signals, v);
        expect(decided).toEqual(firstVerdict(l.line, l.signals, v));
        expect(snapshot(v, l.line)).toEqual(before);
        const winner = ADDRESSING_RULES.find((r) => r.decide(l.line, l.signals, v) !== null)!;
        expect(decided.to).toBe(winner.to);
        seen.add(winner.name);
      }),
      {
        numRuns: 20_000,
        seed: 25,
        // back-and-forth needs four facts at once (a maybe-answer within 30 s, our line since, ours
        // the last line, to the room or to them), private-exchange a turn each way among the last
        // three lines: random views rarely line them up, so one of each is written out.
        examples: [
          [
            { content: "hello", sender: "bob", contentType: "text", mentionsUs: false, replyTo: undefined, reaction: false },
            { targets: { bob: { to: "maybe-us", ts: T - 10 * S } }, recentSpeakers: ["bob", "alice.agentcp.io", "bob"] },
          ],
          [
            { content: "hello", sender: "bob", contentType: "text", mentionsUs: false, replyTo: undefined, reaction: false },
            { targets: { bob: { to: "maybe-us", ts: T - 10 * S } }, lastSpeaker: "alice.agentcp.io", lastSelfSpeakAt: T - 5 * S, latestTo: ["bob"] },
          ],
        ],
      },
    );
    // Every rule won somewhere: one left out of the chain, or asked out of its turn, would show.
    expect([...seen].sort()).toEqual(ADDRESSING_RULES.map((r) => r.name).sort());
  });
});
