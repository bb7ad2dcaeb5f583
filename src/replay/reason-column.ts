// Each replayed line's addressing reason, by position, in a byte or two: the reasons seen are few
// (one per label), the lines many.
import { addressingLabel } from "../group/addressing/reason.ts";
import type { AddressingReason } from "../types.ts";

/** Each line's addressing reason as an index into the reasons seen (one per label): one byte a line while there are few, two or four past that. */
export class ReasonColumn {
  #index: Uint8Array | Uint16Array | Uint32Array;
  readonly #reasons: Array<AddressingReason | undefined> = [undefined];
  readonly #byLabel = new Map<string, number>();

  constructor(count: number) {
    this.#index = new Uint8Array(count);
  }

  set(i: number, reason: AddressingReason | undefined): void {
    let k = 0;
    if (reason !== undefined) {
      const label = addressingLabel(reason);
      k = this.#byLabel.get(label) ?? this.#reasons.push(reason) - 1;
      this.#byLabel.set(label, k);
      if (k > 0xff && this.#index instanceof Uint8Array) this.#index = Uint16Array.from(this.#index);
      if (k > 0xffff && !(this.#index instanceof Uint32Array)) this.#index = Uint32Array.from(this.#index);
    }
    this.#index[i] = k;
  }

  get(i: number): AddressingReason | undefined {
    return this.#reasons[this.#index[i]!];
  }
}
