// How `run` and `start` start many identities without holding the event loop: under the process's
// turn budget (src/util/turn-budget.ts: a start runs while the turn has used less than its budget,
// shared with the sign-ins' requests, else in a later turn), and at most START_AT_ONCE of them
// part-way through start-up at once (started, their `ready` not settled yet). A thousand identities started at
// once all sign in, open their sockets and read their groups' backlogs and members together; the
// replies then arrive together, and one turn of the loop runs the callbacks of hundreds of
// identities (plus the garbage collection they leave due) while those already online wait.
// A slot frees when the identity's `ready` resolves or rejects, or START_WAIT_MS after it started
// (it goes on connecting in the background): a network that is down or slow never holds the rest
// for ever — it only paces them, N identities then all started after about N / limit × wait.
// The waits of a start-up live here (for a slot, for the next turn, for the budget's go): at most
// one at a time, and a stop ends it at once and starts nothing more.
import { processTurnBudget, type TurnBudget } from "../util/turn-budget.ts";

/**
 * Identities part-way through start-up at once. At 1000 identities × 5 groups on 2 cores, 150 at
 * once keeps every turn of the loop under ~100 ms (all of them at once: 100–133 ms) and start-up as
 * fast (each identity's start-up I/O is then most of what the loop does: ~100 come online a second).
 */
export const START_AT_ONCE = 150;
/**
 * The longest an identity holds its slot: well past a start-up under load (seconds), so the bound
 * holds while the network answers, and only a network that is down or not answering gets here.
 */
export const START_WAIT_MS = 10_000;

export interface StartInSlotsParams {
  ids: readonly string[];
  /** Starts one identity; its `ready` settles once it is online (or could not get there). A throw ends start-up with it. */
  start: (id: string) => { readonly ready: Promise<unknown> };
  /** Start-up ends when it aborts: no identity more, no timer left. */
  signal: AbortSignal;
  /** The clock slots are held by, in ms. */
  now: () => number;
  /** The turn budget starts run under (default the process's: shared with the sign-ins' requests). */
  turns?: TurnBudget | undefined;
  /** Default START_AT_ONCE. */
  atOnce?: number | undefined;
  /** Default START_WAIT_MS. */
  waitMs?: number | undefined;
}

/**
 * Starts `ids` in order, each once; resolves once the last started (or the signal aborted), rejects
 * with the first throw of `start`. None starts in the turn that asked: the work before it (reading
 * the config, and the garbage collection that leaves due) ends first.
 */
export async function startInSlots(p: StartInSlotsParams): Promise<void> {
  if (p.ids.length === 0 || p.signal.aborted) return;
  const { now, signal } = p;
  const turns = p.turns ?? processTurnBudget;
  const atOnce = Math.max(1, Math.floor(p.atOnce ?? START_AT_ONCE));
  const waitMs = Math.max(0, p.waitMs ?? START_WAIT_MS);
  /** Identities holding a slot, oldest first (each waits as long, so the oldest's wait ends first). */
  const holding = new Set<{ at: number }>();
  /** Armed while start-up waits for a slot: frees the oldest slot when its wait ends. */
  let slotTimer: ReturnType<typeof setTimeout> | undefined;
  /** Armed while start-up waits for the next turn of the event loop. */
  let turn: ReturnType<typeof setImmediate> | undefined;
  /** Takes back a start waiting for the budget's go. */
  let cancelGo: (() => void) | undefined;
  /** Ends the current wait. */
  let wake: (() => void) | undefined;

  const resume = () => {
    clearTimeout(slotTimer);
    clearImmediate(turn);
    cancelGo?.();
    slotTimer = turn = cancelGo = undefined;
    const w = wake;
    wake = undefined;
    w?.();
  };
  const nextTurn = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
      turn = setImmediate(resume);
    });
  /** How the last wait for a slot ended: an identity's `ready` settled, or the oldest's wait ran out. */
  let freedBy = "wait" as "ready" | "wait";
  /** A slot frees: the oldest's wait ends in `ms`, or an identity's `ready` settles sooner. */
  const slotFree = (oldest: { at: number }, ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      slotTimer = setTimeout(() => {
        holding.delete(oldest);
        freedBy = "wait";
        resume();
      }, ms);
    });

  /** Starts `id` when the turn budget lets it (now, or in a later turn); nothing once stopped. */
  const startInTurn = (id: string) =>
    new Promise<void>((resolve, reject) => {
      wake = resolve;
      cancelGo = turns.run(() => {
        cancelGo = wake = undefined;
        if (signal.aborted) return resolve();
        try {
          const slot = { at: now() };
          const { ready } = p.start(id);
          holding.add(slot);
          const free = () => {
            // Only a wait for a slot ends here; a wait for the next turn goes on.
            if (holding.delete(slot) && slotTimer !== undefined) {
              freedBy = "ready";
              resume();
            }
          };
          ready.then(free, free);
          resolve();
        } catch (err) {
          reject(err);
        }
      });
    });

  signal.addEventListener("abort", resume, { once: true });
  try {
    await nextTurn();
    for (const id of p.ids) {
      let waited: "no" | "ready" | "wait" = "no";
      while (holding.size >= atOnce && !signal.aborted) {
        const oldest = holding.values().next().value!;
        const left = oldest.at + waitMs - now();
        if (left <= 0) holding.delete(oldest);
        else {
          await slotFree(oldest, left);
          if (waited !== "ready") waited = freedBy;
        }
      }
      // A slot freed among other identities' I/O callbacks (their `ready` settling), often many
      // in one turn: the next ones start in a turn of their own, not inside it.
      if (waited === "ready" && !signal.aborted) await nextTurn();
      if (signal.aborted) return;
      await startInTurn(id);
      if (signal.aborted) return;
    }
  } finally {
    signal.removeEventListener("abort", resume);
    clearTimeout(slotTimer);
    clearImmediate(turn);
    cancelGo?.();
  }
}
