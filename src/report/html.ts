// `replay --html`: the run as one self-contained page. The picture (time axis, vitality band,
// budget line, dispatch markers with their waits, sent replies, addressed lines, messages by
// sender) is drawn here as static SVG; a small inline script only adds hover/click details from
// an inline JSON block. Nothing is fetched: a Content-Security-Policy forbids every network load,
// and only the page's own script (by hash) may run.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { LogLine } from "../replay/log.ts";
import { percentile } from "../replay/addressed.ts";
import { personaMatcher, type ReplayReport } from "../replay/replay.ts";
import { hourlySummary } from "../replay/text-report.ts";
import type { RoomMetrics } from "../replay/room.ts";
import { chartStyle, escapeHtml, jsonForScript } from "./html-text.ts";

const SCRIPT = readFileSync(new URL("./page-script.js", import.meta.url), "utf8");
const SCRIPT_HASH = createHash("sha256").update(SCRIPT).digest("base64");

/** Senders with a row of their own; the rest share the last row. */
const SENDER_ROWS = 24;
const LANE = { axis: 24, vitality: 16, budget: 44, dispatches: 36, sent: 18, addressed: 18, sender: 12 } as const;
const GAP = 6;

/** Message flags in the page data (bits). */
export const FLAG = { mention: 1, engaged: 2, reached: 4, gold: 8, own: 16 } as const;

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

interface Layout {
  left: number;
  width: number;
  height: number;
  /** y of each row (sender rows first, then "others"). */
  rowY: number[];
  lanes: Record<string, number>;
}

const round = (n: number) => Math.round(n * 10) / 10;

export function renderHtmlReport(p: HtmlReportInput): string {
  const { report, lines } = p;
  const t0 = lines[0]?.ts ?? 0;
  const t1 = Math.max(t0 + 1, lines.at(-1)?.ts ?? 0, report.dispatches.at(-1)?.at ?? 0);
  const minutes = (t1 - t0) / 60_000;
  // 4 px a minute, or half a pixel a message on a busy day, scrolled sideways past the window.
  const width = Math.round(Math.min(24_000, Math.max(1_000, minutes * 4, lines.length / 2)));
  const x = (ts: number) => round(((ts - t0) / (t1 - t0)) * width);

  // Senders by how much they say; the persona always gets a row.
  const isPersona = personaMatcher(p.persona, p.aid);
  const counts = new Map<string, number>();
  for (const l of lines) counts.set(l.sender, (counts.get(l.sender) ?? 0) + 1);
  const ranked = [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)! || (a < b ? -1 : 1));
  const own = ranked.find(isPersona);
  const rowSenders = [...(own ? [own] : []), ...ranked.filter((s) => s !== own)].slice(0, SENDER_ROWS);
  const others = ranked.length > rowSenders.length;
  const senderIndex = new Map(ranked.map((s, i) => [s, i]));
  const rowOf = new Map(rowSenders.map((s, i) => [s, i]));

  const annotated = report.addressed !== null;
  const lanes: Record<string, number> = {};
  let y = 0;
  for (const [name, h] of Object.entries(LANE)) {
    if (name === "sender" || (name === "addressed" && !annotated)) continue;
    lanes[name] = y;
    y += h + GAP;
  }
  const rowY = [...rowSenders, ...(others ? ["others"] : [])].map((_, i) => y + LANE.sender / 2 + i * LANE.sender);
  const height = y + rowY.length * LANE.sender + GAP;
  const layout: Layout = { left: 0, width, height, rowY, lanes };

  const msgIndex = new Map(lines.map((l, i) => [l.id, i]));
  const flags = report.messages.map((m, i) => {
    let f = 0;
    if (m.isMention) f |= FLAG.mention;
    if (m.engaged) f |= FLAG.engaged;
    if (m.reached) f |= FLAG.reached;
    if (m.directed) f |= FLAG.gold;
    if (isPersona(lines[i]!.sender)) f |= FLAG.own;
    return f;
  });

  const svg: string[] = [];
  svg.push(renderAxis(t0, t1, x, width, height));
  svg.push(renderVitality(report, x, width, lanes.vitality!));
  svg.push(renderBudget(report, x, width, lanes.budget!));
  svg.push(renderDispatches(report, lines, msgIndex, x, lanes.dispatches!, lanes.sent!));
  if (annotated) svg.push(renderAddressed(lines, flags, x, lanes.addressed!));
  svg.push(renderMessages(lines, flags, rowOf, rowSenders.length, rowY, x));
  svg.push(`<g id="highlight"></g>`);

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

  const data = {
    t0,
    t1,
    layout,
    senders: ranked,
    msgs: {
      ts: lines.map((l) => l.ts),
      s: lines.map((l) => senderIndex.get(l.sender)!),
      row: lines.map((l) => rowOf.get(l.sender) ?? rowSenders.length),
      text: lines.map((l) => l.content),
      f: flags,
    },
    ds: report.dispatches.map((d) => ({
      at: d.at,
      // A dispatch carries its messages oldest first: the first one's wait is the longest.
      first: Math.min(d.at, lines[msgIndex.get(d.messageIds[0] ?? "") ?? -1]?.ts ?? d.at),
      trigger: d.trigger,
      ids: d.messageIds.map((id) => msgIndex.get(id)!).filter((i) => i !== undefined),
      batches: d.batchesMerged,
      mentions: d.mentionCount,
      state: d.vitality.state,
      in5m: d.vitality.messagesIn5m,
      speakers5m: d.vitality.uniqueSpeakersIn5m,
      replyType: d.outcome.replyType,
      sent: d.outcome.sent,
      skipReason: d.outcome.skipReason,
      text: d.outcome.text,
      budget: d.outcome.budgetRatio,
      modelCalled: d.outcome.modelCalled,
      detail: d.outcome.detail,
    })),
  };

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
<p class="sub">${escapeHtml(new Date(t0).toISOString().slice(0, 16).replace("T", " "))} – ${escapeHtml(new Date(t1).toISOString().slice(0, 16).replace("T", " "))} UTC · ${lines.length} messages from ${ranked.length} senders</p>
</header>
${renderSummary(report, lines)}${p.room ? renderRoom(p.room) : ""}
${renderLegend(annotated)}
<main id="view">
<svg id="labels" xmlns="http://www.w3.org/2000/svg" width="170" height="${height}" role="presentation">${labels
    .map(([t, ly]) => `<text x="164" y="${ly}" text-anchor="end">${escapeHtml(t.length > 26 ? `${t.slice(0, 25)}…` : t)}</text>`)
    .join("")}</svg>
