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
  let annotated = 0;
  let gold = 0;
  let reached = 0;
  let flagged = 0;
  let flaggedGold = 0;
  const waits: number[] = [];
  for (const l of p.lines) {
    if (p.isPersona(l.sender)) continue;
    const directed = isDirectedAt(l, p.persona);
    if (directed === null) continue;
    annotated++;
    const f = p.flags.get(l.id);
    const isFlagged = f !== undefined && (f.isMention || f.engaged);
    if (isFlagged) flagged++;
    if (!directed) continue;
    gold++;
    if (isFlagged) flaggedGold++;
    const at = p.modelCallAt.get(l.id);
    if (at !== undefined) {
      reached++;
      waits.push(Math.max(0, at - l.ts));
    }
  }
  if (annotated === 0) return null;
  waits.sort((a, b) => a - b);
  const ratio = (a: number, b: number) => (b === 0 ? 1 : Math.round((a / b) * 1000) / 1000);
  return {
    gold,
    reached,
    reachRate: ratio(reached, gold),
    waitP50Ms: percentile(waits, 50),
    waitP95Ms: percentile(waits, 95),
    precision: ratio(flaggedGold, flagged),
    recall: ratio(flaggedGold, gold),
  };
}

/** Nearest-rank percentile of an ascending array; 0 for an empty one. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}
