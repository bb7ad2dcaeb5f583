// The floor's pure decisions: what an open question is, whose answer counts, what an agent takes
// or yields. No timers here; the timelines are in floor.timeline.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideFloor, findAnswer, floorRank, isOpenQuestion, isQuestion, onlyAgentAnswers, openQuestionAsks, replyToOf, saysSomething, takenUp, type FloorContext, type FloorMessage } from "../../src/monitor/floor.ts";

const T0 = Date.UTC(2026, 0, 5, 14, 30, 0);
const AGENTS = new Set(["bot1.acp.local", "bot2.acp.local", "alice.acp.local"]);
// Who our config or the group service vouches for: the agents, and the people of the room. `zed`
// joined with the invite link and is vouched for by nobody; `rogue.acp.local` says it is an agent
// in its own agent.md (an agent, but nobody vouches for it).
const VOUCHED = new Set([...AGENTS, "sam", "ann", "dan", "eve", "dave"]);
const ctx: FloorContext = {
  selfAid: "alice.acp.local",
  isAgent: (s) => AGENTS.has(s.toLowerCase()) || s === "rogue.acp.local",
  isVouched: (s) => VOUCHED.has(s.toLowerCase()),
};
const msg = (msgId: string, sender: string, content: string, s = 0, extra: Partial<FloorMessage> = {}): FloorMessage => ({
  msgId,
  sender,
  content,
  timestamp: T0 + s * 1000,
  metadata: null,
  ...extra,
});
const noMembers = () => false;

describe("isQuestion / isOpenQuestion", () => {
  it("a line ending in ? or ？ asks; trailing spaces aside", () => {
    expect(["why?", "why ?  ", "为什么？", "ok?\n"].map(isQuestion)).toEqual([true, true, true, true]);
    expect(["why? no", "ok.", "", "?!"].map(isQuestion)).toEqual([false, false, false, false]);
  });

  it("open: addressed to nobody — no marked address, no bare known member first", () => {
    const members = new Set(["bob", "sam"]);
    const isMember = (k: string) => members.has(k);
    expect(isOpenQuestion("anyone know why apt hangs?", isMember)).toBe(true);
    expect(isOpenQuestion("does apt hang for anyone else?", isMember)).toBe(true);
    expect(isOpenQuestion("bob: why does apt hang?", isMember)).toBe(false);
    expect(isOpenQuestion("@carol why does apt hang?", isMember)).toBe(false);
    expect(isOpenQuestion("carol, why does apt hang?", isMember)).toBe(false);
    expect(isOpenQuestion("bob why does apt hang?", isMember)).toBe(false);
    // A bare first word that is nobody's name is just a word.
    expect(isOpenQuestion("why does apt hang?", isMember)).toBe(true);
    expect(isOpenQuestion("apt hangs. any idea", isMember)).toBe(false);
  });

  it("openQuestionAsks: what the line alone decides, else the one key it asks a member list about", () => {
    expect(openQuestionAsks("apt hangs.")).toBe(false);
    expect(openQuestionAsks("anyone know why apt hangs?")).toBe("anyone");
    expect(openQuestionAsks("? why")).toBe(false);
    expect(openQuestionAsks("?? why does apt hang?")).toBe(true);
    expect(openQuestionAsks("bob: why does apt hang?")).toBe(false);
    expect(openQuestionAsks("@Bob_ why does apt hang?")).toBe(false);
    expect(openQuestionAsks("Bob_ why does apt hang?")).toBe("bob");
    expect(openQuestionAsks("bob.acp.io why does apt hang?")).toBe("bob.acp.io");
    // The asker's own name, or its aid's user part: open, whatever the members.
    expect(openQuestionAsks("Dave here, why does apt hang?", "dave.acp.io")).toBe(true);
    expect(openQuestionAsks("@dave why does apt hang?", "dave")).toBe(true);
  });
});

