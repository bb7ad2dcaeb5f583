import { describe, expect, it } from "vitest";
import { delaySchema } from "../../src/config/schema.ts";
import { checkAfterDelay, chooseDelayMs, delayHintFor } from "../../src/monitor/delay.ts";

const settings = delaySchema.parse({});
const ok = { ok: true as const, ratio: 0.1, pool: "unaddressed" as const };

describe("chooseDelayMs", () => {
  it("maps reply types to hints", () => {
    expect([delayHintFor("reaction"), delayHintFor("short"), delayHintFor("normal"), delayHintFor("long")]).toEqual(["fast", "fast", "normal", "slow"]);
  });

  it.each([
    ["fast", 0, 2000],
    ["fast", 0.5, 4000],
    ["fast", 0.999999, 6000],
    ["normal", 0, 8000],
    ["normal", 0.25, 11000],
    ["slow", 0.5, 40000],
  ] as const)("%s with random %d → %d ms", (hint, random, ms) => {
    expect(chooseDelayMs({ settings, hint, mentioned: false, random })).toBe(ms);
  });

  it("does not delay a mention unless configured, nor anything when disabled", () => {
    expect(chooseDelayMs({ settings, hint: "slow", mentioned: true, random: 0.5 })).toBe(0);
    expect(chooseDelayMs({ settings: { ...settings, onMention: true }, hint: "fast", mentioned: true, random: 0.5 })).toBe(4000);
    expect(chooseDelayMs({ settings: { ...settings, enabled: false }, hint: "slow", mentioned: false, random: 0.5 })).toBe(0);
  });
});

describe("checkAfterDelay", () => {
  it("sends when nothing changed", () => {
    expect(checkAfterDelay({ closed: false, answeringMention: false, newerMention: false, budget: ok })).toEqual({ ok: true });
  });

  it("drops an unprompted reply when a newer mention arrived, but never the answer to a mention", () => {
    expect(checkAfterDelay({ closed: false, answeringMention: false, newerMention: true, budget: ok })).toEqual({ ok: false, reason: "newer-mention" });
    expect(checkAfterDelay({ closed: false, answeringMention: true, newerMention: true, budget: ok })).toEqual({ ok: true });
  });

  it("stops when closed or over budget", () => {
    expect(checkAfterDelay({ closed: true, answeringMention: true, newerMention: false, budget: ok })).toEqual({ ok: false, reason: "group-closed" });
    const over = { ok: false as const, reason: "over-budget" as const, ratio: 1, pool: "unaddressed" as const, window: "5m" as const, limit: "messages" as const, used: 2, max: 2, over: 1 };
    expect(checkAfterDelay({ closed: false, answeringMention: false, newerMention: false, budget: over })).toEqual({
      ok: false,
      reason: "over-budget",
      detail: "unaddressed:5m:messages 2/2 +1",
    });
  });
});
