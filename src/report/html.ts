// `replay --html`: the run as one self-contained page. The picture (time axis, vitality band,
// budget line, dispatch markers with their waits, sent replies, addressed lines, messages by
// sender) is drawn as static SVG; a small inline script only adds hover/click details from
// an inline JSON block. The page is written a piece at a time, so a long log's page is never held. Nothing is fetched: a Content-Security-Policy forbids every network load,
// and only the page's own script (by hash) may run.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isDirectedAt } from "../replay/addressed.ts";
import type { LogLine } from "../replay/log.ts";
import { personaMatcher, PROGRESS_EVERY, type ReplayReport } from "../replay/replay.ts";
import type { RoomMetrics } from "../replay/room.ts";
import { hourRows } from "../replay/text-report.ts";
import { Buckets } from "./buckets.ts";
import { chartStyle, escapeHtml } from "./html-text.ts";
import { LANE, rankSenders, stackLanes, timeScale } from "./chart-layout.ts";
import { ADDRESSED, dot, messageBucket, renderLabels, writeChart } from "./chart.ts";
import { addLineColumns, FLAG, lineFlags, writePageData } from "./page-data.ts";
import { memoryRun, type PageRun } from "./page-run.ts";
import { renderHours, renderLegend, renderRoom, renderSummary } from "./sections.ts";

const SCRIPT = readFileSync(new URL("./page-script.js", import.meta.url), "utf8");
const SCRIPT_HASH = createHash("sha256").update(SCRIPT).digest("base64");

export interface HtmlReportInput {
  report: ReplayReport;
  /** The replayed lines, in the report's message order. */
  lines: readonly LogLine[];
  persona: string;
  /** The persona's aid when given (`replay --aid`): its lines are the persona's too. */
  aid?: string | undefined;
  /** Where the log came from (shown in the title). */
  source: string;
  /** A room replay's figures (`replay --persona A --persona B …`); the page draws the first agent. */
  room?: RoomMetrics | undefined;
}

/** The page of a report whose lines and messages are in memory, as one string. */
export function renderHtmlReport(p: HtmlReportInput): string {
  const pieces: string[] = [];
  writeHtmlReport(memoryRun(p.report, p.lines), p, (s) => pieces.push(s));
  return pieces.join("");
}

/**
 * The page of a run, to `out` a piece at a time. Walks the lines once (each line's dots and data
 * columns into buckets, which spill to temp files past a few KB) and the dispatches a few times:
 * what it holds is per bucket, never per line or per sender (the senders are counted a
 * bucket of them at a time, on disk for a log walked from its file: key-counts.ts).
 */
export function writeHtmlReport(
  run: PageRun,
  p: { persona: string; aid?: string | undefined; source: string; room?: RoomMetrics | undefined; onProgress?: (linesDone: number, linesTotal: number) => void },
  out: (s: string) => void,
): void {
  const { report } = run;
  const isPersona = personaMatcher(p.persona, p.aid);
  let lastDispatchAt: number | undefined;
  for (const { d } of run.dispatches()) lastDispatchAt = d.at;
  const time = timeScale({ firstTs: run.firstTs, lastTs: run.lastTs, count: run.count, lastDispatchAt });
  const { t0, t1, width } = time;
  const senders = rankSenders(sendersOf(run), { total: run.count, spill: run.spill, isPersona });
  const annotated = report.addressed !== null;
  const layout = stackLanes(width, annotated, senders);
  const buckets = new Buckets();
  try {
    // Each line's dots (the addressed lane, its sender's row) and its page data columns.
    const mid = layout.lanes.addressed! + LANE.addressed / 2;
    let i = 0;
    for (const l of run.lines()) {
      const own = isPersona(l.sender);
      const gold = !own && isDirectedAt(l, p.persona) === true;
      const f = lineFlags(run.lineBits(i), gold, own);
      if (annotated && gold) buckets.add(f & FLAG.reached ? ADDRESSED.reached : ADDRESSED.missed, dot(time.x(l.ts), mid));
      const kind = f & FLAG.own ? "own" : f & FLAG.mention ? "mention" : f & FLAG.engaged ? "engaged" : "plain";
      const row = senders.rowOf.get(l.sender) ?? senders.rowSenders.length;
      buckets.add(messageBucket(row, kind), dot(time.x(l.ts), layout.rowY[row]!));
      addLineColumns(buckets, l, i, f, senders);
      if (++i % PROGRESS_EVERY === 0) p.onProgress?.(i, run.count);
    }
    const title = `replay of ${p.source} as ${p.persona}`;
    out(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${SCRIPT_HASH}'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${chartStyle}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<p class="sub">${escapeHtml(new Date(t0).toISOString().slice(0, 16).replace("T", " "))} – ${escapeHtml(new Date(t1).toISOString().slice(0, 16).replace("T", " "))} UTC · ${run.count} messages from ${senders.distinct} senders</p>
</header>
${renderSummary(report, run.waitsByKind)}${p.room ? renderRoom(p.room) : ""}
${renderLegend(annotated)}
<main id="view">
${renderLabels(layout, senders, annotated)}
<div id="scroller">`);
    writeChart({ run, time, layout, annotated, buckets }, out);
    out(`</div>
</main>
<aside id="detail" aria-live="polite"></aside>
${renderHours(hourRows(run.lineHours, dispatchesOf(run)))}
<script type="application/json" id="report-data">`);
    writePageData({ run, time, layout, senders, buckets }, out);
    out(`</script>
<script>${SCRIPT}</script>
</body>
</html>
`);
  } finally {
    buckets.remove();
  }
}

function* sendersOf(run: PageRun): Generator<string> {
  for (const l of run.lines()) yield l.sender;
}

function* dispatchesOf(run: PageRun) {
  for (const { d } of run.dispatches()) yield d;
}
