import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildMentionKeywords, checkMention, compileMentionMatcher, isBoundedWordChar, replyTargetOf } from "../../src/group/mention.ts";

describe("buildMentionKeywords (seed §4.2)", () => {
  it("takes name, aid user part, full aid, aliases — in that order", () => {
    expect(buildMentionKeywords({ name: "Alice", aid: "alice.agentcp.io", aliases: ["小爱", "A酱"] })).toEqual([
      "Alice",
      "alice.agentcp.io",
      "小爱",
      "A酱",
    ]);
  });

  it("drops keywords shorter than 2 characters and blanks, trims, and deduplicates case-insensitively", () => {
    expect(buildMentionKeywords({ name: " Bo ", aid: "bob.agentcp.io", aliases: ["x", "爱", "", "  ", "BOB", "Bo", "bob.AGENTCP.io"] })).toEqual([
      "Bo",
      "bob",
      "bob.agentcp.io",
    ]);
  });

  it("works without a name or aliases, and with an aid that has no dot", () => {
    expect(buildMentionKeywords({ aid: "carol.agentcp.io" })).toEqual(["carol", "carol.agentcp.io"]);
    expect(buildMentionKeywords({ aid: "dave" })).toEqual(["dave"]);
    expect(buildMentionKeywords({ aid: "q.agentcp.io" })).toEqual(["q.agentcp.io"]);
  });
});

describe("checkMention smart (default)", () => {
  const al = ["al"];
  it("`al` fires on the word al, never inside also / hal / al2", () => {
    expect(checkMention("also, I think so", al, "smart")).toBe(false);
    expect(checkMention("that is halal", al, "smart")).toBe(false);
    expect(checkMention("al2 is a robot", al, "smart")).toBe(false);
    expect(checkMention("2al", al, "smart")).toBe(false);
    expect(checkMention("al, what do you think?", al, "smart")).toBe(true);
    expect(checkMention("hey AL!", al, "smart")).toBe(true);
    expect(checkMention("ask Al's opinion", al, "smart")).toBe(true);
    expect(checkMention("(al)", al, "smart")).toBe(true);
  });

  it("`jacob` does not fire on another agent called `jacob_`; `jacob_` listing `jacob` as alias does", () => {
    const jacob = buildMentionKeywords({ aid: "jacob.agentcp.io" });
    expect(checkMention("jacob_ said so", jacob, "smart")).toBe(false);
    expect(checkMention("jacobs ladder", jacob, "smart")).toBe(false);
    expect(checkMention("@jacob, look", jacob, "smart")).toBe(true);
    expect(checkMention("ask jacob.", jacob, "smart")).toBe(true);
    expect(checkMention("ping jacob.agentcp.io please", jacob, "smart")).toBe(true);

    const underscore = buildMentionKeywords({ name: "jacob_", aid: "jacob_.agentcp.io", aliases: ["jacob"] });
    expect(checkMention("@jacob, look", underscore, "smart")).toBe(true);
    expect(checkMention("jacob_ is here", underscore, "smart")).toBe(true);
    expect(checkMention("jacobs ladder", underscore, "smart")).toBe(false);
    const noAlias = buildMentionKeywords({ name: "jacob_", aid: "jacob_.agentcp.io" });
    expect(checkMention("@jacob, look", noAlias, "smart")).toBe(false);
  });

  it("Chinese names match inside Chinese text (no word boundaries there)", () => {
    const kw = buildMentionKeywords({ name: "Alice", aid: "alice.agentcp.io", aliases: ["小爱"] });
    expect(checkMention("我觉得小爱说得对", kw, "smart")).toBe(true);
    expect(checkMention("小爱同学你好", kw, "smart")).toBe(true);
    expect(checkMention("这个很可爱", kw, "smart")).toBe(false);
    // A Latin name runs straight into Chinese words: Han characters are boundaries.
    expect(checkMention("问Alice吧", kw, "smart")).toBe(true);
    expect(checkMention("Alice们怎么看", kw, "smart")).toBe(true);
    expect(checkMention("Alicesmith说", kw, "smart")).toBe(false);
  });

  it("is case-insensitive", () => {
    const kw = buildMentionKeywords({ name: "Alice", aid: "alice.agentcp.io" });
    expect(checkMention("ALICE?", kw, "smart")).toBe(true);
    expect(checkMention("hi alice", kw, "smart")).toBe(true);
    expect(checkMention("ALICE.AGENTCP.IO: ping", kw, "smart")).toBe(true);
    expect(checkMention("malice aforethought", kw, "smart")).toBe(false);
    expect(checkMention("Привет, Алиса", ["алиса"], "smart")).toBe(true);
    expect(checkMention("Алисами", ["алиса"], "smart")).toBe(false);
  });

  it("treats regex syntax in keywords literally", () => {
    expect(checkMention("I love c++ a lot", ["c++"], "smart")).toBe(true);
    expect(checkMention("abc++", ["c++"], "smart")).toBe(false);
    expect(checkMention("axb", ["a.b"], "smart")).toBe(false);
    expect(checkMention("a.b!", ["a.b"], "smart")).toBe(true);
    expect(checkMention("[bot] hi", ["[bot]"], "smart")).toBe(true);
    expect(checkMention("A-酱来了", ["A酱"], "smart")).toBe(false);
    expect(checkMention("A酱来了", ["A酱"], "smart")).toBe(true);
  });

  it("never matches with no keywords", () => {
    expect(checkMention("anything", [], "smart")).toBe(false);
    expect(checkMention("anything", [], "substring")).toBe(false);
  });

  it("classifies word characters by script", () => {
    expect(["a", "Z", "7", "_", "é", "Ж"].map(isBoundedWordChar)).toEqual([true, true, true, true, true, true]);
    expect(["小", "あ", "カ", "한", " ", ",", "-", "@"].map(isBoundedWordChar)).toEqual([false, false, false, false, false, false, false, false]);
  });
});

