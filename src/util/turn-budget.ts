// How much of one turn of the event loop a burst of follow-up work may take. A thousand identities
// starting (or coming back after the network restarted) get their replies in bursts: one poll of
// the loop hands over the answers of dozens of sign-ins, and each answer's follow-up (the next
// request, a started identity, a session to build) used to run there and then, all of them in that
// one turn — 30–45 ms of the loop's own work plus whatever garbage collection fell inside, while
// every identity already online waited. Work given to a budget runs at once while the current turn
// has used less than `budgetMs` since the first piece that ran in it (and nothing waits before it);
// past that it waits for a later turn, in order, and such a turn runs what waits for up to
// `budgetMs`, one piece at least. The budget is time, not a count: a slower machine runs fewer
// pieces a turn, a faster one more.
//
// A turn is told apart with an immediate: the first piece given in a turn arms one, and it marks
// the turn's end (the loop's check phase follows its poll phase). What waits runs from an
// immediate armed at that end, so in the turn after, once timers and I/O had their go. At most two
// immediates are armed at a time and none once a turn passed with nothing given or waiting:
// nothing here keeps a process alive.

/** The longest the work given to a budget runs in one turn before the rest waits for the next. */
export const TURN_BUDGET_MS = 10;

export interface TurnBudgetOptions {
  /** Default TURN_BUDGET_MS. */
  budgetMs?: number;
  /** The clock the budget is measured by, in ms (default performance.now). */
  now?: () => number;
}

export interface TurnBudget {
  /**
   * Runs `fn` now when this turn's budget is not used up and nothing waits, else in a later turn
   * (in the order given). `fn` should not throw: a throw from a later turn is rethrown on its own,
   * as one from an I/O callback would be. Returns what takes `fn` back while it waits (then it
   * never runs; once it ran, nothing).
   */
  run(fn: () => void): () => void;
  /** Pieces of work waiting for a later turn. */
  readonly waiting: number;
}

export function createTurnBudget(o: TurnBudgetOptions = {}): TurnBudget {
  const budgetMs = Math.max(0, o.budgetMs ?? TURN_BUDGET_MS);
  const now = o.now ?? (() => performance.now());
  const queue: Array<() => void> = [];
  /** When the first piece ran in this turn (undefined: none yet). */
  let turnStart: number | undefined;
  /** When the immediate that ends this turn was armed (always, while turnStart is defined); undefined: none armed. */
  let endArmedAt: number | undefined;
  /** When the immediate that runs what waits was armed; undefined: none armed. */
  let drainArmedAt: number | undefined;
  /**
   * An immediate armed longer ago than this is taken for lost (armed under a test's fake clock that
   * was then removed) and armed again: one more harmless immediate at worst, never a budget stuck.
   */
  const LOST_MS = 1000;
  const armed = (at: number | undefined) => at !== undefined && now() - at < LOST_MS;

  /** This turn has work: the immediate that ends it is armed. */
  const mark = () => {
    if (armed(endArmedAt)) return;
    endArmedAt = now();
    setImmediate(endTurn);
  };
  const endTurn = () => {
    endArmedAt = undefined;
    turnStart = undefined;
    armDrain();
  };
  /** What waits runs in the turn after this one (an immediate armed in the check phase runs in the next). */
  const armDrain = () => {
    if (queue.length === 0 || armed(drainArmedAt)) return;
    drainArmedAt = now();
    setImmediate(drain);
  };
  const drain = () => {
    drainArmedAt = undefined;
    if (queue.length === 0) return;
    mark();
    const start = (turnStart ??= now());
    // One piece at least, whatever the turn already used: work that waits always moves on.
    let ran = 0;
    while (queue.length > 0 && (ran === 0 || now() - start < budgetMs)) {
      const fn = queue.shift()!;
      ran++;
      try {
        fn();
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    armDrain();
  };

  return {
    run(fn) {
      mark();
      if (queue.length === 0 && (turnStart === undefined || now() - turnStart < budgetMs)) {
        turnStart ??= now();
        fn();
        return () => {};
      }
      // The immediate that ends this turn arms the drain.
      const piece = () => fn();
      queue.push(piece);
      return () => {
        const i = queue.indexOf(piece);
        if (i >= 0) queue.splice(i, 1);
      };
    },
    get waiting() {
      return queue.length;
    },
  };
}

/** The budget every identity of this process shares. */
export const processTurnBudget: TurnBudget = createTurnBudget();
