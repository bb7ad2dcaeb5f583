// The report page's HTML sections around the chart: the totals with calls and skips by reason,
// a room's figures, the legend for every mark, and the per-hour table.
import type { Waits } from "../replay/addressed.ts";
import type { ReplayReport } from "../replay/replay.ts";
import type { HourRow } from "../replay/text-report.ts";
import { ORPHAN_ANSWER_WITHIN_MS, type RoomMetrics } from "../replay/room.ts";
import { escapeHtml } from "./html-text.ts";

const stat = (label: string, value: string) => `<div class="stat"><b>${escapeHtml(value)}</b><span>${escapeHtml(label)}</span></div>`;

/**
 * The totals, and calls and skips by reason. The waits are those of the lines a dispatch carried
 * (from the line to the first dispatch that carried it), by what they were: mentions, and
 * unaddressed lines (neither a mention nor engaged). One headline for all lines would be mostly
 * unaddressed talk, which waits by design.
 */
export function renderSummary(report: ReplayReport, waits: { mentions: Waits; unaddressed: Waits }): string {
  const s = report.summary;
  const p95max = (w: Waits) => `${(w.percentile(95) / 1000).toFixed(1)} s / ${(w.max / 1000).toFixed(1)} s`;
  const a = report.addressed;
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
export function renderLegend(annotated: boolean): string {
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

export function renderHours(hours: readonly HourRow[]): string {
  const rows = hours
    .map((r) => `<tr><td>${new Date(r.hour).toISOString().slice(0, 13).replace("T", " ")}:00</td><td>${r.messages}</td><td>${r.mentions}</td><td>${r.dispatches}</td><td>${r.modelCalls}</td><td>${r.sent}</td><td>${r.skipped}</td></tr>`)
    .join("");
  return `<section id="hours"><h2>per hour</h2><table><thead><tr><th>hour (UTC)</th><th>messages</th><th>mentions</th><th>dispatches</th><th>model calls</th><th>sent</th><th>skipped</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** A room replay's figures, below the first agent's summary. */
export function renderRoom(room: RoomMetrics): string {
  const stats = [
    stat("agents in the room", String(room.agents)),
    stat("agent messages per person message", `${room.agentPerPerson.toFixed(3)} (${room.agentMessages}/${room.personMessages})`),
    stat("open questions", String(room.openQuestions)),
    stat("answered by 0 / 1 / 2+ agents", `${room.answeredBy.none} / ${room.answeredBy.one} / ${room.answeredBy.twoOrMore}`),
    stat("answered ones with 2+ answers", `${(room.multiAnswerRate * 100).toFixed(0)}%`),
    stat("longest agent chain", String(room.longestAgentChain)),
    stat("orphaned questions (no person answered)", `${room.orphans.orphaned} of ${room.orphans.open} annotated open questions`),
    stat("orphaned: answered by 0 / 1 / 2+ agents", `${room.orphans.orphanedAnsweredBy.none} / ${room.orphans.orphanedAnsweredBy.one} / ${room.orphans.orphanedAnsweredBy.twoOrMore}`),
    stat(`orphaned: answered once within ${ORPHAN_ANSWER_WITHIN_MS / 60_000} min`, `${room.orphans.orphanedOnceInTime} (${(room.orphans.orphanedOnceInTimeRate * 100).toFixed(0)}%)`),
    stat("time to the answer, p50 / p90", [room.orphans.timeToAnswerMs.p50, room.orphans.timeToAnswerMs.p90].map((ms) => (ms === null ? "–" : `${Math.round(ms / 1000)} s`)).join(" / ")),
    stat("person-answered, an agent too", String(room.orphans.personAnsweredAlsoByAgent)),
  ];
  return `<section id="room"><h2>the room</h2><div class="stats">${stats.join("")}</div></section>`;
}
