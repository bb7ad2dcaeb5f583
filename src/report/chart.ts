// The report's chart as static SVG: the time axis, the vitality band, the budget lane, the
// dispatches with their waits, our sent replies, the annotated lines and the messages by sender,
// each lane drawn by its own function; and the lane labels beside it, which stay in view however
// far the chart scrolls.
import type { LogLine } from "../replay/log.ts";
import type { ReplayReport } from "../replay/replay.ts";
import { escapeHtml } from "./html-text.ts";
import { LANE, round, type Layout, type SenderRows, type TimeScale } from "./chart-layout.ts";
import { FLAG } from "./page-data.ts";

export interface ChartInput {
  report: ReplayReport;
  lines: readonly LogLine[];
  time: TimeScale;
  senders: SenderRows;
  layout: Layout;
  /** Per line, the page data's {@link FLAG} bits. */
  flags: readonly number[];
  /** Index of each line by message id. */
  msgIndex: ReadonlyMap<string, number>;
  annotated: boolean;
}

/** The `<svg id="chart">` element: every lane, top to bottom, and an empty group the page script highlights into. */
export function renderChart(p: ChartInput): string {
  const { report, lines, time, senders, layout, flags, annotated } = p;
  const { t0, t1, x, width } = time;
  const { lanes, rowY, height } = layout;
  const svg: string[] = [];
  svg.push(renderAxis(t0, t1, x, width, height));
  svg.push(renderVitality(report, x, width, lanes.vitality!));
  svg.push(renderBudget(report, x, width, lanes.budget!));
  svg.push(renderDispatches(report, lines, p.msgIndex, x, lanes.dispatches!, lanes.sent!));
  if (annotated) svg.push(renderAddressed(lines, flags, x, lanes.addressed!));
  svg.push(renderMessages(lines, flags, senders.rowOf, senders.rowSenders.length, rowY, x));
  svg.push(`<g id="highlight"></g>`);
  return `<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="replay timeline">${svg.join("\n")}</svg>`;
}

