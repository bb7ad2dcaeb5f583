// Each replayed line's addressing reason, by position, in a byte or two: the reasons seen are few
// (one per label), the lines many. The indexes are a paged column (paged-column.ts): a log walked
// from its file keeps a few pages of them in memory and the rest in a temp file.
import { addressingLabel } from "../group/addressing/reason.ts";
import type { AddressingReason } from "../types.ts";
import { PagedColumn } from "./paged-column.ts";

/** Each line's addressing reason as an index into the reasons seen (one per label): one byte a line while there are few, two or four past that. */
export class ReasonColumn {
  readonly #count: number;
  readonly #pages: { spill: boolean; pageEntries?: number; heldPages?: number };
  #index: PagedColumn;
  readonly #reasons: Array<AddressingReason | undefined> = [undefined];
  readonly #byLabel = new Map<string, number>();

  /** `count` lines; `spill`: pages past a few go to a temp file (a log walked from its file), `pageEntries` and `heldPages` size them. */
  constructor(count: number, pages: { spill: boolean; pageEntries?: number; heldPages?: number } = { spill: false }) {
    this.#count = count;
    this.#pages = pages;
    this.#index = new PagedColumn({ name: "reasons", width: 1, ...pages });
  }

  set(i: number, reason: AddressingReason | undefined): void {
    let k = 0;
    if (reason !== undefined) {
      const label = addressingLabel(reason);
      k = this.#byLabel.get(label) ?? this.#reasons.push(reason) - 1;
      this.#byLabel.set(label, k);
      if (k >= 2 ** (8 * this.#index.width)) this.#widen(k > 0xffff ? 4 : 2);
    }
    this.#index.set(i, k);
  }

  get(i: number): AddressingReason | undefined {
    return this.#reasons[this.#index.get(i)];
  }

  /** Removes the temp file (if any); not used after. */
  remove(): void {
    this.#index.remove();
  }

  /** Every index copied to a column of wider entries (once past 255 reasons, again past 65,535). */
  #widen(width: 2 | 4): void {
    const wider = new PagedColumn({ name: `reasons-${width}`, width, ...this.#pages });
    for (let i = 0; i < this.#count; i++) {
      const k = this.#index.get(i);
      if (k !== 0) wider.set(i, k);
    }
    this.#index.remove();
    this.#index = wider;
  }
}
