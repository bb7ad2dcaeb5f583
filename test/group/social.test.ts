// Social memory of a group (src/group/social.ts): who we are engaged with and until when, and
// which messages are ours — tables of calls in, state out.
import { describe, expect, it } from "vitest";
import { EngagedSpeakers, OwnMessages } from "../../src/group/social.ts";

const T0 = 1_700_000_000_000;
const S = 1000;

describe("EngagedSpeakers", () => {
  it("an engagement lasts until its end (inclusive), is never shortened, and is case-insensitive", () => {
    const e = new EngagedSpeakers();
    expect(e.stateOf("Bob", T0)).toBeNull();
    e.engage("Bob", T0 + 60 * S, T0);
    e.engage("bob", T0 + 30 * S, T0 + 10 * S);
    expect([e.stateOf("BOB", T0 + 60 * S), e.stateOf("bob", T0 + 60 * S + 1)]).toEqual(["engaged", null]);
    expect(e.size).toBe(1);
    expect(e.list(T0 + 10 * S)).toEqual(["bob"]);
    expect(e.list(T0 + 61 * S)).toEqual([]);
  });

  it.each([
    // someone else addressed them; did they owe us an answer → state after
    [false, "shared"],
    [true, "contested"],
  ] as const)("shared by another member (they owed us an answer: %s) → %s, until they talk to us again", (owes, state) => {
    const e = new EngagedSpeakers();
    e.engage("bob", T0 + 60 * S, T0, owes);
    e.share((k) => k === "bob");
    expect(e.stateOf("bob", T0 + S)).toBe(state);
    // Talking to us again (a new engagement) clears the sharing.
    e.engage("bob", T0 + 90 * S, T0 + 2 * S);
    expect(e.stateOf("bob", T0 + 3 * S)).toBe("engaged");
  });

  it("contested (we addressed bob last, then someone else did) lasts until bob speaks, whatever he says", () => {
    const e = new EngagedSpeakers();
    e.engage("bob", T0 + 60 * S, T0, true);
    e.share((k) => k === "bob");
    expect(e.stateOf("bob", T0 + S)).toBe("contested");
    e.spoke("Bob");
    expect(e.stateOf("bob", T0 + 2 * S)).toBe("engaged");
  });

  it("direct exchanges are remembered; disengage and prune forget everything about a speaker", () => {
    const e = new EngagedSpeakers();
    e.engage("bob", T0 + 60 * S, T0, false, true);
    e.engage("carol", T0 + 5 * S, T0 + S, false, true);
    e.engage("dave", T0 + 60 * S, T0 + 2 * S);
    expect([e.lastDirect("Bob"), e.lastDirect("carol"), e.lastDirect("dave")]).toEqual([T0, T0 + S, undefined]);
    e.disengage((k) => k === "bob");
    expect([e.stateOf("bob", T0 + S), e.lastDirect("bob")]).toEqual([null, undefined]);
    e.prune(T0 + 6 * S);
    expect([e.stateOf("carol", T0 + 4 * S), e.lastDirect("carol")]).toEqual([null, undefined]);
    expect(e.list(T0 + 6 * S)).toEqual(["dave"]);
  });

  it("stays bounded: past 64 speakers, engagements already over are pruned as new ones come", () => {
    const e = new EngagedSpeakers();
    for (let i = 0; i < 64; i++) e.engage(`s${i}`, T0 + S, T0);
    expect(e.size).toBe(64);
    e.engage("late", T0 + 10 * S, T0 + 2 * S);
    expect(e.size).toBe(1);
  });
});

describe("OwnMessages", () => {
  it("a recorded send is counted once; its echo (by id) was counted already", () => {
    const own = new OwnMessages();
    expect(own.recordSent("50", "hi")).toBe(true);
    expect(own.recordSent("50", "hi")).toBe(false);
    expect(own.confirmEcho("50", "hi")).toBe(true);
    expect([own.hasId("50"), own.idCount]).toEqual([true, 1]);
  });

  it.each([
    // recorded send (id, content), echo (id, content) → counted already?
    [[undefined, "same words"], ["7", "same words"], true],
    [[undefined, "same words"], ["7", "other words"], false],
    [["8", "x"], ["9", "x"], false],
  ] as const)("recorded %j, echo %j → counted already: %s", ([id, content], [echoId, echoContent], counted) => {
    const own = new OwnMessages();
    own.recordSent(id, content);
    expect(own.confirmEcho(echoId, echoContent)).toBe(counted);
    // Either way the echo's id is ours from now on: a reply to it is to us.
    expect(own.hasId(echoId)).toBe(true);
  });

  it("a send recorded without an id matches one echo only", () => {
    const own = new OwnMessages();
    own.recordSent(undefined, "same words");
    expect([own.confirmEcho("7", "same words"), own.confirmEcho("8", "same words")]).toEqual([true, false]);
  });

  it("findEcho: our newest echo with exactly this text, at or after `since`", () => {
    const own = new OwnMessages();
    own.noteEcho("10", "hello", T0);
    own.noteEcho("11", "hello", T0 + 5 * S);
    expect(own.findEcho("hello", T0 + S)).toEqual({ msgId: "11", timestamp: T0 + 5 * S });
    expect(own.findEcho("hello", T0 + 6 * S)).toBeUndefined();
    expect(own.findEcho("hello!", T0)).toBeUndefined();
  });

  it("keeps the last 128 ids (a ring) and the last 16 echoes", () => {
    const own = new OwnMessages();
    for (let i = 0; i < 130; i++) own.recordSent(String(i), `m${i}`);
    expect([own.idCount, own.hasId("0"), own.hasId("1"), own.hasId("2"), own.hasId("129")]).toEqual([128, false, false, true, true]);
    for (let i = 0; i < 17; i++) own.noteEcho(String(200 + i), `e${i}`, T0 + i);
    expect([own.findEcho("e0", T0), own.findEcho("e1", T0)]).toEqual([undefined, { msgId: "201", timestamp: T0 + 1 }]);
  });
});