describe("checkMention substring (the seed's plain rule)", () => {
  it("fires on any substring, case-insensitively", () => {
    expect(checkMention("also, I think so", ["al"], "substring")).toBe(true);
    expect(checkMention("jacob_ said so", ["jacob"], "substring")).toBe(true);
    expect(checkMention("我觉得小爱说得对", ["小爱"], "substring")).toBe(true);
    expect(checkMention("HELLO ALICE", ["alice"], "substring")).toBe(true);
    expect(checkMention("hello bob", ["alice"], "substring")).toBe(false);
  });

  it("smart never fires where substring would not (property)", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "l", "A", "L", " ", "_", ",", "小", "爱", "s", "o") });
    fc.assert(
      fc.property(text, fc.array(text.filter((k) => k.trim().length >= 2), { maxLength: 3 }), (content, keywords) => {
        if (checkMention(content, keywords, "smart")) expect(checkMention(content, keywords, "substring")).toBe(true);
      }),
    );
  });
});

describe("compileMentionMatcher", () => {
  it("returns one shared matcher for the same keywords and mode", () => {
    const a = compileMentionMatcher(["Alice", "小爱"], "smart");
    expect(compileMentionMatcher(["Alice", "小爱"], "smart")).toBe(a);
    expect(compileMentionMatcher(["Alice", "小爱"], "substring")).not.toBe(a);
    expect(a("hey alice")).toBe(true);
    expect(a("palice")).toBe(false);
  });
});

describe("replyTargetOf", () => {
  it("reads reply_to / replyTo / reply_to_msg_id as a string id", () => {
    expect(replyTargetOf(null)).toBeUndefined();
    expect(replyTargetOf({})).toBeUndefined();
    expect(replyTargetOf({ reply_to: 42 })).toBe("42");
    expect(replyTargetOf({ replyTo: "abc" })).toBe("abc");
    expect(replyTargetOf({ reply_to_msg_id: "7" })).toBe("7");
    expect(replyTargetOf({ reply_to: "" })).toBeUndefined();
    expect(replyTargetOf({ reply_to: { id: 1 } })).toBeUndefined();
  });
});
