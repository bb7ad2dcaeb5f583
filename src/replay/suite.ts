// `replay --suite DIR`: every annotated log of a folder, replayed for its most addressed personas,
// and the reach of the lines people meant for them — per persona, per log and pooled — with the
// reason each missed line was missed. The runs are the ordinary single-persona replay, each log
// walked from its file (a walk to find its personas, then each persona's replay): what the suite
// keeps is counts, never the lines.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { GroupSettings } from "../types.ts";
import { Waits } from "./addressed.ts";
import type { LogLine } from "./log.ts";
import { openLogSource } from "./log-source.ts";
import { countKeys } from "./key-counts.ts";
import { personaMatcher, replayLog, type LineFate, type ReplayMessage } from "./replay.ts";
import { RuleCount, renderRuleTable, toRuleRows, type RuleCounts, type RuleRow } from "./suite-rules.ts";
import type { ScriptedMode } from "../backends/deterministic.ts";

/** Why a line meant for the persona never reached a model call. */
export const MISS_CAUSES = [
  /** Not taken as ours; its batch found the unaddressed allowance spent. */
  "unaddressed-allowance",
  /** Judged to be for someone else (`addressed-other`, `continues-addressed-other`). */
  "for-someone-else",
  /** Flagged as ours (mention or engaged), and the addressed allowance was spent. */
  "flagged-addressed-allowance",
  /** Sent as maybe ours (a shared conversation, a line after ours), and the addressed allowance was spent. */
  "maybe-ours-addressed-allowance",
  /** Its dispatch was skipped for another reason before the model. */
  "other-skip",
  /** No dispatch carried it. */
  "not-dispatched",
] as const;
export type MissCause = (typeof MISS_CAUSES)[number];

/** A reached line that waited longer than this for its model call counts as late. */
export const LATE_MS = 8_000;

export interface SuiteRow {
  /** Log file name without `.jsonl`; "pooled" for a pooled row. */
  log: string;
  /** The persona, or "pooled". */
  persona: string;
  /** Annotated lines directed at the persona (not its own). */
  gold: number;
  /** Of those, lines carried by a dispatch whose model was called. */
  reached: number;
  reach: number;
  waitP50Ms: number;
  waitP95Ms: number;
  /** Lines replayed (over every run of the row). */
  messages: number;
  modelCalls: number;
  /** Hours of chat replayed (over every run of the row). */
  hours: number;
  callsPerMessage: number;
  callsPerHour: number;
  /** Annotated lines the engine flagged as mention or engaged, and how many of them were gold. */
  flagged: number;
  flaggedGold: number;
  precision: number;
  recall: number;
  missed: Record<MissCause, number>;
  /** Reached, but after more than {@link LATE_MS}. */
  late: number;
}

export interface SuiteReport {
  dir: string;
  responder: ScriptedMode;
  /** Per log: a row per persona, the personas pooled, and the addressing rules' figures over them. */
  logs: Array<{ log: string; personas: SuiteRow[]; pooled: SuiteRow; rules: RuleRow[] }>;
  pooled: SuiteRow;
  /** The addressing rules' figures over every log (suite-rules.ts). */
  rules: RuleRow[];
}

export type { RuleRow, RuleVerdict } from "./suite-rules.ts";

interface RowParts {
  gold: number;
  reached: number;
  waits: Waits;
  messages: number;
  modelCalls: number;
  hours: number;
  flagged: number;
  flaggedGold: number;
  missed: Record<MissCause, number>;
}

const noMisses = (): Record<MissCause, number> => Object.fromEntries(MISS_CAUSES.map((c) => [c, 0])) as Record<MissCause, number>;
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * The personas of a log: the `personas` list of `personas.json` beside it when it names this
 * log, else the senders most often named in `directedTo` (at least 10 lines), most first. The
 * names are counted on disk (key-counts.ts) when `spill` (a log walked from its file, `total` lines).
 */
export function suitePersonas(lines: Iterable<LogLine>, fromFile: readonly string[] | undefined, count: number, p: { total: number; spill: boolean } = { total: 0, spill: false }): string[] {
  if (fromFile && fromFile.length) return fromFile.slice(0, count);
  function* named(): Generator<string> {
    for (const l of lines) {
      for (const n of new Set(l.directedTo ?? [])) if (n.toLowerCase() !== l.sender.toLowerCase()) yield n;
    }
  }
  return countKeys(named(), { top: count, min: 10, total: p.total, spill: p.spill, tie: (a, b) => a.localeCompare(b) || (a < b ? -1 : a > b ? 1 : 0) }).top.map(([n]) => n);
}