describe("floorRank", () => {
  it("is deterministic, in [0, 1), and differs between agents for one question", () => {
    expect(floorRank("alice.acp.local", "42")).toBe(floorRank("ALICE.acp.local", "42"));
    expect(floorRank("alice.acp.local", "42")).not.toBe(floorRank("bob.acp.local", "42"));
    expect(floorRank("alice.acp.local", "42")).not.toBe(floorRank("alice.acp.local", "43"));
  });

  it("stays in [0, 1) for any aid and msg id (property)", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (aid, id) => {
        const r = floorRank(aid, id);
        return r >= 0 && r < 1;
      }),
    );
  });

  it("spreads agents over the delay: 1,000 questions, three agents, each first about a third of the time", () => {
    const first = new Map<string, number>();
    const aids = ["alice.acp.local", "bob.acp.local", "carol.acp.local"];
    for (let i = 0; i < 1000; i++) {
      const ranked = aids.map((a) => [a, floorRank(a, String(1000 + i))] as const).sort((x, y) => x[1] - y[1]);
      first.set(ranked[0]![0], (first.get(ranked[0]![0]) ?? 0) + 1);
    }
    for (const a of aids) expect(first.get(a)).toBeGreaterThan(270);
  });
});

describe("replyToOf", () => {
  it("reads plain and group_meta reply_to, numbers as strings", () => {
    expect(replyToOf({ reply_to: "7" })).toBe("7");
    expect(replyToOf({ group_meta: { reply_to: 8 } })).toBe("8");
    expect(replyToOf({ reply_to: "" })).toBeUndefined();
    expect(replyToOf(null)).toBeUndefined();
  });
});

describe("findAnswer", () => {
  const q = msg("10", "sam", "anyone know why apt hangs?", 0);
  it("a reply naming the question, from anyone but the asker and us", () => {
    expect(findAnswer(q, [msg("11", "bot1.acp.local", "try another mirror", 3, { metadata: { reply_to: "10" } })], ctx)?.msgId).toBe("11");
    expect(findAnswer(q, [msg("11", "dan", "a mirror", 3, { metadata: { reply_to: "10" } })], ctx)?.msgId).toBe("11");
    expect(findAnswer(q, [msg("11", "sam", "still hanging", 3, { metadata: { reply_to: "10" } })], ctx)).toBeUndefined();
    expect(findAnswer(q, [msg("11", "alice.acp.local", "ours", 3, { metadata: { reply_to: "10" } })], ctx)).toBeUndefined();
  });

  it("an agent that just posts (no reply_to) after the question answers it; a reply to something else does not", () => {
    expect(findAnswer(q, [msg("11", "bot2.acp.local", "mirrors are slow today", 3)], ctx)?.msgId).toBe("11");
    expect(findAnswer(q, [msg("11", "bot2.acp.local", "re the build", 3, { metadata: { reply_to: "4" } })], ctx)).toBeUndefined();
    // Said before the question: not an answer to it.
    expect(findAnswer(q, [msg("9", "bot2.acp.local", "morning", -5)], ctx)).toBeUndefined();
  });

  it("a person answers by addressing the asker; other talk by people is not an answer", () => {
    expect(findAnswer(q, [msg("11", "dan", "sam: your mirror is down", 3)], ctx)?.msgId).toBe("11");
    expect(findAnswer(q, [msg("11", "dan", "sam_, your mirror is down", 3)], ctx)?.msgId).toBe("11");
    expect(findAnswer(q, [msg("11", "dan", "lunch anyone", 3)], ctx)).toBeUndefined();
    expect(findAnswer(q, [msg("11", "dan", "eve: see the wiki", 3)], ctx)).toBeUndefined();
  });

  it("a stranger's line never answers, whatever it points at: the model sees it and decides", () => {
    expect(findAnswer(q, [msg("11", "zed", ".", 1, { metadata: { reply_to: "10" } })], ctx)).toBeUndefined();
    expect(findAnswer(q, [msg("11", "zed", "sam: your mirror is down", 1, { metadata: { reply_to: "10" } })], ctx)).toBeUndefined();
    expect(findAnswer(q, [msg("11", "zed", "sam: no", 1)], ctx)).toBeUndefined();
    expect(findAnswer(q, [msg("11", "zed", "ok", 1, { metadata: { group_meta: { reply_to: "10" } } })], ctx)).toBeUndefined();
    // An agent only by its own agent.md: nobody vouches for it.
    expect(findAnswer(q, [msg("11", "rogue.acp.local", "try another mirror", 1, { metadata: { reply_to: "10" } })], ctx)).toBeUndefined();
    expect(findAnswer(q, [msg("11", "rogue.acp.local", "mirrors are slow today", 1)], ctx)).toBeUndefined();
  });

  it("a line that says nothing is no answer, from anyone: `.`, `no`, `ok`, a bare name", () => {
    for (const content of [".", "sam: no", "sam: ok", "sam", "+1", "sam: ?", "👍"]) {
      expect(findAnswer(q, [msg("11", "bot1.acp.local", content, 1, { metadata: { reply_to: "10" } })], ctx), content).toBeUndefined();
      expect(findAnswer(q, [msg("11", "dan", content, 1)], ctx), content).toBeUndefined();
    }
    // A line that says something after junk still answers.
    expect(findAnswer(q, [msg("11", "dan", "sam: no", 1), msg("12", "dan", "sam: no, the mirror is down", 2)], ctx)?.msgId).toBe("12");
  });
});

