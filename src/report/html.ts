// `replay --html`: the run as one self-contained page. The picture (time axis, vitality band,
// budget line, dispatch markers with their waits, sent replies, addressed lines, messages by
// sender) is drawn as static SVG; a small inline script only adds hover/click details from
// an inline JSON block. Nothing is fetched: a Content-Security-Policy forbids every network load,
// and only the page's own script (by hash) may run.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { LogLine } from "../replay/log.ts";
import { personaMatcher, type ReplayReport } from "../replay/replay.ts";
import type { RoomMetrics } from "../replay/room.ts";
import { chartStyle, escapeHtml, jsonForScript } from "./html-text.ts";
import { rankSenders, stackLanes, timeScale } from "./chart-layout.ts";
import { renderChart, renderLabels } from "./chart.ts";
import { messageFlags, pageData } from "./page-data.ts";
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

export function renderHtmlReport(p: HtmlReportInput): string {
  const { report, lines } = p;
  const time = timeScale(report, lines);
  const { t0, t1, width } = time;
  const isPersona = personaMatcher(p.persona, p.aid);
  const senders = rankSenders(lines, isPersona);
  const annotated = report.addressed !== null;
  const layout = stackLanes(width, annotated, senders);
  const msgIndex = new Map(lines.map((l, i) => [l.id, i]));
  const flags = messageFlags(report, lines, isPersona);
  const chart = renderChart({ report, lines, time, senders, layout, flags, msgIndex, annotated });
  const data = pageData({ report, lines, time, layout, senders, flags, msgIndex });

  const title = `replay of ${p.source} as ${p.persona}`;
  return `<!doctype html>
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
<p class="sub">${escapeHtml(new Date(t0).toISOString().slice(0, 16).replace("T", " "))} – ${escapeHtml(new Date(t1).toISOString().slice(0, 16).replace("T", " "))} UTC · ${lines.length} messages from ${senders.ranked.length} senders</p>
</header>
${renderSummary(report, lines)}${p.room ? renderRoom(p.room) : ""}
${renderLegend(annotated)}
<main id="view">
${renderLabels(layout, senders, annotated)}
<div id="scroller">${chart}</div>
</main>
<aside id="detail" aria-live="polite"></aside>
${renderHours(report, lines)}
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
