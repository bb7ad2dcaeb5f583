// A trailing debounce with a maximum wait, on one timer. Each touch pushes the deadline to
// `now + gateMs` but never past the cap (first touch + maxWaitMs). Re-arming per touch would cost
// a clearTimeout + setTimeout per message; instead the timer fires at its original due time and,
// if the deadline has moved, re-arms once for the rest.
import { bufferDeadline } from "./dispatch-gate.ts";

export class CappedDebounce {
  readonly #onFire: () => void;
  readonly #localNow: () => number;
  /** Armed by the first touch after a fire or cancel; cleared by cancel(). */
  #timer: ReturnType<typeof setTimeout> | undefined;
  #due = 0;
  #deadline = 0;
  #cap: number | null = null;

  constructor(onFire: () => void, localNow: () => number) {
    this.#onFire = onFire;
    this.#localNow = localNow;
  }

  get armed(): boolean {
    return this.#timer !== undefined;
  }

  /** Local time the debounce fires at (if not touched again), or null when idle. */
  get deadline(): number | null {
    return this.#timer === undefined ? null : this.#deadline;
  }

  touch(now: number, gateMs: number, maxWaitMs: number): void {
    if (this.#cap === null) this.#cap = now + maxWaitMs;
    this.#deadline = bufferDeadline({ now, gateMs, capAt: this.#cap });
    if (this.#timer !== undefined && this.#due <= this.#deadline) return;
    clearTimeout(this.#timer);
    this.#arm(now);
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#cap = null;
  }

  #arm(now: number): void {
    this.#due = this.#deadline;
    this.#timer = setTimeout(() => this.#fire(), this.#deadline - now);
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.#localNow();
    if (this.#deadline > now) return this.#arm(now);
    this.#cap = null;
    this.#onFire();
  }
}
