// The gates before any prompt (src/monitor/dispatch/gate.ts), one step at a time: the batch and
// what the group's memory says in, the step's answer or skip reason out.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { alreadyAnswered, gate, redelivery } from "../../../src/monitor/dispatch/gate.ts";
import { DispatchRun } from "../../../src/monitor/dispatch/run.ts";
import type { InboundMessage, UnsentReply } from "../../../src/types.ts";
import { ALICE, T0, batch, msg, testGroup } from "../helpers.ts";
import { stepRun } from "./step.ts";

const BOB = "bob.agentcp.io";
const DAVE = "dave.agentcp.io";
const OWNER = "carol.agentcp.io";
const HELPER = "helper.agentcp.io";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A group whose own messages said they answered everything up to `through`. */
function answeredThrough(through: number | undefined) {
  const group = testGroup();
  if (through !== undefined) group.memory.recordEcho({ msgId: "900", content: "our earlier reply", timestamp: T0 - 1000, metadata: { answered_through: String(through) } });
  return group;
}

describe("alreadyAnswered: a batch our replies answered already is never answered again", () => {
  it.each([
    // answered through, batch ids → skip detail (undefined: goes on)
    [undefined, ["5"], undefined],
    [5, ["4", "5"], "through:5"],
    [5, ["5", "6"], undefined],
    [5, ["abc"], undefined],
  ] as const)("answered through %s, batch %j → %s", (through, ids, detail) => {
    const { run } = stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: ids.map((id) => msg(id, BOB, `line ${id}`, T0)) }), group: answeredThrough(through) });
    expect(alreadyAnswered(run)).toEqual(detail === undefined ? undefined : { skip: "already-answered", detail });
  });
});

describe("redelivery: the retry of a batch whose reply did not get out", () => {
  const unsent = (ids: string[], extra: Partial<UnsentReply> = {}): UnsentReply => ({
    ids: new Set(ids),
    text: "On my way.",
    replyType: "short",
    replyTo: ids[0],
    metadata: undefined,
    key: { hash: "h", normalized: "onmyway" },
    hasHuman: true,
    ratio: 0.25,
    maybeSent: false,
    since: T0 - 60_000,
    afterMsgId: 0,
    writtenBy: 3,
    ...extra,
  });

  it("nothing carried → decided afresh", () => {
    const { run } = stepRun({ batch: batch({ dispatchId: 4, now: T0, messages: [msg("1", BOB, "Alice?", T0, { isMention: true })] }) });
    expect(redelivery(run)).toBeUndefined();
  });

  it("the carried reply covers the batch → delivered as it is; what arrived since goes back (notHandled)", () => {
    const b = { ...batch({ dispatchId: 4, now: T0, messages: [msg("1", BOB, "Alice?", T0, { isMention: true }), msg("2", DAVE, "and me?", T0 + 500)] }), carried: { reply: unsent(["1"]) } };
    const { run } = stepRun({ batch: b });
    expect(redelivery(run)).toEqual({ reply: unsent(["1"]), notHandled: ["2"] });
    expect(run.record).toMatchObject({ replyType: "short", budgetRatio: 0.25 });
  });

  it("the carried reply answers messages the batch no longer holds (dropped meanwhile) → decided afresh", () => {
    const b = { ...batch({ dispatchId: 4, now: T0, messages: [msg("2", DAVE, "and me?", T0)] }), carried: { reply: unsent(["1", "2"]) } };
    expect(redelivery(stepRun({ batch: b }).run)).toBeUndefined();
  });

  it("it claimed an open question someone else has answered since → decided afresh (the floor yields)", () => {
    const question = msg("1", BOB, "anyone know how to reset the mirror?", T0);
    const answer: InboundMessage = msg("2", DAVE, "bob: run mirror-reset", T0 + 1000);
    const b = { ...batch({ dispatchId: 4, now: T0 + 2000, messages: [question] }), carried: { reply: unsent(["1"], { claim: "1" }) } };
    const group = testGroup({ held: () => [answer] });
    // Dave is a member the config names: his answer is credible.
    expect(redelivery(stepRun({ batch: b, group, humans: [DAVE] }).run)).toBeUndefined();
    // Unless it may have been sent already: then it goes (its echo or the history settles it).
    const maybe = { ...b, carried: { reply: unsent(["1"], { claim: "1", maybeSent: true }) } };
    expect(redelivery(stepRun({ batch: maybe, group, humans: [DAVE] }).run)).toMatchObject({ notHandled: [] });
    // Nobody vouches for a stranger's answer: the carried reply is delivered as it is.
    expect(redelivery(stepRun({ batch: b, group }).run)).toMatchObject({ notHandled: [] });
  });
});

