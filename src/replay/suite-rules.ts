// The suite's figures per addressing rule (src/group/addressing/rules.ts): for each rule, the
// annotated lines it decided and, against the annotations, how many of them were meant for the
// persona — its precision and recall when it flags lines as ours or maybe ours, the share of the
// persona's lines it left unflagged when it does not. A rule that costs more than it earns shows.
import { ADDRESSING_RULES } from "../group/addressing/rules.ts";
import { SILENT_RULES, type RuleName, type Whom } from "../group/addressing/view.ts";
import type { AddressingReason } from "../types.ts";

/** What a rule's verdict makes of a line: flagged (ours, maybe ours) or not (not ours, plain). */
export type RuleVerdict = "ours" | "maybe ours" | "not ours" | "plain";

const VERDICT: Readonly<Record<Whom, RuleVerdict>> = { us: "ours", "us-engaged": "ours", "maybe-us": "maybe ours", other: "not ours", nobody: "plain" };

/**
 * The suite's rows, in the table's order: every rule that prints a reason, then `plain` for every
 * line that got none (the silent rules: a reaction, a group event, nothing in play, no rule).
 */
export const RULE_ROWS: ReadonlyArray<{ rule: AddressingReason["rule"] | "plain"; verdict: RuleVerdict }> = ADDRESSING_RULES.filter(
  (r) => r.name === "plain" || !(SILENT_RULES as readonly RuleName[]).includes(r.name),
).map((r) => ({ rule: r.name as AddressingReason["rule"] | "plain", verdict: VERDICT[r.to] }));

export interface RuleRow {
  /** The rule (its printed reason), or `plain` for the lines that got no reason. */
  rule: AddressingReason["rule"] | "plain";
  verdict: RuleVerdict;
  /** Annotated lines (not the persona's own) the rule decided. */
  lines: number;
  /** Of those, the lines the annotations say were meant for the persona. */
  directed: number;
  /** A flagging rule's `directed / lines` (null when it decided none); null for the others. */
  precision: number | null;
  /** A flagging rule's share of all the persona's lines: what it caught. Null for the others. */
  recall: number | null;
  /** A rule that does not flag: its share of all the persona's lines, left unflagged. Null for the others. */
  lost: number | null;
}

/** Per rule row (RULE_ROWS' order): annotated lines decided, and of them directed at the persona. */
export type RuleCounts = ReadonlyArray<{ lines: number; directed: number }>;

const ROW_OF = new Map(RULE_ROWS.map((r, i) => [r.rule, i] as const));
const PLAIN_ROW = ROW_OF.get("plain")!;

/**
 * One persona's replay, counted per rule a line at a time: each annotated line of another sender
 * under the rule that decided it (a line with no reason, or never accepted, under `plain`).
 */
export class RuleCount {
  readonly counts = RULE_ROWS.map(() => ({ lines: 0, directed: 0 }));

  /** An annotated line of another sender: the rule that decided it, and whether it was meant for the persona. */
  add(rule: AddressingReason["rule"] | undefined, directed: boolean): void {
    const c = this.counts[rule === undefined ? PLAIN_ROW : ROW_OF.get(rule)!]!;
    c.lines++;
    if (directed) c.directed++;
  }
}

const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;

/** The rows of several replays' counts together. */
export function toRuleRows(parts: readonly RuleCounts[]): RuleRow[] {
  const sum = RULE_ROWS.map((_, i) => ({ lines: parts.reduce((a, p) => a + p[i]!.lines, 0), directed: parts.reduce((a, p) => a + p[i]!.directed, 0) }));
  const gold = sum.reduce((a, c) => a + c.directed, 0);
  return RULE_ROWS.map(({ rule, verdict }, i) => {
    const { lines, directed } = sum[i]!;
    const flags = verdict === "ours" || verdict === "maybe ours";
    return {
      rule,
      verdict,
      lines,
      directed,
      precision: flags && lines > 0 ? ratio(directed, lines) : null,
      recall: flags && gold > 0 ? ratio(directed, gold) : null,
      lost: !flags && gold > 0 ? ratio(directed, gold) : null,
    };
  });
}

/**
 * The text table: per log the rules that decided a line there, then every rule pooled over all
 * logs. Each row pools the log's personas.
 */
export function renderRuleTable(logs: ReadonlyArray<{ log: string; rules: readonly RuleRow[] }>, pooled: readonly RuleRow[]): string[] {
  const head = ["log", "rule", "verdict", "lines", "directed", "precision", "recall", "lost"];
  const num = (x: number | null) => (x === null ? "-" : x.toFixed(2));
  const cells = (log: string, r: RuleRow) => [log, r.rule, r.verdict, String(r.lines), String(r.directed), num(r.precision), num(r.recall), num(r.lost)];
  const body = [...logs.flatMap((l) => l.rules.filter((r) => r.lines > 0).map((r) => cells(l.log, r))), ...pooled.map((r) => cells("pooled", r))];
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const fmt = (c: string[]) => c.map((s, i) => (i < 3 ? s.padEnd(widths[i]!) : s.padStart(widths[i]!))).join("  ").trimEnd();
  return [
    "addressing rules, each log's personas together, then pooled (lines: annotated lines the rule decided; directed: of them,",
    "meant for the persona; precision = directed/lines and recall = directed/all directed for a rule that flags a line as ours",
    "or maybe ours; lost = directed/all directed for one that does not):",
    fmt(head),
    ...body.map(fmt),
  ];
}