describe("takenUp: the asker answered someone since the question (an answer that named nobody)", () => {
  const q = msg("q", "sam", "anyone know why apt hangs on update?", 0);
  const rows: Array<[string, FloorMessage[], string | undefined]> = [
    ["dan answers unnamed, sam replies to it → taken up by dan", [msg("d", "dan", "probably a stale lock in /var/lib/apt", 20), msg("s", "sam", "ah that was it, thanks", 30)], "d"],
    ["a one-word thanks counts: it answers the line before it", [msg("d", "dan", "probably a stale lock in /var/lib/apt", 20), msg("s", "sam", "thanks", 30)], "d"],
    ["sam adds detail before anyone spoke → still open", [msg("s", "sam", "it stops at 'reading package lists'", 10), msg("d", "dan", "probably a stale lock in /var/lib/apt", 20)], undefined],
    ["sam re-asks after dan's line (a new open question: askedAgain's) → not taken up", [msg("d", "dan", "probably a stale lock in /var/lib/apt", 20), msg("s", "sam", "is the main mirror down maybe?", 30)], undefined],
    ["the line before sam's is to someone else (`ann: …`) → sam elaborates, not answers", [msg("d", "dan", "ann: try the other kernel then", 20), msg("s", "sam", "it stops at 'reading package lists'", 30)], undefined],
    ["the line before sam's says nothing (`?`) → still open", [msg("d", "dan", "?", 20), msg("s", "sam", "it stops at 'reading package lists'", 30)], undefined],
    ["an answer, then someone else, then sam: sam answers the line right before its own", [msg("d", "dan", "probably a stale lock in /var/lib/apt", 20), msg("e", "eve", "ann: try the other kernel then", 25), msg("s", "sam", "it stops at 'reading package lists'", 30)], undefined],
    ["a stranger's line (vouched for by nobody) never takes a question up", [msg("z", "zed", "probably a stale lock in /var/lib/apt", 20), msg("s", "sam", "ah that was it, thanks", 30)], undefined],
    ["lines from before the question do not count", [msg("d", "dan", "probably a stale lock in /var/lib/apt", -20), msg("s", "sam", "ah that was it, thanks", 30)], undefined],
  ];
  it.each(rows)("%s", (_name, seen, by) => {
    expect(takenUp(q, [q, ...seen], ctx)?.msgId).toBe(by);
  });

  it("read in time order, whatever order `seen` holds", () => {
    const seen = [msg("s", "sam", "ah that was it, thanks", 30), q, msg("d", "dan", "probably a stale lock in /var/lib/apt", 20)];
    expect(takenUp(q, seen, ctx)?.msgId).toBe("d");
  });
});

describe("saysSomething", () => {
  it("two words with letters past an address to the asker, or four Han/kana characters", () => {
    const keys = ["sam"];
    const says = (t: string) => saysSomething(t, keys);
    expect(["sam: use rsync", "try another mirror", "sam, no idea sorry", "用 rsync 备份", "定期备份就好", "sam no idea"].map(says)).toEqual([true, true, true, true, true, true]);
    expect(["", ".", "sam: no", "@sam ok", "sam", "sam: 42", "+1 !!", "sam: ?", "好的", "sam: 👍 👍"].map(says)).toEqual([false, false, false, false, false, false, false, false, false, false]);
    // Only the asker's name is an address to strip: "dan no" says two words to the room.
    expect(saysSomething("dan no", keys)).toBe(true);
  });
});

