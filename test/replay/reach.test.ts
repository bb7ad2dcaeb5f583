// Reach of addressed talk on a real chat: the bundled #ubuntu log with its human annotations of
// who each line is meant for, replayed with DEFAULT settings on the simulated clock for each of
// the three most addressed personas. The model is the deterministic stand-in (`mention`).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { parseLog } from "../../src/replay/log.ts";
import { runReplay, type ReplayReport } from "../../src/replay/replay.ts";

const LOG = fileURLToPath(new URL("../fixtures/irc-dev/ubuntu-2010-08-17.jsonl", import.meta.url));
const PERSONAS = [
  { persona: "jacob_", aliases: ["jacob"] },
  { persona: "yashi-", aliases: [] },
  { persona: "guest__", aliases: [] },
] as const;

describe("reach of addressed lines on the #ubuntu dev log (default settings, --responder mention)", () => {
  const reports = new Map<string, ReplayReport>();
  beforeAll(async () => {
    const { lines } = parseLog(readFileSync(LOG, "utf8"));
    for (const p of PERSONAS) {
      reports.set(p.persona, await runReplay(lines, { persona: p.persona, aliases: p.aliases, settings: DEFAULT_GROUP_SETTINGS, responder: "mention" }));
    }
  }, 60_000);

  it.each(PERSONAS.map((p) => p.persona))("%s: ≥ 95% of the lines meant for it reach a model call, p95 wait ≤ 10 s, ≤ 9 calls per 100 messages", (persona) => {
    const r = reports.get(persona)!;
    const a = r.addressed!;
    expect(a.gold).toBeGreaterThanOrEqual(30);
    expect(a.reachRate).toBeGreaterThanOrEqual(0.95);
    expect(a.waitP95Ms).toBeLessThanOrEqual(10_000);
    // ≤ 0.09: issue 28's target for model calls per message (it was 0.08 before the room's
    // reaction to our answers got its look on the addressed allowance: jacob_ 0.073 → 0.083, its
    // reach 48 → 50 of 50).
    expect(r.summary.modelCalls / r.summary.messages).toBeLessThanOrEqual(0.09);
  });

  it("pooled over the three, the mention-or-engaged flags have precision ≥ 0.85 at recall ≥ 0.80", () => {
    let flagged = 0;
    let flaggedGold = 0;
    let gold = 0;
    for (const r of reports.values()) {
      for (const m of r.messages) {
        if (m.directed === null) continue;
        const f = m.isMention || m.engaged;
        if (f) flagged++;
        if (m.directed) {
          gold++;
          if (f) flaggedGold++;
        }
      }
    }
    expect(gold).toBe(122);
    expect(flaggedGold / flagged).toBeGreaterThanOrEqual(0.85);
    expect(flaggedGold / gold).toBeGreaterThanOrEqual(0.8);
  });

  it("says why a line was or was not taken as ours", () => {
    const r = reports.get("jacob_")!;
    const whys = new Set(r.messages.map((m) => (m.why === null ? "plain" : m.why.replace(/:.*/, ""))));
    for (const why of ["plain", "mention", "engaged", "addressed-other"]) expect(whys).toContain(why);
    // An engaged speaker's line that opens by addressing someone else is not ours, and says so.
    const other = r.messages.find((m) => m.why?.startsWith("addressed-other:"));
    expect(other).toMatchObject({ isMention: false, engaged: false });
  });
});

describe("a bot's answer to the persona's own command, on the #ubuntu 2011-11-13 log", () => {
  it("apwbdjp's `!sound | puff`: ubottu's `puff: …` reaches a model call as answers-our-command; apwbdjp reaches ≥ 90% of its lines", async () => {
    const log = fileURLToPath(new URL("../fixtures/irc-dev/ubuntu-2011-11-13.jsonl", import.meta.url));
    const { lines } = parseLog(readFileSync(log, "utf8"));
    const r = await runReplay(lines, { persona: "apwbdjp", settings: DEFAULT_GROUP_SETTINGS, responder: "mention" });
    // 1090 apwbdjp: "!sound | puff"   1091 ubottu: "puff: If you're having problems with sound, …"
    expect(r.messages.find((m) => m.id === "ubuntu-2011-11-13:1091")).toMatchObject({ why: "answers-our-command", reached: true, directed: true });
    expect(r.addressed!.gold).toBe(25);
    expect(r.addressed!.reachRate).toBeGreaterThanOrEqual(0.9);
  }, 60_000);
});