function readPersonasFile(dir: string): Map<string, string[]> {
  const file = join(dir, "personas.json");
  const out = new Map<string, string[]>();
  if (!existsSync(file)) return out;
  const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, { personas?: Array<{ nick?: unknown; bot?: unknown }> }>;
  for (const [log, entry] of Object.entries(data)) {
    const nicks = (entry.personas ?? []).filter((p) => typeof p.nick === "string" && p.bot !== true).map((p) => p.nick as string);
    out.set(log, nicks);
  }
  return out;
}

/**
 * One persona's row parts and rule counts, a line's fate at a time (as the replay's `onMessage`
 * gives them, in time order); `parts(modelCalls, goldWaits)` once the replay is done.
 */
export function rowCounter(persona: string, count: number) {
  const isPersona = personaMatcher(persona);
  const rules = new RuleCount();
  let first: number | undefined;
  let last = 0;
  const p = { gold: 0, reached: 0, flagged: 0, flaggedGold: 0, missed: noMisses() };
  return {
    add(m: ReplayMessage, fate: LineFate): void {
      const l = fate.line;
      first ??= l.ts;
      last = l.ts;
      if (isPersona(l.sender)) return;
      const directed = m.directed;
      if (directed === null) return;
      rules.add(fate.rule, directed);
      const flagged = m.isMention || m.engaged;
      if (flagged) p.flagged++;
      if (!directed) return;
      p.gold++;
      if (flagged) p.flaggedGold++;
      if (m.reached) p.reached++;
      else p.missed[missCause(fate, flagged)]++;
    },
    /** The row's parts; `goldWaits`: the replay's waits of the reached lines meant for the persona. */
    parts(modelCalls: number, goldWaits: Waits): { parts: RowParts; rules: RuleCounts } {
      const hours = first === undefined ? 0 : (last - first) / 3_600_000;
      return { parts: { ...p, waits: goldWaits, messages: count, modelCalls, hours }, rules: rules.counts };
    },
  };
}

function missCause(fate: LineFate, flagged: boolean): MissCause {
  if (fate.rule === "addressed-other" || fate.rule === "continues-addressed-other") return "for-someone-else";
  switch (fate.lastCarrier) {
    case "none":
      return "not-dispatched";
    case "over-budget-unaddressed":
      return "unaddressed-allowance";
    case "over-budget-addressed":
      return flagged ? "flagged-addressed-allowance" : "maybe-ours-addressed-allowance";
    default:
      return "other-skip";
  }
}

function toRow(log: string, persona: string, parts: readonly RowParts[]): SuiteRow {
  const sum = (f: (p: RowParts) => number) => parts.reduce((a, p) => a + f(p), 0);
  const waits = new Waits();
  for (const p of parts) waits.addAll(p.waits);
  const gold = sum((p) => p.gold);
  const reached = sum((p) => p.reached);
  const messages = sum((p) => p.messages);
  const modelCalls = sum((p) => p.modelCalls);
  const hours = sum((p) => p.hours);
  const flagged = sum((p) => p.flagged);
  const flaggedGold = sum((p) => p.flaggedGold);
  const missed = noMisses();
  for (const p of parts) for (const c of MISS_CAUSES) missed[c] += p.missed[c];
  return {
    log,
    persona,
    gold,
    reached,
    reach: gold === 0 ? 1 : round(reached / gold),
    waitP50Ms: waits.percentile(50),
    waitP95Ms: waits.percentile(95),
    messages,
    modelCalls,
    hours: round(hours, 2),
    callsPerMessage: messages === 0 ? 0 : round(modelCalls / messages),
    callsPerHour: hours === 0 ? 0 : round(modelCalls / hours, 1),
    flagged,
    flaggedGold,
    precision: flagged === 0 ? 1 : round(flaggedGold / flagged),
    recall: gold === 0 ? 1 : round(flaggedGold / gold),
    missed,
    late: waits.countAbove(LATE_MS),
  };
}

export interface SuiteOptions {
  settings: GroupSettings;
  responder?: ScriptedMode;
  /** Personas per log (default 3). */
  personas?: number;
  agentLatencyMs?: number;
  seed?: number;
  /** Only these log files (names with or without `.jsonl`); default every `.jsonl` of the folder. */
  only?: readonly string[];
  onLog?: (log: string, persona: string) => void;
}

