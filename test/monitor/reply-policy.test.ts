import { describe, expect, it } from "vitest";
import {
  capChars,
  decideReplyType,
  firstEmoji,
  firstSentences,
  minReplyType,
  splitSentences,
  stripMarkdown,
  toReaction,
  trimReply,
} from "../../src/monitor/reply-policy.ts";

const policy = { maxCharsPerMessage: 500, noMarkdown: true, maxReactionChars: 8, shortSentences: 2, normalSentences: 5, tailMark: "…" };

describe("decideReplyType (seed §5.2)", () => {
  const base = { budgetRatio: 0, mentioned: false, trigger: "normal" as const, allowLong: false };
  it.each([
    ["HEATED, unaddressed", { ...base, vitality: "HEATED" as const }, "reaction", "heated"],
    ["HEATED, mentioned", { ...base, vitality: "HEATED" as const, mentioned: true, trigger: "mention" as const }, "short", "heated"],
    ["HEATED, engaged follow-up", { ...base, vitality: "HEATED" as const, trigger: "engaged" as const }, "short", "heated"],
    ["ACTIVE, budget at 0.8", { ...base, vitality: "ACTIVE" as const, budgetRatio: 0.8 }, "reaction", "budget-high"],
    ["COOLING, budget at 0.9, mentioned", { ...base, vitality: "COOLING" as const, budgetRatio: 0.9, mentioned: true }, "short", "budget-high"],
    ["ACTIVE, budget 0.79", { ...base, vitality: "ACTIVE" as const, budgetRatio: 0.79 }, "normal", "active"],
    ["DORMANT", { ...base, vitality: "DORMANT" as const }, "short", "calm"],
    ["COOLING", { ...base, vitality: "COOLING" as const }, "short", "calm"],
    ["ACTIVE, allowLong, mentioned, budget 0.4", { ...base, vitality: "ACTIVE" as const, allowLong: true, mentioned: true, budgetRatio: 0.4 }, "long", "long-allowed"],
    ["COOLING, allowLong, mentioned", { ...base, vitality: "COOLING" as const, allowLong: true, mentioned: true }, "long", "long-allowed"],
    ["ACTIVE, allowLong, mentioned, budget 0.5", { ...base, vitality: "ACTIVE" as const, allowLong: true, mentioned: true, budgetRatio: 0.5 }, "normal", "active"],
    ["ACTIVE, allowLong, not mentioned", { ...base, vitality: "ACTIVE" as const, allowLong: true }, "normal", "active"],
    ["HEATED, allowLong, mentioned", { ...base, vitality: "HEATED" as const, allowLong: true, mentioned: true }, "short", "heated"],
  ])("%s → %s", (_name, input, replyType, reason) => {
    expect(decideReplyType(input)).toEqual({ replyType, reason });
  });

  it("minReplyType keeps the smaller", () => {
    expect(minReplyType("normal", "reaction")).toBe("reaction");
    expect(minReplyType("short", "long")).toBe("short");
  });
});

describe("sentences", () => {
  it("splits Chinese, Latin and mixed text", () => {
    expect(splitSentences("你好。今天天气不错！你觉得呢？")).toEqual(["你好。", "今天天气不错！", "你觉得呢？"]);
    expect(splitSentences("Hello there. How are you? Fine!")).toEqual(["Hello there. ", "How are you? ", "Fine!"]);
    expect(splitSentences("Mixed 文本。Then English. 再来一句！")).toEqual(["Mixed 文本。", "Then English. ", "再来一句！"]);
  });

  it("firstSentences keeps the first n", () => {
    expect(firstSentences("A. B. C.", 2)).toBe("A. B.");
    expect(firstSentences("好的！这个问题很有意思。我们明天再说吧。", 2)).toBe("好的！这个问题很有意思。");
    expect(firstSentences("Only one", 2)).toBe("Only one");
  });
});

describe("reaction trimming", () => {
  it("keeps whole graphemes: ZWJ sequences, flags, skin tones, keycaps", () => {
    expect(firstEmoji("ok 👨‍👩‍👧‍👦 family")).toBe("👨‍👩‍👧‍👦");
    expect(toReaction("🇯🇵 is where I would go this summer", 8)).toBe("🇯🇵");
    expect(toReaction("👍🏽 sounds great to me honestly", 8)).toBe("👍🏽");
    expect(toReaction("1️⃣ first point is the one that matters", 8)).toBe("1️⃣");
    expect(toReaction("Good point, 🏴󠁧󠁢󠁳󠁣󠁴󠁿 agrees with you", 8)).toBe("🏴󠁧󠁢󠁳󠁣󠁴󠁿");
  });

  it("keeps text that is already short enough", () => {
    expect(toReaction("哈哈哈", 8)).toBe("哈哈哈");
    expect(toReaction("👍👍👍", 8)).toBe("👍👍👍");
    expect(toReaction("lol same", 8)).toBe("lol same");
  });

  it("falls back to the first sentence, clause or word that fits", () => {
    expect(toReaction("Nice! That is a really good approach.", 8)).toBe("Nice!");
    expect(toReaction("好的！这个问题很有意思。", 8)).toBe("好的！");
    expect(toReaction("确实如此，我也是这么想的呢朋友", 8)).toBe("确实如此");
    expect(toReaction("Agreed, and the second part is right too", 8)).toBe("Agreed");
    expect(toReaction("Great idea and a well argued one", 8)).toBe("Great");
  });

  it("returns empty when nothing short fits", () => {
    expect(toReaction("Congratulations everyone on shipping this release", 8)).toBe("");
  });
});

