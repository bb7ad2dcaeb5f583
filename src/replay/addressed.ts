// Reach of addressed talk, measured against a log's human annotations (`directedTo`): of the
// lines a person meant for the persona, how many reached a model call, how long they waited for
// it, and how well the engine's own flags (mention or engaged) agree with the annotation.
import type { LogLine } from "./log.ts";

export interface AddressedReport {
  /** Annotated lines (not the persona's own) whose `directedTo` names the persona. */
  gold: number;
  /** Of those, lines carried by a dispatch whose model was called. */
  reached: number;
  /** reached / gold (1 when gold is 0). */
  reachRate: number;
  /** Wait of reached gold lines from their own timestamp to that dispatch's start. */
  waitP50Ms: number;
  waitP95Ms: number;
  /** Of the annotated lines the engine flagged as mention or engaged, the share that are gold. */
  precision: number;
  /** Of the gold lines, the share the engine flagged as mention or engaged. */
  recall: number;
}

export interface AddressedInput {
  lines: readonly LogLine[];
  isPersona(sender: string): boolean;
  persona: string;
  /** Per message id: the engine's flags. */
  flags: ReadonlyMap<string, { isMention: boolean; engaged: boolean }>;
  /** Per message id: start of the first dispatch that carried it and called the model. */
  modelCallAt: ReadonlyMap<string, number>;
}

/** Whether a line is gold for the persona: null where the log says nothing about it. */
export function isDirectedAt(line: LogLine, persona: string): boolean | null {
  if (!line.directedTo) return null;
  const key = persona.toLowerCase();
  return line.directedTo.some((n) => n.toLowerCase() === key);
}

/** null when the log carries no annotations at all. */
export function measureAddressed(p: AddressedInput): AddressedReport | null {
  const count = new AddressedCount();
  for (const l of p.lines) {
    if (p.isPersona(l.sender)) continue;
    const directed = isDirectedAt(l, p.persona);
    if (directed === null) continue;
    const f = p.flags.get(l.id);
    const at = p.modelCallAt.get(l.id);
    count.add({ directed, flagged: f !== undefined && (f.isMention || f.engaged), reached: at !== undefined });
    if (directed && at !== undefined) count.waits.add(Math.max(0, at - l.ts));
  }
  return count.report();
}

/** {@link measureAddressed} a line at a time: the annotated lines' facts, and the gold lines' waits. */
export class AddressedCount {
  #annotated = 0;
  #gold = 0;
  #reached = 0;
  #flagged = 0;
  #flaggedGold = 0;
  /** Wait of each reached gold line for the dispatch that called the model. */
  readonly waits = new Waits();

  /** One annotated line (not the persona's own). */
  add(l: { directed: boolean; flagged: boolean; reached: boolean }): void {
    this.#annotated++;
    if (l.flagged) this.#flagged++;
    if (!l.directed) return;
    this.#gold++;
    if (l.flagged) this.#flaggedGold++;
    if (l.reached) this.#reached++;
  }

  /** null when no line was annotated. */
  report(): AddressedReport | null {
    if (this.#annotated === 0) return null;
    const ratio = (a: number, b: number) => (b === 0 ? 1 : Math.round((a / b) * 1000) / 1000);
    return {
      gold: this.#gold,
      reached: this.#reached,
      reachRate: ratio(this.#reached, this.#gold),
      waitP50Ms: this.waits.percentile(50),
      waitP95Ms: this.waits.percentile(95),
      precision: ratio(this.#flaggedGold, this.#flagged),
      recall: ratio(this.#flaggedGold, this.#gold),
    };
  }
}

/** Waits (ms) a page of counts covers: a page is 4 KB, made when a wait first falls in it. */
const PAGE = 1024;
/** Whole waits below this are counted in pages; any other (negative, fractional, longer) by value. */
const PAGED_BELOW = 2 ** 31;

/**
 * Waits in ms, counted by value: max and nearest-rank percentiles. A whole wait is counted in a
 * page of {@link PAGE} counters (4 bytes per millisecond of the range the waits cover, however many
 * waits there are); any other wait by value in a map.
 */
export class Waits {
  readonly #pages = new Map<number, Uint32Array>();
  readonly #others = new Map<number, number>();
  #n = 0;
  #max = 0;

  add(ms: number, n = 1): void {
    if (Number.isInteger(ms) && ms >= 0 && ms < PAGED_BELOW) {
      const key = Math.floor(ms / PAGE);
      let page = this.#pages.get(key);
      if (page === undefined) this.#pages.set(key, (page = new Uint32Array(PAGE)));
      page[ms - key * PAGE]! += n;
    } else this.#others.set(ms, (this.#others.get(ms) ?? 0) + n);
    if (this.#n === 0 || ms > this.#max) this.#max = ms;
    this.#n += n;
  }

  /** Adds every wait of `other`. */
  addAll(other: Waits): void {
    for (const [ms, n] of other.#counts()) this.add(ms, n);
  }

  /** Each wait value and how many times it came, ascending. */
  *#counts(): Generator<[number, number]> {
    const others = [...this.#others.keys()].sort((a, b) => a - b);
    let o = 0;
    for (const key of [...this.#pages.keys()].sort((a, b) => a - b)) {
      const page = this.#pages.get(key)!;
      for (let i = 0; i < PAGE; i++) {
        if (page[i] === 0) continue;
        const ms = key * PAGE + i;
        for (; o < others.length && others[o]! < ms; o++) yield [others[o]!, this.#others.get(others[o]!)!];
        yield [ms, page[i]!];
      }
    }
    for (; o < others.length; o++) yield [others[o]!, this.#others.get(others[o]!)!];
  }

  /** How many waits are longer than `ms`. */
  countAbove(ms: number): number {
    let n = 0;
    for (const [v, c] of this.#counts()) if (v > ms) n += c;
    return n;
  }

  /** The largest; 0 when none. */
  get max(): number {
    return this.#n === 0 ? 0 : this.#max;
  }

  /** As {@link percentile} of the sorted waits. */
  percentile(p: number): number {
    if (this.#n === 0) return 0;
    const idx = Math.min(this.#n - 1, Math.max(0, Math.ceil((p / 100) * this.#n) - 1));
    let seen = 0;
    for (const [v, c] of this.#counts()) {
      seen += c;
      if (seen > idx) return v;
    }
    return this.#max;
  }
}

/** Nearest-rank percentile of an ascending array; 0 for an empty one. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}
