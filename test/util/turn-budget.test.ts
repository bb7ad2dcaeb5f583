// The turn budget (src/util/turn-budget.ts): work runs at once while the turn has used less than
// its budget and nothing waits, else in a later turn, in order, a budget's worth a turn. Fake
// timers own the immediates: what the test does directly is a turn's timers and I/O, and each
// `checkPhase()` runs the immediates armed before it (those armed meanwhile wait for the next
// turn's, as Node's do). The clock is the test's own; a piece advances it by what it costs.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { createTurnBudget, TURN_BUDGET_MS } from "../../src/util/turn-budget.ts";

beforeEach(() => vi.useFakeTimers({ now: 0 }));
afterEach(() => vi.useRealTimers());

const checkPhase = () => vi.runOnlyPendingTimers();

function budgetOf(budgetMs: number) {
  let t = 0;
  const log: string[] = [];
  const turns = createTurnBudget({ budgetMs, now: () => t });
  /** A piece named `name` that costs `ms` of the clock. */
  const piece = (name: string, ms: number) => () => {
    log.push(`T+${t} ${name}`);
    t += ms;
  };
  return { turns, log, piece, advance: (ms: number) => (t += ms) };
}

describe("a turn budget", () => {
  it("the default: 10 ms a turn", () => {
    expect(TURN_BUDGET_MS).toBe(10);
  });

  it("runs pieces at once until the turn used its budget; the rest run a turn later, a budget's worth", () => {
    const { turns, log, piece } = budgetOf(10);
    // Turn 1, its I/O: five answers' follow-ups of 4 ms each.
    for (const name of ["p1", "p2", "p3", "p4", "p5"]) turns.run(piece(name, 4));
    // p3 starts at T+8, inside the budget; p4 would start at T+12: it waits.
    expect(log).toEqual(["T+0 p1", "T+4 p2", "T+8 p3"]);
    expect(turns.waiting).toBe(2);
    // Turn 1's check phase: the turn ends; nothing runs in it.
    checkPhase();
    expect(log).toEqual(["T+0 p1", "T+4 p2", "T+8 p3"]);
    // Turn 2: p4 and p5 run, in order.
    checkPhase();
    expect(log).toEqual(["T+0 p1", "T+4 p2", "T+8 p3", "T+12 p4", "T+16 p5"]);
    expect(turns.waiting).toBe(0);
    // Turn 3 ends turn 2's budget; nothing is armed after it.
    checkPhase();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a piece given while others wait runs after them, even in a fresh turn", () => {
    const { turns, log, piece } = budgetOf(10);
    turns.run(piece("a", 12));
    turns.run(piece("b", 1));
    expect(log).toEqual(["T+0 a"]);
    checkPhase();
    // Turn 2's I/O, before its check phase: c comes while b waits.
    turns.run(piece("c", 1));
    expect(log).toEqual(["T+0 a"]);
    checkPhase();
    expect(log).toEqual(["T+0 a", "T+12 b", "T+13 c"]);
  });

  it("work that waits always moves on: one piece a turn at least, even with no budget at all", () => {
    const { turns, log, piece } = budgetOf(0);
    turns.run(piece("a", 1));
    turns.run(piece("b", 1));
    turns.run(piece("c", 1));
    expect(log).toEqual(["T+0 a"]);
    checkPhase();
    checkPhase();
    expect(log).toEqual(["T+0 a", "T+1 b"]);
    checkPhase();
    expect(log).toEqual(["T+0 a", "T+1 b", "T+2 c"]);
  });

  it("a piece taken back while it waits never runs; nothing is left armed once the turn is over", () => {
    const { turns, log, piece } = budgetOf(10);
    turns.run(piece("a", 10));
    const takeBack = turns.run(piece("b", 1));
    turns.run(piece("c", 1));
    takeBack();
    expect(turns.waiting).toBe(1);
    checkPhase();
    checkPhase();
    checkPhase();
    expect(log).toEqual(["T+0 a", "T+10 c"]);
    expect(vi.getTimerCount()).toBe(0);
    // Taking back a piece that ran does nothing.
    const ran = turns.run(piece("d", 1));
    ran();
    expect(log).toEqual(["T+0 a", "T+10 c", "T+11 d"]);
  });

  it("property: every piece runs once, in the order given, and a turn starts no piece past its budget but the first of what waited", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        // Per turn: the pieces its I/O gives (their costs).
        fc.array(fc.array(fc.integer({ min: 0, max: 25 }), { maxLength: 8 }), { minLength: 1, maxLength: 12 }),
        (budgetMs, perTurn) => {
          vi.clearAllTimers();
          let t = 0;
          const turns = createTurnBudget({ budgetMs, now: () => t });
          const ran: Array<{ id: number; turn: number; at: number; fromQueue: boolean }> = [];
          let turn = 0;
          let inCheck = false;
          let id = 0;
          for (const costs of perTurn) {
            turn++;
            inCheck = false;
            for (const cost of costs) {
              const me = id++;
              turns.run(() => {
                ran.push({ id: me, turn, at: t, fromQueue: inCheck });
                t += cost;
              });
            }
            inCheck = true;
            checkPhase();
          }
          // Then turns with no new work until nothing waits.
          for (let guard = 0; guard < 1000 && vi.getTimerCount() > 0; guard++) {
            turn++;
            inCheck = true;
            checkPhase();
          }
          expect(turns.waiting).toBe(0);
          expect(vi.getTimerCount()).toBe(0);
          // Once each, in order.
          expect(ran.map((r) => r.id)).toEqual(Array.from({ length: id }, (_, i) => i));
          // In each turn every piece started within the budget of the turn's first: what waited
          // runs in a turn whose own I/O ran none (it came while they waited, so it waits too).
          for (let k = 1; k <= turn; k++) {
            const inTurn = ran.filter((r) => r.turn === k);
            if (inTurn.length === 0) continue;
            for (const r of inTurn) expect(r.at - inTurn[0]!.at).toBeLessThan(budgetMs);
            expect(inTurn.every((r) => r.fromQueue) || inTurn.every((r) => !r.fromQueue)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
