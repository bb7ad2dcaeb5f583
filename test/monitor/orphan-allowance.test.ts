// The orphan allowance widened by the channel's pace (src/monitor/budget-windows.ts
// paceScaledOrphanAllowance): each window allows at least the agents' share (orphans.maxAgentShare,
// 0.05) of the lines others wrote in it. Times are server times, written out from T.
import { describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { checkBudget, paceScaledOrphanAllowance, type BudgetEvent } from "../../src/monitor/budget-windows.ts";
import { MonitorState } from "../../src/monitor/monitor-state.ts";

const T = Date.UTC(2026, 0, 5, 18, 0, 0);
const H = 3600_000;
const budget = DEFAULT_GROUP_SETTINGS.budget;
const share = DEFAULT_GROUP_SETTINGS.orphans.maxAgentShare;

/** A room whose others write one line every `everyMs` from T−3h to T. */
function roomAt(everyMs: number): MonitorState {
  const state = new MonitorState(undefined);
  const times: number[] = [];
  for (let t = T - 3 * H + everyMs; t <= T; t += everyMs) times.push(t);
  state.countLines(times);
  return state;
}

/** Twelve orphan calls, one every 15 min from T−2h45m to T−0 (the default 3 h allowance, full). */
const twelveCalls: BudgetEvent[] = Array.from({ length: 12 }, (_, i) => [T - 2.75 * H + i * 15 * 60_000, 3000, 2]);

describe("the orphan allowance follows the channel's pace", () => {
  it("a busy channel (a line every 12 s: 900 lines in 3 h) → the 3 h allowance is 5 % of them, 45 calls; the 5 min and 24 h windows keep their configured 2 and 48", () => {
    // T−3h … T: 900 lines · from T−5m (its minute counts whole, so the line at T−5m too): 26 lines
    // → floor(1.3) = 1 < 2 · 24 h: 900 → 45 < 48
    const state = roomAt(12_000);
    expect([state.linesIn(5 * 60_000, T), state.linesIn(3 * H, T), state.linesIn(24 * H, T)]).toEqual([26, 900, 900]);
    const orphan = paceScaledOrphanAllowance(budget, share, (ms) => state.linesIn(ms, T)).orphan;
    expect(orphan).toEqual({ "5m": budget.orphan["5m"], "3h": { messages: 45, tokens: 45 * 12_000 }, "24h": budget.orphan["24h"] });
    // T: twelve calls in the last 3 h — a thirteenth may start on the busy channel.
    expect(checkBudget({ events: twelveCalls, settings: { ...budget, orphan }, now: T, pool: "orphan" }).ok).toBe(true);
  });

  it("a slow channel (a line every 2 min: 90 lines in 3 h) → the configured allowance: the thirteenth call in 3 h is over budget", () => {
    const state = roomAt(120_000);
    const scaled = paceScaledOrphanAllowance(budget, share, (ms) => state.linesIn(ms, T));
    expect(scaled.orphan).toEqual(budget.orphan);
    expect(checkBudget({ events: twelveCalls, settings: scaled, now: T, pool: "orphan" })).toMatchObject({ ok: false, window: "3h", used: 12, max: 12 });
  });

  it("only the orphan pool widens; an orphan allowance of 0 (turned off) stays 0", () => {
    const state = roomAt(1000);
    const off = { ...budget, orphan: { ...budget.orphan, "3h": { messages: 0, tokens: 0 } } };
    const scaled = paceScaledOrphanAllowance(off, share, (ms) => state.linesIn(ms, T));
    expect(scaled.orphan["3h"]).toEqual({ messages: 0, tokens: 0 });
    expect([scaled.addressed, scaled.unaddressed]).toEqual([budget.addressed, budget.unaddressed]);
  });

  it("lines older than 24 h are forgotten: at T+25h the 24 h window counts only what came after T+1h", () => {
    const state = roomAt(12_000);
    state.countLines([T + 25 * H]);
    expect(state.linesIn(24 * H, T + 25 * H)).toBe(1);
  });
});