describe("trimReply", () => {
  it("short keeps 1–2 sentences; normal up to 5; long keeps all", () => {
    const text = "One. Two. Three. Four. Five. Six. Seven.";
    expect(trimReply(text, "short", policy)).toBe("One. Two.");
    expect(trimReply(text, "normal", policy)).toBe("One. Two. Three. Four. Five.");
    expect(trimReply(text, "long", policy)).toBe(text);
  });

  it("strips Markdown when no_markdown, keeps it otherwise", () => {
    const md = "## Plan\n**Use** `tokio` — see [docs](https://tokio.rs).";
    expect(trimReply(md, "long", policy)).toBe("Plan\nUse tokio — see docs (https://tokio.rs).");
    expect(trimReply(md, "long", { ...policy, noMarkdown: false })).toBe(md);
  });

  it("cuts over max chars at a sentence end with the tail mark", () => {
    const text = "One sentence here. Two sentence here. Three sentence here.";
    expect(trimReply(text, "long", { ...policy, maxCharsPerMessage: 40 })).toBe("One sentence here. Two sentence here.…");
  });
});

describe("capChars", () => {
  it("returns text that fits unchanged", () => {
    expect(capChars("short", 10, "…")).toBe("short");
  });

  it("counts graphemes, so emoji count once", () => {
    expect(capChars("👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦", 3, "…")).toBe("👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦");
  });

  it("cuts one long sentence at a word boundary, or mid-word when no boundary is near", () => {
    expect(capChars("the quick brown fox jumps over the lazy dog again", 20, "…")).toBe("the quick brown fox…");
    expect(capChars("Averyveryverylongwordwithoutanybreaks and more", 30, "…")).toBe("Averyveryverylongwordwithouta…");
  });

  it("cuts Chinese at a sentence end", () => {
    expect(capChars("第一句话。第二句话比较长一点。第三句。", 12, "…")).toBe("第一句话。…");
  });
});

describe("a Markdown list becomes one line of text", () => {
  it("bullets and numbers, introduced by a colon, joined with `; `", () => {
    expect(stripMarkdown("Three options:\n- restart the service\n- roll back\n- wait")).toBe("Three options: restart the service; roll back; wait");
    expect(stripMarkdown("1. Check the logs.\n2. Restart it.\n3) Tell Bob")).toBe("Check the logs. Restart it. Tell Bob");
    expect(stripMarkdown("* **fast**\n\n* cheap\n\nPick one.")).toBe("fast; cheap\n\nPick one.");
  });

  it("in a reply: one line that the reply type then trims by sentences", () => {
    const reply = "Sure, here is the plan:\n\n- **Back up** the database\n- Run `migrate.sh`\n- Check https://status.example.com/now\n\nShould take 10 min.";
    expect(trimReply(reply, "long", policy)).toBe(
      "Sure, here is the plan: Back up the database; Run migrate.sh; Check https://status.example.com/now\n\nShould take 10 min.",
    );
    // Two sentences: the list line and the closing one.
    expect(trimReply(reply, "short", policy)).toBe(trimReply(reply, "long", policy));
  });

  it("a number or dash inside a line is not a list", () => {
    expect(stripMarkdown("We shipped 2. Then - as planned - we rested.")).toBe("We shipped 2. Then - as planned - we rested.");
  });
});

describe("stripMarkdown", () => {
  it("removes syntax and keeps words", () => {
    expect(stripMarkdown("# Title\n- item one\n* item two\n> quoted\n---\n~~old~~ *new* _it_ snake_case_name 2*3*4")).toBe(
      // Changed: list items are joined into one line (a list is not a multi-line post).
      "Title\nitem one; item two\nquoted\n\nold new it snake_case_name 2*3*4",
    );
    expect(stripMarkdown("```ts\nconst x = 1;\n```")).toBe("const x = 1;");
    expect(stripMarkdown("![logo](a.png) [https://x.io](https://x.io)")).toBe("logo https://x.io");
  });
});