/** The `<svg id="labels">` element: each lane's name, and each sender row's sender. */
export function renderLabels(layout: Layout, senders: SenderRows, annotated: boolean): string {
  const { lanes, rowY, height } = layout;
  const { ranked, rowSenders, own, others } = senders;
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
    ...(others ? [[`${ranked.length - rowSenders.length} others`, rowY.at(-1)! + 4] as const] : []),
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
function renderVitality(report: ReplayReport, x: (ts: number) => number, width: number, top: number): string {
  const out: string[] = [`<g class="vitality">`];
  const ds = report.dispatches;
  let i = 0;
  while (i < ds.length) {
    let j = i;
    while (j + 1 < ds.length && ds[j + 1]!.vitality.state === ds[i]!.vitality.state) j++;
    const from = x(ds[i]!.at);
    const to = j + 1 < ds.length ? x(ds[j + 1]!.at) : width;
    out.push(`<rect class="v-${ds[i]!.vitality.state}" x="${from}" y="${top}" width="${round(Math.max(1, to - from))}" height="${LANE.vitality}"/>`);
    i = j + 1;
  }
  out.push(`</g>`);
  return out.join("");
}

/**
 * Budget use as each dispatch saw it, one line per allowance: a normal dispatch draws on the
 * unaddressed allowance, a mention or engaged one on the addressed allowance (the monitor's two
 * pools), each as the share of its tightest window used (top = 100 %, spent). A tick at the top
 * marks a dispatch skipped over budget: grey for unaddressed talk (the economy working as meant),
 * the alarm colour for addressed lines refused for budget.
 */
function renderBudget(report: ReplayReport, x: (ts: number) => number, width: number, top: number): string {
  const yOf = (r: number) => round(top + LANE.budget - Math.min(1, Math.max(0, r)) * LANE.budget);
  const pts = { unaddressed: [] as string[], addressed: [] as string[] };
  const over = { unaddressed: [] as string[], addressed: [] as string[] };
  for (const d of report.dispatches) {
    const pool = d.trigger === "normal" ? "unaddressed" : "addressed";
    pts[pool].push(`${x(d.at)},${yOf(d.outcome.budgetRatio)}`);
    if (d.outcome.skipReason === "over-budget") over[pool].push(`M${x(d.at)} ${top}v7`);
  }
  const lines = (["unaddressed", "addressed"] as const).map((pool) => (pts[pool].length ? `<polyline class="${pool}" points="${pts[pool].join(" ")}"/>` : "")).join("");
  return (
    `<g class="budget"><rect class="frame" x="0" y="${top}" width="${width}" height="${LANE.budget}"/>` +
    `<line class="full" x1="0" y1="${top}" x2="${width}" y2="${top}"/>` +
    lines +
    `<path class="over-unaddressed" d="${over.unaddressed.join("")}"/><path class="over-addressed" d="${over.addressed.join("")}"/>` +
    `</g>`
  );
}

function renderDispatches(
  report: ReplayReport,
  lines: readonly LogLine[],
  msgIndex: ReadonlyMap<string, number>,
  x: (ts: number) => number,
  top: number,
  sentTop: number,
): string {
  const mid = top + LANE.dispatches / 2;
  const waits: string[] = [];
  const markers: string[] = [];
  const sent: string[] = [];
  report.dispatches.forEach((d, i) => {
    const firstIdx = d.messageIds.length ? msgIndex.get(d.messageIds[0]!) : undefined;
    const first = firstIdx !== undefined ? lines[firstIdx]!.ts : d.at;
    if (first < d.at) waits.push(`M${x(first)} ${mid}H${x(d.at)}`);
    const cls = `d ${d.trigger}${d.outcome.modelCalled ? " called" : ""}${d.outcome.sent ? " sent" : ""}`;
    markers.push(`<circle class="${cls}" cx="${x(d.at)}" cy="${mid}" r="${d.trigger === "normal" ? 4 : 5.5}" data-d="${i}"/>`);
    if (d.outcome.sent) sent.push(`<rect class="reply" x="${round(x(d.at) - 3)}" y="${sentTop + 3}" width="6" height="12" data-d="${i}"/>`);
  });
  return (
    `<g class="waits"><path d="${waits.join("")}"/></g>` +
    `<g class="dispatches">${markers.join("")}</g>` +
    `<g class="sent">${sent.join("")}</g>`
  );
}

function renderAddressed(lines: readonly LogLine[], flags: readonly number[], x: (ts: number) => number, top: number): string {
  const reached: string[] = [];
  const missed: string[] = [];
  const mid = top + LANE.addressed / 2;
  flags.forEach((f, i) => {
    if (!(f & FLAG.gold)) return;
    (f & FLAG.reached ? reached : missed).push(`M${x(lines[i]!.ts)} ${mid}h0`);
  });
  return `<g class="addressed"><path class="reached" d="${reached.join("")}"/><path class="missed" d="${missed.join("")}"/></g>`;
}

/** One path per row and kind: 20,000 dots cost a few dozen elements. */
function renderMessages(
  lines: readonly LogLine[],
  flags: readonly number[],
  rowOf: ReadonlyMap<string, number>,
  othersRow: number,
  rowY: readonly number[],
  x: (ts: number) => number,
): string {
  const kinds = ["plain", "own", "engaged", "mention"] as const;
  const paths = new Map<string, string[]>();
  lines.forEach((l, i) => {
    const f = flags[i]!;
    const kind = f & FLAG.own ? "own" : f & FLAG.mention ? "mention" : f & FLAG.engaged ? "engaged" : "plain";
    const row = rowOf.get(l.sender) ?? othersRow;
    const key = `${row}:${kind}`;
    let p = paths.get(key);
    if (!p) paths.set(key, (p = []));
    p.push(`M${x(l.ts)} ${rowY[row]}h0`);
  });
  const out: string[] = [`<g class="rows">`];
  rowY.forEach((ry, i) => out.push(`<line x1="0" y1="${ry}" x2="100%" y2="${ry}"/>`));
  out.push(`</g><g class="messages">`);
  for (const kind of kinds) {
    for (const [key, p] of paths) if (key.endsWith(`:${kind}`)) out.push(`<path class="m-${kind}" d="${p.join("")}"/>`);
  }
  out.push(`</g>`);
  return out.join("");
}
