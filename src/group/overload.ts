// Capacity: a group holds at most maxPendingMessages; past that the oldest held messages are
// counted over-capacity drops. An overload episode is logged once when it starts and once, with
// its count, when a dispatch takes what is held — never one line per feed. No timers.
import type { ClientState } from "./client-state.ts";

export class Overload {
  readonly #s: Pick<ClientState, "held" | "settings" | "log" | "drop">;
  /** True from the first over-capacity drop until a dispatch takes what is held. */
  #active = false;
  #drops = 0;

  constructor(s: Pick<ClientState, "held" | "settings" | "log" | "drop">) {
    this.#s = s;
  }

  /** Drops the oldest held messages past maxPendingMessages. True if anything was dropped. */
  enforce(): boolean {
    const s = this.#s;
    const dropped = s.held.dropOverCapacity(s.settings.maxPendingMessages);
    if (dropped.length === 0) return false;
    for (const m of dropped) s.drop(m, "over-capacity", "held");
    this.#drops += dropped.length;
    if (!this.#active) {
      // One line per overload episode, not one per feed: a summary follows when it ends.
      this.#active = true;
      s.log.log("warn", "group.over-capacity", { dropped: dropped.length, max: s.settings.maxPendingMessages });
    }
    return true;
  }

  /** What was held has been taken: the episode (if any) ends with its summary line. */
  end(): void {
    if (!this.#active) return;
    this.#s.log.log("warn", "group.over-capacity-ended", { dropped: this.#drops, max: this.#s.settings.maxPendingMessages });
    this.#active = false;
    this.#drops = 0;
  }
}