describe("gate: own lines, the loop guard, answers to others, the floor", () => {
  it("a batch of only our own lines is silent, no model call", () => {
    const { run } = stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: [msg("1", ALICE.aid, "mine", T0)] }) });
    expect(gate(run)).toEqual({ skip: "silent", detail: "only-own-messages" });
  });

  it.each([
    // agent chain before, sender → skip detail, or the chain after (undefined: skipped)
    [5, HELPER, undefined, 5],
    [6, HELPER, "agent-chain=6", 6],
    [6, OWNER, undefined, 0],
  ] as const)("agent chain %i, a line from %s → skip %s, chain %i after", (chain, sender, detail, after) => {
    const { run, m } = stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: [msg("1", sender, "ping", T0, { isMention: true })] }), agents: [HELPER], restored: { agentChain: chain } });
    const out = gate(run);
    if (detail) expect(out).toEqual({ skip: "bot-loop-guard", detail });
    else expect(out).toMatchObject({ hasHuman: sender === OWNER, recentBefore: [] });
    expect(m.state.agentChain).toBe(after);
  });

  it("an unaddressed batch of only an agent's answer to someone else is not answered (agent-answer)", () => {
    const reply = msg("2", HELPER, "try restarting it", T0, { metadata: { reply_to: "1" } });
    expect(gate(stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: [reply] }), agents: [HELPER] }).run)).toEqual({ skip: "agent-answer", detail: "answers-to-others" });
    // The same answer to one of our lines is for us.
    const group = testGroup();
    group.memory.recordSent({ msgId: "1", timestamp: T0 - 1000, content: "is it down?", key: { hash: "x", normalized: "isitdown" } });
    expect(gate(stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: [reply] }), agents: [HELPER], group }).run)).toMatchObject({ hasHuman: false });
  });

  it("in a room of agents, an unmentioned question put to another member by name yields (addressed-to-other); alone it goes on", () => {
    const lines = [msg("1", DAVE, "back from lunch", T0 - 5000), msg("2", BOB, "dave, can you restart the build?", T0)];
    expect(gate(stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: lines }), agents: [HELPER] }).run)).toEqual({ skip: "addressed-to-other", detail: "2" });
    expect(gate(stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: lines }) }).run)).toMatchObject({ floor: undefined });
  });

  it("remembers other members' lines for the next batch (recentBefore is what came before this one)", () => {
    const { run, m, group } = stepRun({ batch: batch({ dispatchId: 1, now: T0, messages: [msg("1", BOB, "one", T0)] }) });
    expect(gate(run)).toMatchObject({ recentBefore: [] });
    const second = new DispatchRun(m, batch({ dispatchId: 2, now: T0 + 1000, messages: [msg("2", BOB, "two", T0 + 1000), msg("3", ALICE.aid, "mine", T0 + 1000)] }), group.context);
    const out = gate(second);
    expect("recentBefore" in out && out.recentBefore.map((x) => x.msgId)).toEqual(["1"]);
    // Ours are left out; at most dedup.othersHistorySize are kept.
    expect(m.state.othersRecent.map((x) => x.msgId)).toEqual(["1", "2"]);
  });
});
