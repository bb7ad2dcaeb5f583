// rankSenders (chart-layout.ts) counts the senders a bucket at a time, on disk for a log walked
// from its file: the rows are those of ranking every sender in memory (the page before).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rankSenders, SENDER_ROWS } from "../../src/report/chart-layout.ts";

/** The model: every sender ranked in memory (most lines first, ties by name), the persona's best spelling first. */
function model(senders: readonly string[], isPersona: (s: string) => boolean) {
  const counts = new Map<string, number>();
  for (const s of senders) counts.set(s, (counts.get(s) ?? 0) + 1);
  const ranked = [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)! || (a < b ? -1 : 1));
  const own = ranked.find(isPersona);
  const rowSenders = [...(own ? [own] : []), ...ranked.filter((s) => s !== own)].slice(0, SENDER_ROWS);
  return { distinct: ranked.length, own, rowSenders, others: ranked.length > rowSenders.length };
}

describe("rankSenders", () => {
  it("property: the persona's row, the busiest senders' rows and the others are those of ranking every sender", () => {
    // Enough names to pass the row count, the persona in three spellings, a few very busy ones.
    const names = [...Array.from({ length: SENDER_ROWS + 6 }, (_, i) => `s${i}`), "Bot", "bot", "BOT.acp.local", "ann", "Ann"];
    const isPersona = (s: string) => s.toLowerCase() === "bot" || s.toLowerCase() === "bot.acp.local";
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...names), { minLength: 0, maxLength: 300, size: "max" }), fc.boolean(), (senders, spill) => {
        const got = rankSenders(senders, { total: senders.length, spill, isPersona });
        const { rowOf, ...rows } = got;
        expect(rows).toEqual(model(senders, isPersona));
        expect([...rowOf]).toEqual(got.rowSenders.map((s, i) => [s, i]));
      }),
      { numRuns: 300 },
    );
  });
});
