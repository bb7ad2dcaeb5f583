// A typed event emitter small enough to own: listeners are called in order, a throwing listener
// is reported and never breaks the others.

export class TypedEmitter<M> {
  readonly #listeners = new Map<keyof M, Set<(payload: never) => void>>();
  readonly #onError: (err: unknown, event: keyof M) => void;
  constructor(onError: (err: unknown, event: keyof M) => void) {
    this.#onError = onError;
  }
  on<E extends keyof M>(event: E, listener: (payload: M[E]) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener as (payload: never) => void);
    return () => void set.delete(listener as (payload: never) => void);
  }
  emit<E extends keyof M>(event: E, payload: M[E]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as (payload: M[E]) => void)(payload);
      } catch (err) {
        this.#onError(err, event);
      }
    }
  }
  clear(): void {
    this.#listeners.clear();
  }
}