describe("trimReply: emoji, Chinese and mixed text", () => {
  it.each([
    ["ZWJ sequence with a skin tone", "👩🏽‍💻 I'm on it, will report back soon.", "👩🏽‍💻"],
    ["ZWJ flag", "🏳️‍🌈🏳️‍⚧️ both flags, what a great parade this year", "🏳️‍🌈"],
    ["keycap", "#️⃣ is the keycap I use when ranking things", "#️⃣"],
    ["Chinese", "好主意！我们明天就开始做吧。还有别的问题吗？", "好主意！"],
    ["mixed, emoji inside", "Sounds good 👍 我同意。Let's ship it! 明天见。", "👍"],
    ["already short, emoji intact", "👨‍👩‍👧‍👦👨‍👩‍👧‍👦 一家人！", "👨‍👩‍👧‍👦👨‍👩‍👧‍👦 一家人！"],
  ])("reaction, %s", (_name, text, expected) => {
    expect(trimReply(text, "reaction", policy)).toBe(expected);
  });

  it("short keeps two sentences of Chinese and of mixed text", () => {
    expect(trimReply("好主意！我们明天就开始做吧。还有别的问题吗？我觉得没有了。", "short", policy)).toBe("好主意！我们明天就开始做吧。");
    expect(trimReply("Sounds good 👍 我同意。Let's ship it! 明天见。", "short", policy)).toBe("Sounds good 👍 我同意。Let's ship it!");
  });

  it("the character cap never splits a flag, a skin-toned emoji or a keycap", () => {
    expect(capChars("🇯🇵".repeat(30), 20, "…")).toBe(`${"🇯🇵".repeat(19)}…`);
    expect(capChars("👍🏽".repeat(30), 20, "…")).toBe(`${"👍🏽".repeat(19)}…`);
    expect(capChars("1️⃣2️⃣3️⃣".repeat(10), 10, "…")).toBe("1️⃣2️⃣3️⃣1️⃣2️⃣3️⃣1️⃣2️⃣3️⃣…");
  });

  it("a short first sentence does not throw away the rest of a long answer", () => {
    const text = `Hi. ${"This sentence just goes on and on ".repeat(20)}end.`;
    expect(trimReply(text, "long", { ...policy, maxCharsPerMessage: 60 })).toBe("Hi. This sentence just goes on and on This sentence just…");
    const zh = `一。${"这是一个非常长的句子没有任何标点符号".repeat(10)}。`;
    expect(trimReply(zh, "long", { ...policy, maxCharsPerMessage: 30 })).toBe("一。这是一个非常长的句子没有任何标点符号这是一个非常长的…");
  });
});

describe("stripMarkdown keeps legitimate text", () => {
  it.each([
    ["arithmetic", "2*3*4 = 24, 3 * 4 = 12 and 2**10 = 1024", "2*3*4 = 24, 3 * 4 = 12 and 2**10 = 1024"],
    ["identifiers", "snake_case_name, MY_CONST, foo__bar__baz", "snake_case_name, MY_CONST, foo__bar__baz"],
    ["dunder names", "use __init__.py and the __dict__ attribute", "use __init__.py and the __dict__ attribute"],
    ["C# and C++", "C# > Java, C++ and F#", "C# > Java, C++ and F#"],
    ["URLs with underscores and stars", "see https://x.com/_foo_/a_b_c and https://x.com/*x*/y.", "see https://x.com/_foo_/a_b_c and https://x.com/*x*/y."],
    ["autolinks", "see <https://x.com/__init__.py>", "see https://x.com/__init__.py"],
    ["link targets", "see [the docs](https://x.io/a_b_c) now", "see the docs (https://x.io/a_b_c) now"],
    ["code spans", "call `*args`, `__init__` and `a_b_`", "call *args, __init__ and a_b_"],
    ["single-line triple backticks", "`a` and ``b`` and ```c```", "a and b and c"],
    ["escapes and Windows paths", "C:\\_tmp_\\file and 2 \\* 3", "C:\\_tmp_\\file and 2 \\* 3"],
    ["emails", "mail first_last@example.com", "mail first_last@example.com"],
    ["hashtags", "#1 fan of #rust", "#1 fan of #rust"],
  ])("%s", (_name, text, expected) => {
    expect(stripMarkdown(text)).toBe(expected);
  });

  it("still strips real emphasis, also around URLs and in Chinese", () => {
    expect(stripMarkdown("**Note:** *see https://x.com/_a_* and ~~old~~")).toBe("Note: see https://x.com/_a_ and old");
    expect(stripMarkdown("这是**重要**的，__注意__")).toBe("这是重要的，注意");
    expect(stripMarkdown("```py\nprint(*a)\n```\nDone.")).toBe("print(*a)\nDone.");
  });

  it("ignores private-use placeholders smuggled into the reply", () => {
    expect(stripMarkdown("\uE0000\uE001 `x`")).toBe("0 x");
  });
});