export async function runSuite(dir: string, opts: SuiteOptions): Promise<SuiteReport> {
  const responder = opts.responder ?? "mention";
  const fromFile = readPersonasFile(dir);
  const only = opts.only?.map((n) => basename(n, ".jsonl"));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new Error(`cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const files = names
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => basename(f, ".jsonl"))
    .filter((f) => !only || only.includes(f))
    .sort();
  if (files.length === 0) throw new Error(`${dir}: no .jsonl logs${only ? ` named ${only.join(", ")}` : ""}`);
  const report: SuiteReport = { dir, responder, logs: [], pooled: toRow("pooled", "pooled", []), rules: [] };
  const allParts: RowParts[] = [];
  const allRules: RuleCounts[] = [];
  for (const log of files) {
    const source = openLogSource(join(dir, `${log}.jsonl`));
    try {
      // The walk is taken only when personas.json names none for the log.
      const personas = suitePersonas(source.lines(), fromFile.get(log), opts.personas ?? 3, { total: source.count, spill: !source.inMemory });
      const rows: SuiteRow[] = [];
      const logParts: RowParts[] = [];
      const logRules: RuleCounts[] = [];
      for (const persona of personas) {
        opts.onLog?.(log, persona);
        const row = rowCounter(persona, source.count);
        const { report: r, view } = await replayLog(
          source,
          {
            persona,
            settings: opts.settings,
            responder,
            ...(opts.agentLatencyMs !== undefined ? { agentLatencyMs: opts.agentLatencyMs } : {}),
            ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
          },
          row.add,
        );
        view.close();
        const { parts, rules } = row.parts(r.summary.modelCalls, view.goldWaits);
        rows.push(toRow(log, persona, [parts]));
        logParts.push(parts);
        logRules.push(rules);
      }
      allParts.push(...logParts);
      allRules.push(...logRules);
      report.logs.push({ log, personas: rows, pooled: toRow(log, "pooled", logParts), rules: toRuleRows(logRules) });
    } finally {
      source.close();
    }
  }
  report.pooled = toRow("pooled", "pooled", allParts);
  report.rules = toRuleRows(allRules);
  return report;
}

const secs = (ms: number) => (ms / 1000).toFixed(1);

/**
 * The suite's text tables: one row per persona, one pooled row per log, the pooled total; then
 * why lines were missed; then the addressing rules' figures.
 */
export function renderSuiteTable(report: SuiteReport): string[] {
  const head = ["log", "persona", "directed", "reached", "reach", "wait p50", "p95", "calls/msg", "calls/h", "flag prec", "recall", "late"];
  const cells = (r: SuiteRow) => [
    r.log,
    r.persona,
    String(r.gold),
    String(r.reached),
    r.reach.toFixed(2),
    `${secs(r.waitP50Ms)} s`,
    `${secs(r.waitP95Ms)} s`,
    r.callsPerMessage.toFixed(3),
    r.callsPerHour.toFixed(1),
    r.precision.toFixed(2),
    r.recall.toFixed(2),
    String(r.late),
  ];
  const body: string[][] = [];
  for (const l of report.logs) {
    for (const r of l.personas) body.push(cells(r));
    body.push(cells(l.pooled));
  }
  body.push(cells(report.pooled));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const fmt = (c: string[]) => c.map((s, i) => (i < 2 ? s.padEnd(widths[i]!) : s.padStart(widths[i]!))).join("  ").trimEnd();
  const out = [fmt(head), ...body.map(fmt)];
  out.push("");
  out.push(`missed lines, by cause (late = reached after more than ${LATE_MS / 1000} s):`);
  const mh = ["log", "missed", ...MISS_CAUSES];
  const mb = [...report.logs.map((l) => l.pooled), report.pooled].map((r) => [
    r.log,
    String(r.gold - r.reached),
    ...MISS_CAUSES.map((c) => String(r.missed[c])),
  ]);
  const mw = mh.map((h, i) => Math.max(h.length, ...mb.map((b) => b[i]!.length)));
  const mfmt = (c: string[]) => c.map((s, i) => (i === 0 ? s.padEnd(mw[i]!) : s.padStart(mw[i]!))).join("  ").trimEnd();
  out.push(mfmt(mh), ...mb.map(mfmt));
  out.push("", ...renderRuleTable(report.logs, report.rules));
  return out;
}