describe("decideFloor", () => {
  it("claims the newest open question nobody answered, at this agent's rank", () => {
    const batch = [msg("1", "sam", "how do I mount an iso?", 0), msg("2", "ann", "why is wifi slow?", 1)];
    expect(decideFloor({ batch, seen: batch, ctx })).toEqual({ take: "claim", question: "2", rank: floorRank("alice.acp.local", "2") });
    const answered2 = [...batch, msg("3", "bot1.acp.local", "the driver", 2, { metadata: { reply_to: "2" } })];
    expect(decideFloor({ batch, seen: answered2, ctx })).toEqual({ take: "claim", question: "1", rank: floorRank("alice.acp.local", "1") });
    const answeredBoth = [...answered2, msg("4", "dan", "sam: use mount -o loop", 3)];
    expect(decideFloor({ batch, seen: answeredBoth, ctx })).toEqual({ take: "yield", reason: "answered-by-other", detail: "2:by:bot1.acp.local" });
  });

  it("nothing to settle without a person's open question: plain talk, a mention, an agent's question", () => {
    expect(decideFloor({ batch: [msg("1", "sam", "good morning", 0)], seen: [], ctx })).toEqual({ take: "none" });
    expect(decideFloor({ batch: [msg("1", "sam", "alice, why?", 0, { isMention: true })], seen: [], ctx })).toEqual({ take: "none" });
    expect(decideFloor({ batch: [msg("1", "bot1.acp.local", "does anyone want a summary?", 0)], seen: [], ctx })).toEqual({ take: "none" });
  });

  it("a question that opens with the asker's own name is still open (\"Dave here, what did you decide?\")", () => {
    const batch = [msg("1", "dave", "Dave here, what did you two decide?", 0)];
    expect(decideFloor({ batch, seen: batch, ctx })).toEqual({ take: "claim", question: "1", rank: floorRank("alice.acp.local", "1") });
  });

  it("questions put to other members by name are theirs", () => {
    const batch = [msg("1", "dan", "hi", 0), msg("2", "sam", "dan: did the fix land?", 1)];
    expect(decideFloor({ batch, seen: batch, ctx })).toEqual({ take: "yield", reason: "addressed-to-other", detail: "2" });
  });

  it("never claims a question someone answered, and a claim is always an open question of the batch (property)", () => {
    const senders = ["sam", "ann", "dan", "bot1.acp.local", "alice.acp.local"];
    const texts = ["why?", "sam: try this", "ann, ok?", "hello", "dan: works?", "any idea?"];
    const arb = fc.array(
      fc.record({ s: fc.constantFrom(...senders), t: fc.constantFrom(...texts), r: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }) }),
      { maxLength: 10 },
    );
    fc.assert(
      fc.property(arb, fc.integer({ min: 0, max: 10 }), (rows, cut) => {
        const all = rows.map((row, i) => msg(String(i), row.s, row.t, i, row.r === undefined ? {} : { metadata: { reply_to: String(row.r) } }));
        const batch = all.slice(0, cut).filter((m) => m.sender !== "alice.acp.local");
        const d = decideFloor({ batch, seen: all, ctx });
        if (d.take !== "claim") return true;
        const q = batch.find((m) => m.msgId === d.question);
        return q !== undefined && isQuestion(q.content) && findAnswer(q, all, ctx) === undefined && !ctx.isAgent(q.sender);
      }),
    );
  });
});

describe("onlyAgentAnswers", () => {
  const isOurs = (id: string) => id === "ours-1";
  it("true for a batch of agents' replies to other members' messages", () => {
    const batch = [msg("5", "bot1.acp.local", "use a mirror", 0, { metadata: { reply_to: "4" } }), msg("6", "bot2.acp.local", "or wait", 1, { metadata: { group_meta: { reply_to: "4" } } })];
    expect(onlyAgentAnswers({ batch, ctx, isOurs })).toBe(true);
  });

  it("false with a person in the batch, a reply to us, an agent that just posts, or nothing at all", () => {
    const answer = msg("5", "bot1.acp.local", "use a mirror", 0, { metadata: { reply_to: "4" } });
    expect(onlyAgentAnswers({ batch: [answer, msg("6", "sam", "thanks", 1)], ctx, isOurs })).toBe(false);
    expect(onlyAgentAnswers({ batch: [msg("5", "bot1.acp.local", "you are wrong", 0, { metadata: { reply_to: "ours-1" } })], ctx, isOurs })).toBe(false);
    expect(onlyAgentAnswers({ batch: [msg("5", "bot1.acp.local", "hello room", 0)], ctx, isOurs })).toBe(false);
    expect(onlyAgentAnswers({ batch: [], ctx, isOurs })).toBe(false);
  });
});
