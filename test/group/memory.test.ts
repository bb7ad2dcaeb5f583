// The group's memory (src/group/memory.ts): what we said in a group, kept once — written by the
// group client when a dispatch settles or our message comes back, read by the agent side.
import { describe, expect, it } from "vitest";
import { GroupMemory, rememberReply } from "../../src/group/memory.ts";
import { dedupKeyOf } from "../../src/monitor/dedup.ts";

const T0 = 1_700_000_000_000;
const echo = (msgId: string, content: string, at: number, metadata: Record<string, unknown> | null = null) => ({ msgId, content, timestamp: T0 + at, metadata });

describe("GroupMemory: a sent reply", () => {
  it("joins the reply memory and our recent replies under its key, and moves the last speak time; once per msg id", () => {
    const memory = new GroupMemory({ historySize: 10 });
    const key = dedupKeyOf("The build is green.");
    expect(memory.recordSent({ msgId: "90", timestamp: T0 + 1000, content: "The build is green.", key })).toBe(true);
    expect(memory.replies).toEqual({ hashes: [key.hash], texts: ["thebuildisgreen"] });
    expect(memory.ownReplies).toEqual([{ timestamp: T0 + 1000, text: "The build is green.", msgId: "90" }]);
    expect(memory.lastSelfSpeakAt).toBe(T0 + 1000);
    // The same msg id again (its echo came back first, say): nothing new to count, nothing twice.
    expect(memory.recordSent({ msgId: "90", timestamp: T0 + 1000, content: "The build is green.", key })).toBe(false);
    expect(memory.replies.hashes).toEqual([key.hash]);
    expect(memory.ownReplies).toHaveLength(1);
  });

  it("a line sent by other means (no key) counts for the last speak time but is no reply to compare against", () => {
    const memory = new GroupMemory({ historySize: 10 });
    expect(memory.recordSent({ msgId: "7", timestamp: T0, content: "hello" })).toBe(true);
    expect(memory.lastSelfSpeakAt).toBe(T0);
    expect(memory.replies).toEqual({ hashes: [], texts: [] });
    expect(memory.ownReplies).toEqual([]);
  });

  it("keeps the newest historySize replies; the last speak time never goes back", () => {
    const memory = new GroupMemory({ historySize: 2 });
    for (const [i, text] of ["one", "two", "three"].entries()) memory.recordSent({ msgId: String(i), timestamp: T0 + i * 1000, content: text, key: dedupKeyOf(text) });
    memory.recordSent({ msgId: "late", timestamp: T0 - 5000, content: "stamped earlier" });
    expect(memory.replies.texts).toEqual(["two", "three"]);
    expect(memory.ownReplies.map((r) => r.text)).toEqual(["two", "three"]);
    expect(memory.lastSelfSpeakAt).toBe(T0 + 2000);
  });
});

describe("GroupMemory: our message comes back from the group", () => {
  it("the echo of a recorded send was counted already; a message we never recorded is new (and found by findEcho)", () => {
    const memory = new GroupMemory({ historySize: 10 });
    memory.recordSent({ msgId: "90", timestamp: T0 + 1000, content: "hi all" });
    expect(memory.recordEcho(echo("90", "hi all", 1000))).toBe(false);
    expect(memory.recordEcho(echo("91", "from another process of ours", 4000))).toBe(true);
    expect(memory.lastSelfSpeakAt).toBe(T0 + 4000);
    expect(memory.own.hasId("91")).toBe(true);
    expect(memory.findEcho("from another process of ours", T0 + 3000)).toEqual({ msgId: "91", timestamp: T0 + 4000 });
    expect(memory.findEcho("from another process of ours", T0 + 5000)).toBeUndefined();
  });

  it("answered-through is the newest msg id our returning messages say they answered (reply_to when that is all they carry)", () => {
    const memory = new GroupMemory({ historySize: 10 });
    expect(memory.answeredThrough).toBeUndefined();
    memory.recordEcho(echo("20", "a", 0, { answered_through: "12" }));
    memory.recordEcho(echo("21", "b", 0, { answered_through: "9" }));
    expect(memory.answeredThrough).toBe(12);
    memory.recordEcho(echo("22", "c", 0, { reply_to: "15" }));
    expect(memory.answeredThrough).toBe(15);
  });

  it("restoring (the runtime): a message of ours read back rejoins the reply memory once; without it (a replay) it does not", () => {
    const restoring = new GroupMemory({ historySize: 10, restoreReplies: dedupKeyOf });
    restoring.recordEcho(echo("30", "The build is green.", 0));
    restoring.recordEcho(echo("30", "The build is green.", 0));
    restoring.recordEcho(echo("31", "the build is GREEN", 500));
    expect(restoring.replies.texts).toEqual(["thebuildisgreen"]);
    expect(restoring.ownReplies).toEqual([{ timestamp: T0, text: "The build is green.", msgId: "30" }]);
    expect(restoring.lastSelfSpeakAt).toBe(T0 + 500);

    const replaying = new GroupMemory({ historySize: 10 });
    replaying.recordEcho(echo("30", "The build is green.", 0));
    expect(replaying.replies).toEqual({ hashes: [], texts: [] });
    expect(replaying.ownReplies).toEqual([]);
    expect(replaying.lastSelfSpeakAt).toBe(T0);
  });
});

describe("GroupMemory: across a restart", () => {
  it("the snapshot restores the last speak time and the reply memory", () => {
    const a = new GroupMemory({ historySize: 10 });
    a.recordSent({ msgId: "1", timestamp: T0, content: "Sounds good.", key: dedupKeyOf("Sounds good.") });
    const saved = a.snapshot();
    expect(saved).toEqual({ lastSelfSpeakAt: T0, replyHashes: [dedupKeyOf("Sounds good.").hash], replyTexts: ["soundsgood"] });
    const b = new GroupMemory({ historySize: 10, restored: saved });
    expect(b.lastSelfSpeakAt).toBe(T0);
    expect(b.replies).toEqual({ hashes: saved.replyHashes, texts: saved.replyTexts });
  });
});

describe("rememberReply", () => {
  it("keeps the newest N; a reply remembered again moves to the end", () => {
    let m = { hashes: [] as readonly string[], texts: [] as readonly string[] };
    for (const t of ["a1", "a2", "a3", "a2"]) m = rememberReply(m, { hash: `h-${t}`, normalized: t }, 3);
    expect(m).toEqual({ hashes: ["h-a1", "h-a3", "h-a2"], texts: ["a1", "a3", "a2"] });
    m = rememberReply(m, { hash: "h-a4", normalized: "a4" }, 3);
    expect(m.texts).toEqual(["a3", "a2", "a4"]);
  });
});
