// The report's chart as static SVG: the time axis, the vitality band, the budget lane, the
// dispatches with their waits, our sent replies, the annotated lines and the messages by sender,
// each lane written by its own function a piece at a time (from walks of the dispatches, and the
// buckets the walk of the lines filled); and the lane labels beside it, which stay in view however
// far the chart scrolls.
import type { ReplayDispatch } from "../replay/replay.ts";
import type { Buckets } from "./buckets.ts";
import { escapeHtml } from "./html-text.ts";
import { LANE, round, type Layout, type SenderRows, type TimeScale } from "./chart-layout.ts";
import type { PageRun } from "./page-run.ts";

export interface ChartInput {
  run: PageRun;
  time: TimeScale;
  layout: Layout;
  annotated: boolean;
  /** The lanes filled by the walk of the lines (the addressed lines, the messages by row and kind). */
  buckets: Buckets;
}

/** The `<svg id="chart">` element, to `out` a piece at a time: every lane, top to bottom, and an empty group the page script highlights into. */
export function writeChart(p: ChartInput, out: (s: string) => void): void {
  const { run, time, layout, annotated, buckets } = p;
  const { t0, t1, x, width } = time;
  const { lanes, height } = layout;
  out(`<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="replay timeline">`);
  out(renderAxis(t0, t1, x, width, height));
  out("\n");
  writeVitality(run, x, width, lanes.vitality!, out);
  out("\n");
  writeBudget(run, x, width, lanes.budget!, out);
  out("\n");
  writeDispatches(run, x, lanes.dispatches!, lanes.sent!, out);
  out("\n");
  if (annotated) {
    out(`<g class="addressed"><path class="reached" d="`);
    buckets.drain(ADDRESSED.reached, out);
    out(`"/><path class="missed" d="`);
    buckets.drain(ADDRESSED.missed, out);
    out(`"/></g>\n`);
  }
  writeMessages(layout.rowY, buckets, out);
  out("\n");
  out(`<g id="highlight"></g>`);
  out(`</svg>`);
}

/** The buckets of the addressed lane's two paths. */
export const ADDRESSED = { reached: "addressed:reached", missed: "addressed:missed" } as const;
/** The bucket of a message dot's path: its row and kind. */
export const messageBucket = (row: number, kind: MessageKind) => `m:${row}:${kind}`;
export type MessageKind = "plain" | "own" | "engaged" | "mention";
const KINDS: readonly MessageKind[] = ["plain", "own", "engaged", "mention"];

/** A line's dot in the addressed lane (a line meant for the persona), or in its sender's row. */
export const dot = (x: number, y: number) => `M${x} ${y}h0`;

/** The `<svg id="labels">` element: each lane's name, and each sender row's sender. */
export function renderLabels(layout: Layout, senders: SenderRows, annotated: boolean): string {
  const { lanes, rowY, height } = layout;
  const { distinct, rowSenders, own, others } = senders;
  const labels = [
    ["time (UTC)", lanes.axis! + 14],
    ["vitality", lanes.vitality! + 12],
    // The budget lane's scale sits beside it, where it stays in view however far the chart scrolls.
    ["100%", lanes.budget! + 9],
    ["budget, % of allowance", lanes.budget! + LANE.budget / 2 + 4],
    ["0%", lanes.budget! + LANE.budget - 1],
    ["dispatches · waits", lanes.dispatches! + LANE.dispatches / 2 + 4],
    ["our replies", lanes.sent! + 13],
    ...(annotated ? [["addressed lines", lanes.addressed! + 13] as const] : []),
    ...rowSenders.map((s, i) => [s === own ? `${s} (persona)` : s, rowY[i]! + 4] as const),
    ...(others ? [[`${distinct - rowSenders.length} others`, rowY.at(-1)! + 4] as const] : []),
  ] as const;
  return `<svg id="labels" xmlns="http://www.w3.org/2000/svg" width="170" height="${height}" role="presentation">${labels
    .map(([t, ly]) => `<text x="164" y="${ly}" text-anchor="end">${escapeHtml(t.length > 26 ? `${t.slice(0, 25)}…` : t)}</text>`)
    .join("")}</svg>`;
}

function renderAxis(t0: number, t1: number, x: (ts: number) => number, width: number, height: number): string {
  const hour = 3_600_000;
  const span = t1 - t0;
  const step = span > 72 * hour ? 6 * hour : span > 24 * hour ? 2 * hour : span > 2 * hour ? hour : 10 * 60_000;
  const out: string[] = [`<g class="axis">`];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    const tx = x(t);
    const label = new Date(t).toISOString().slice(step >= hour && span > 24 * hour ? 5 : 11, 16).replace("T", " ");
    out.push(`<line x1="${tx}" y1="18" x2="${tx}" y2="${height}"/><text x="${tx + 3}" y="14">${label}</text>`);
  }
  out.push(`<line class="base" x1="0" y1="20" x2="${width}" y2="20"/></g>`);
  return out.join("");
}