<div id="scroller"><svg id="chart" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="replay timeline">${svg.join("\n")}</svg></div>
</main>
<aside id="detail" aria-live="polite"></aside>
${renderHours(report, lines)}
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
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

/**
 * Waits of the lines a dispatch carried (from the line to the first dispatch that carried it), by
 * what they were: mentions, and unaddressed lines (neither a mention nor engaged). One headline
 * for all lines would be mostly unaddressed talk, which waits by design.
 */
export function waitsByKind(report: ReplayReport, lines: readonly LogLine[]): { mentions: number[]; unaddressed: number[] } {
  const carriedAt = new Map<string, number>();
  for (const d of report.dispatches) for (const id of d.messageIds) if (!carriedAt.has(id)) carriedAt.set(id, d.at);
  const out = { mentions: [] as number[], unaddressed: [] as number[] };
  lines.forEach((l, i) => {
    const at = carriedAt.get(l.id);
    const m = report.messages[i];
    if (at === undefined || !m) return;
    if (m.isMention) out.mentions.push(at - l.ts);
    else if (!m.engaged) out.unaddressed.push(at - l.ts);
  });
  out.mentions.sort((a, b) => a - b);
  out.unaddressed.sort((a, b) => a - b);
  return out;
}

function renderSummary(report: ReplayReport, lines: readonly LogLine[]): string {
  const s = report.summary;
  const waits = waitsByKind(report, lines);
  const p95max = (w: readonly number[]) => `${(percentile(w, 95) / 1000).toFixed(1)} s / ${((w.at(-1) ?? 0) / 1000).toFixed(1)} s`;
  const a = report.addressed;
  const stat = (label: string, value: string) => `<div class="stat"><b>${escapeHtml(value)}</b><span>${escapeHtml(label)}</span></div>`;
  const stats = [
    stat("messages", String(s.messages)),
    stat("mentions", String(s.mentions)),
    stat("dispatches", String(s.dispatches)),
    stat("model calls", `${s.modelCalls} (${((100 * s.modelCalls) / Math.max(1, s.messages)).toFixed(1)}% of messages)`),
    stat("replies sent", String(s.sent)),
    stat("wait p95 / max · unaddressed lines", p95max(waits.unaddressed)),
    stat("wait p95 / max · mentions", p95max(waits.mentions)),
    ...(a ? [stat("addressed lines reached", `${a.reached}/${a.gold} (${Math.round(a.reachRate * 100)}%)`), stat("flag precision / recall", `${a.precision.toFixed(2)} / ${a.recall.toFixed(2)}`)] : []),
  ];
  // Calls and skips by reason, one bar each, scaled to the largest.
  const reasons: Array<[string, number]> = [["model called", s.modelCalls], ...Object.entries(s.skipped).map(([k, v]) => [`skipped: ${k}`, v ?? 0] as [string, number])];
  const max = Math.max(1, ...reasons.map(([, v]) => v));
  const bars = reasons
    .map(([k, v]) => `<div class="bar"><span class="k">${escapeHtml(k)}</span><span class="b" style="width:${Math.round((200 * v) / max)}px"></span><span class="v">${v}</span></div>`)
    .join("");
  return `<section id="summary"><div class="stats">${stats.join("")}</div><div class="bars" id="reasons"><h2>calls and skips by reason</h2>${bars}</div></section>`;
}

