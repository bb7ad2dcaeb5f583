import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ConversationStore } from "../../src/backends/conversation-store.ts";
import { estimateTokens } from "../../src/monitor/token-estimate.ts";
import { createConversationRegistry, type ConversationPersistence } from "../../src/backends/conversation-registry.ts";
import { createMemoryLogger } from "../../src/log.ts";

const SYSTEM = "You are alice.agentcp.io on the ACP network.";

function turn(store: ConversationStore, dispatch: number, userText: string, reply?: string, trigger: "normal" | "mention" = "normal") {
  const t = store.appendUser({ content: userText, dispatch, trigger, senders: ["bob.agentcp.io"], messageCount: 2 });
  if (reply !== undefined) store.appendAssistant({ turn: t, content: reply, dispatch, trigger, usage: { promptTokens: 100, completionTokens: 10, cachedTokens: 64 } });
  return t;
}

describe("ConversationStore (seed 002)", () => {
  it("keeps one system message first, consecutive user batches, tagged entries and reply usage", () => {
    const s = new ConversationStore(SYSTEM);
    turn(s, 1, "situation A\n\nbatch 1"); // the model stayed silent: no assistant entry
    turn(s, 2, "situation B\n\nbatch 2", "hi bob", "mention");

    expect(s.toChatMessages()).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: "situation A\n\nbatch 1" },
      { role: "user", content: "situation B\n\nbatch 2" },
      { role: "assistant", content: "hi bob" },
    ]);
    expect(s.filterByTag("dispatch", 2).map((e) => e.role)).toEqual(["user", "assistant"]);
    expect(s.filterByTag("trigger", "mention")).toHaveLength(2);
    expect(s.entries[3]).toMatchObject({ usage: { promptTokens: 100, completionTokens: 10, cachedTokens: 64 }, tags: { dispatch: 2, trigger: "mention" } });
  });

  it("rolls back a failed dispatch by turn, even when dispatch ids repeat after a restart", () => {
    const s = new ConversationStore(SYSTEM);
    turn(s, 1, "before restart", "reply");
    const t = turn(s, 1, "after restart, dispatch id 1 again");
    s.rollbackTo(t);
    expect(s.toChatMessages().map((m) => m.content)).toEqual([SYSTEM, "before restart", "reply"]);
  });

  it("a silent turn (stored NO_REPLY) is not counted as a reply in the summary", () => {
    const s = new ConversationStore(SYSTEM);
    const t1 = s.appendUser({ content: "u1", dispatch: 1, trigger: "normal", messageCount: 1 });
    s.appendAssistant({ turn: t1, content: "NO_REPLY", dispatch: 1, trigger: "normal", silent: true });
    turn(s, 2, "u2", "real reply");
    s.removeRange(1, 2);
    expect(s.entries[1]!.summary).toMatchObject({ turns: 2, replies: 1, recentReplies: ["real reply"] });
  });

  it("replaces a removed range by one summary that absorbs an earlier summary", () => {
    const s = new ConversationStore(SYSTEM);
    turn(s, 1, "u1", "first reply");
    turn(s, 2, "u2");
    turn(s, 3, "u3", "third reply", "mention");
    turn(s, 4, "u4", "fourth reply");
    s.removeRange(1, 2);
    expect(s.entries.map((e) => e.role)).toEqual(["system", "user", "user", "assistant", "user", "assistant"]);
    expect(s.entries[1]!.summary).toMatchObject({ fromTurn: 1, toTurn: 2, turns: 2, messages: 4, replies: 1, recentReplies: ["first reply"] });

    s.removeRange(3, 3);
    expect(s.entries.map((e) => e.content.slice(0, 2))).toEqual([SYSTEM.slice(0, 2), "[E", "u4", "fo"]);
    expect(s.entries[1]!.summary).toEqual({
      fromTurn: 1,
      toTurn: 3,
      turns: 3,
      messages: 6,
      senders: ["bob.agentcp.io"],
      triggers: { normal: 2, mention: 1 },
      replies: 2,
      recentReplies: ["first reply", "third reply"],
    });
    expect(s.entries[1]!.content).toBe(
      "[Earlier in this group, compressed: 3 dispatches, 6 messages from bob.agentcp.io (2 normal, 1 mention). You replied 2 times.]\n" +
        "Your last replies then: “first reply” / “third reply”",
    );
    expect(s.entries[1]!.tags).toEqual({ summary: "1-3" });
  });

  it("compacts past the token limit down to 60% of it, folding whole turns and never the newest", () => {
    const s = new ConversationStore(SYSTEM);
    const big = "word ".repeat(200); // 1000 chars ≈ 250 tokens
    for (let d = 1; d <= 8; d++) turn(s, d, `${d}: ${big}`, `reply ${d}`);
    expect(s.compact(10_000)).toBe(0); // under the limit: untouched

    const before = s.estimatedTokens();
    expect(before).toBeGreaterThan(2000);
    const folded = s.compact(2000);
    expect(folded).toBeGreaterThan(0);
    expect(s.estimatedTokens()).toBeLessThanOrEqual(1200);
    const e = s.entries;
    expect(e[0]).toMatchObject({ role: "system", content: SYSTEM });
    expect(e[1]!.summary?.fromTurn).toBe(1);
    // Whole turns only: after the summary comes a user entry, and the last turn is intact.
    expect(e[2]!.role).toBe("user");
    expect(e.at(-2)!.content.startsWith("8: ")).toBe(true);
    expect(e.at(-1)!.content).toBe("reply 8");
  });

  it("keeps its invariants under any sequence of turns and compactions (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ chars: fc.integer({ min: 0, max: 3000 }), reply: fc.option(fc.string({ unit: "grapheme", maxLength: 200 })), cjk: fc.boolean() }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.integer({ min: 500, max: 4000 }),
        (turns, limit) => {
          const s = new ConversationStore(SYSTEM);
          let d = 0;
          for (const t of turns) {
            d += 1;
            const text = (t.cjk ? "群" : "a").repeat(t.chars);
            const mark = s.appendUser({ content: text, dispatch: d, trigger: "normal", senders: ["x"], messageCount: 1 });
            s.compact(limit);
            // What is sent to the model is over the limit only if the newest turn alone is (plus
            // the small fixed parts). The reply may push it over; the next dispatch compacts.
            const sentOthers = s.entries.filter((x) => x.turn !== mark && !x.summary && x.role === "user");
            if (s.estimatedTokens() > limit) expect(sentOthers).toHaveLength(0);
            if (t.reply !== null) s.appendAssistant({ turn: mark, content: t.reply, dispatch: d, trigger: "normal" });
            const e = s.entries;
            expect(e[0]).toEqual({ role: "system", content: SYSTEM, turn: 0, tags: {} });
            expect(e.filter((x) => x.role === "system")).toHaveLength(1);
            expect(e.slice(2).some((x) => x.summary)).toBe(false); // the summary, if any, sits at [1]
            for (let i = 2; i < e.length; i++) expect(e[i]!.turn).toBeGreaterThanOrEqual(e[i - 1]!.turn);
            // The newest turn's input is always there, verbatim.
            expect(e.some((x) => x.turn === mark && x.role === "user" && x.content === text)).toBe(true);
          }
          // Every dispatch is either still present or counted in the summary.
          const summary = s.entries[1]?.summary;
          const present = new Set(s.entries.filter((x) => x.role === "user" && !x.summary).map((x) => x.turn));
          expect(present.size + (summary?.turns ?? 0)).toBe(turns.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("round-trips through JSON and rejects data that is not a conversation", () => {
    const s = new ConversationStore(SYSTEM);
    turn(s, 1, "u1", "r1");
    turn(s, 2, "u2");
    s.removeRange(1, 1);
    const copy = ConversationStore.fromJSON(JSON.parse(JSON.stringify(s.toJSON())));
    expect(copy.toJSON()).toEqual(s.toJSON());
    expect(copy.appendUser({ content: "u3", dispatch: 3, trigger: "normal" })).toBe(3);

    expect(() => ConversationStore.fromJSON({ version: 1, nextTurn: 1, entries: [] })).toThrow();
    expect(() =>
      ConversationStore.fromJSON({ version: 1, nextTurn: 2, entries: [{ role: "user", content: "x", turn: 1, tags: {} }] }),
    ).toThrow(/system/);
  });

  it("measures its history with the budget's token estimate (4 per entry on top)", () => {
    // Lines on which the two estimates of before disagreed (emoji, Cyrillic, a wide arrow).
    const lines = ["Привет, мир! как дела?", "ok 👋🏽 👋🏽", "→ 你好世界 ←", "plain latin text here"];
    const s = new ConversationStore(SYSTEM);
    turn(s, 1, lines[0]!, lines[1]!);
    turn(s, 2, lines[2]!, lines[3]!);
    const expected = [SYSTEM, ...lines].reduce((sum, text) => sum + estimateTokens(text) + 4, 0);
    expect(s.estimatedTokens()).toBe(expected);
  });
});

describe("createConversationRegistry", () => {
  function memoryPersistence(): ConversationPersistence & { data: Map<string, unknown> } {
    const data = new Map<string, unknown>();
    return {
      data,
      loadConversation: (i, g) => data.get(`${i}|${g}`),
      saveConversation: (i, g, d) => void data.set(`${i}|${g}`, JSON.parse(JSON.stringify(d))),
    };
  }

  it("loads from persistence on first use and saves through it", () => {
    const persistence = memoryPersistence();
    const a = createConversationRegistry({ historyTokenLimit: 8000, persistence });
    turn(a.get("alice.agentcp.io", "g1", SYSTEM), 1, "u1", "r1");
    a.save("alice.agentcp.io", "g1");

    const b = createConversationRegistry({ historyTokenLimit: 8000, persistence });
    expect(b.peek("alice.agentcp.io", "g1")).toBeUndefined();
    expect(b.get("alice.agentcp.io", "g1", SYSTEM).toChatMessages().map((m) => m.content)).toEqual([SYSTEM, "u1", "r1"]);
    expect(b.get("alice.agentcp.io", "g2", SYSTEM).entries).toHaveLength(1);
  });

  it("restarts the conversation with a new system message when the stable prefix changed, keeping the turns", () => {
    const persistence = memoryPersistence();
    const logger = createMemoryLogger();
    const r = createConversationRegistry({ historyTokenLimit: 8000, persistence, logger });
    turn(r.get("alice.agentcp.io", "g1", SYSTEM), 1, "u1", "r1");
    const next = r.get("alice.agentcp.io", "g1", "new persona");
    expect(next.toChatMessages().map((m) => m.content)).toEqual(["new persona", "u1", "r1"]);
    expect(logger.entries.map((e) => e.event)).toEqual(["conversation.system-changed"]);
  });

  it("logs and starts fresh on invalid stored data or persistence errors, never throws", () => {
    const logger = createMemoryLogger();
    const r = createConversationRegistry({
      historyTokenLimit: 8000,
      logger,
      persistence: {
        loadConversation: (_i, g) => {
          if (g === "broken") throw new Error("disk on fire");
          return { version: 1, nextTurn: 1, entries: "nope" };
        },
        saveConversation: () => {
          throw new Error("disk full");
        },
      },
    });
    expect(r.get("a.agentcp.io", "g1", SYSTEM).entries).toHaveLength(1);
    expect(r.get("a.agentcp.io", "broken", SYSTEM).entries).toHaveLength(1);
    r.saveAll();
    expect(logger.entries.map((e) => e.event)).toEqual([
      "conversation.invalid",
      "conversation.load-failed",
      "conversation.save-failed",
      "conversation.save-failed",
    ]);
  });
});