/** The state each dispatch saw, held until the next dispatch; equal neighbours are merged. */
function writeVitality(run: PageRun, x: (ts: number) => number, width: number, top: number, out: (s: string) => void): void {
  out(`<g class="vitality">`);
  // A run of dispatches in one state, drawn once the next state (or the end) is seen.
  let from: { at: number; state: string } | undefined;
  const draw = (toX: number) => {
    const fx = x(from!.at);
    out(`<rect class="v-${from!.state}" x="${fx}" y="${top}" width="${round(Math.max(1, toX - fx))}" height="${LANE.vitality}"/>`);
  };
  for (const { d } of run.dispatches()) {
    if (from && from.state === d.vitality.state) continue;
    if (from) draw(x(d.at));
    from = { at: d.at, state: d.vitality.state };
  }
  if (from) draw(width);
  out(`</g>`);
}

/**
 * Budget use as each dispatch saw it, one line per allowance: a normal dispatch draws on the
 * unaddressed allowance, a mention or engaged one on the addressed allowance (the monitor's two
 * pools), each as the share of its tightest window used (top = 100 %, spent). A tick at the top
 * marks a dispatch skipped over budget: grey for unaddressed talk (the economy working as meant),
 * the alarm colour for addressed lines refused for budget. Each line and tick path is one walk of
 * the dispatches.
 */
function writeBudget(run: PageRun, x: (ts: number) => number, width: number, top: number, out: (s: string) => void): void {
  const yOf = (r: number) => round(top + LANE.budget - Math.min(1, Math.max(0, r)) * LANE.budget);
  const poolOf = (d: ReplayDispatch) => (d.trigger === "normal" ? "unaddressed" : "addressed");
  out(`<g class="budget"><rect class="frame" x="0" y="${top}" width="${width}" height="${LANE.budget}"/>` + `<line class="full" x1="0" y1="${top}" x2="${width}" y2="${top}"/>`);
  for (const pool of ["unaddressed", "addressed"] as const) {
    let first = true;
    for (const { d } of run.dispatches()) {
      if (poolOf(d) !== pool) continue;
      out(`${first ? `<polyline class="${pool}" points="` : " "}${x(d.at)},${yOf(d.outcome.budgetRatio)}`);
      first = false;
    }
    if (!first) out(`"/>`);
  }
  for (const pool of ["unaddressed", "addressed"] as const) {
    out(`<path class="over-${pool}" d="`);
    for (const { d } of run.dispatches()) if (poolOf(d) === pool && d.outcome.skipReason === "over-budget") out(`M${x(d.at)} ${top}v7`);
    out(`"/>`);
  }
  out(`</g>`);
}

/** The waits, the dispatch markers and our sent replies: a walk of the dispatches each. */
function writeDispatches(run: PageRun, x: (ts: number) => number, top: number, sentTop: number, out: (s: string) => void): void {
  const mid = top + LANE.dispatches / 2;
  out(`<g class="waits"><path d="`);
  for (const { d, firstTs } of run.dispatches()) {
    const first = firstTs ?? d.at;
    if (first < d.at) out(`M${x(first)} ${mid}H${x(d.at)}`);
  }
  out(`"/></g><g class="dispatches">`);
  let i = 0;
  for (const { d } of run.dispatches()) {
    const cls = `d ${d.trigger}${d.outcome.modelCalled ? " called" : ""}${d.outcome.sent ? " sent" : ""}`;
    out(`<circle class="${cls}" cx="${x(d.at)}" cy="${mid}" r="${d.trigger === "normal" ? 4 : 5.5}" data-d="${i++}"/>`);
  }
  out(`</g><g class="sent">`);
  i = 0;
  for (const { d } of run.dispatches()) {
    if (d.outcome.sent) out(`<rect class="reply" x="${round(x(d.at) - 3)}" y="${sentTop + 3}" width="6" height="12" data-d="${i}"/>`);
    i++;
  }
  out(`</g>`);
}

/** One path per row and kind (filled into the buckets by the walk of the lines): 20,000 dots cost a few dozen elements. */
function writeMessages(rowY: readonly number[], buckets: Buckets, out: (s: string) => void): void {
  out(`<g class="rows">`);
  for (const ry of rowY) out(`<line x1="0" y1="${ry}" x2="100%" y2="${ry}"/>`);
  out(`</g><g class="messages">`);
  const keys = buckets.keys();
  for (const kind of KINDS) {
    for (const key of keys) {
      if (!key.startsWith("m:") || !key.endsWith(`:${kind}`)) continue;
      out(`<path class="m-${kind}" d="`);
      buckets.drain(key, out);
      out(`"/>`);
    }
  }
  out(`</g>`);
}
