// A typed event emitter small enough to own: listeners are called in order, and a throwing
// listener is reported through `onError` (the owner logs it) and never breaks the others.

export class TypedEmitter<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<(payload: never) => void>>();
  readonly #onError: (err: unknown, event: string) => void;

  constructor(onError: (err: unknown, event: string) => void) {
    this.#onError = onError;
  }

  on<E extends keyof Events>(event: E, listener: (payload: Events[E]) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener as (payload: never) => void);
    return () => this.off(event, listener);
  }

  off<E extends keyof Events>(event: E, listener: (payload: Events[E]) => void): void {
    this.#listeners.get(event)?.delete(listener as (payload: never) => void);
  }

  emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as (payload: Events[E]) => void)(payload);
      } catch (err) {
        this.#onError(err, String(event));
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}