/** Every mark the chart draws, explained; `data-mark` names the marks each item stands for. */
function renderLegend(annotated: boolean): string {
  const item = (cls: string, text: string, marks?: string) =>
    `<span class="key"${marks ? ` data-mark="${marks}"` : ""}><i class="${cls}"></i>${escapeHtml(text)}</span>`;
  const group = (name: string) => `<span class="legend-group">${escapeHtml(name)}:</span>`;
  return `<p id="legend">${[
    group("dispatches and lines"),
    item("k-mention", "mention", "circle.d.mention, path.m-mention"),
    item("k-engaged", "engaged", "circle.d.engaged, path.m-engaged"),
    item("k-normal", "unaddressed (normal)", "circle.d.normal"),
    item("k-hollow", "no model call (hollow)"),
    item("k-line k-wait", "wait: oldest line carried → dispatch", ".waits path"),
    item("k-reply", "reply sent", "rect.reply"),
    item("k-own", "persona's own line", "path.m-own"),
    item("k-plain", "other line", "path.m-plain"),
    group("vitality"),
    item("v-DORMANT", "dormant", "rect.v-DORMANT"),
    item("v-COOLING", "cooling", "rect.v-COOLING"),
    item("v-ACTIVE", "active", "rect.v-ACTIVE"),
    item("v-HEATED", "heated", "rect.v-HEATED"),
    group("budget (share of the tightest window)"),
    item("k-line k-budget-unaddressed", "unaddressed allowance used", "polyline.unaddressed"),
    item("k-line k-budget-addressed", "addressed allowance used", "polyline.addressed"),
    item("k-line k-full", "100%: spent", "line.full"),
    item("k-tick k-over-unaddressed", "unaddressed batch skipped over budget (as meant)", "path.over-unaddressed"),
    item("k-tick k-over-addressed", "mention/engaged refused for budget", "path.over-addressed"),
    ...(annotated ? [group("annotated"), item("k-reached", "addressed, reached", "path.reached"), item("k-missed", "addressed, missed", "path.missed")] : []),
  ].join("")} · click a dispatch to pin its details</p>`;
}

function renderHours(report: ReplayReport, lines: readonly LogLine[]): string {
  const rows = hourlySummary(report, lines)
    .map((r) => `<tr><td>${new Date(r.hour).toISOString().slice(0, 13).replace("T", " ")}:00</td><td>${r.messages}</td><td>${r.mentions}</td><td>${r.dispatches}</td><td>${r.modelCalls}</td><td>${r.sent}</td><td>${r.skipped}</td></tr>`)
    .join("");
  return `<section id="hours"><h2>per hour</h2><table><thead><tr><th>hour (UTC)</th><th>messages</th><th>mentions</th><th>dispatches</th><th>model calls</th><th>sent</th><th>skipped</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** A room replay's figures, below the first agent's summary. */
function renderRoom(room: RoomMetrics): string {
  const stat = (label: string, value: string) => `<div class="stat"><b>${escapeHtml(value)}</b><span>${escapeHtml(label)}</span></div>`;
  const stats = [
    stat("agents in the room", String(room.agents)),
    stat("agent messages per person message", `${room.agentPerPerson.toFixed(3)} (${room.agentMessages}/${room.personMessages})`),
    stat("open questions", String(room.openQuestions)),
    stat("answered by 0 / 1 / 2+ agents", `${room.answeredBy.none} / ${room.answeredBy.one} / ${room.answeredBy.twoOrMore}`),
    stat("answered ones with 2+ answers", `${(room.multiAnswerRate * 100).toFixed(0)}%`),
    stat("longest agent chain", String(room.longestAgentChain)),
  ];
  return `<section id="room"><h2>the room</h2><div class="stats">${stats.join("")}</div></section>`;
}
