// The text form of a replay report: the dispatch timeline (optionally filtered), the totals and a
// per-hour table, from the report and what the replay kept or wrote out (never the lines), a line at a time.
import type { ReplayDispatch, ReplayReport, ReplayView } from "./replay.ts";

export const ONLY_FILTERS = ["mentions", "engaged", "skips", "sent"] as const;
export type OnlyFilter = (typeof ONLY_FILTERS)[number];

const KEEP: Record<OnlyFilter, (d: ReplayDispatch) => boolean> = {
  mentions: (d) => d.trigger === "mention",
  engaged: (d) => d.trigger === "engaged",
  skips: (d) => !d.outcome.sent,
  sent: (d) => d.outcome.sent,
};

const clock = (ts: number) => new Date(ts).toISOString().slice(11, 19);
const secs = (ms: number) => (ms / 1000).toFixed(1);

/** Lines of the text report; `only` keeps the dispatches matching any of the filters. */
export function* renderTextReport(report: ReplayReport, view: ReplayView, only: readonly OnlyFilter[] = []): Generator<string> {
  const keep = only.length ? (d: ReplayDispatch) => only.some((f) => KEEP[f](d)) : () => true;
  for (const d of view.dispatches()) {
    if (!keep(d)) continue;
    const o = d.outcome;
    const verdict = o.sent ? `sent ${o.replyType}: ${JSON.stringify(o.text)}` : `skipped (${o.skipReason ?? "?"})`;
    yield `${clock(d.at)}  dispatch ${d.trigger.padEnd(7)} ${String(d.messageIds.length).padStart(3)} msg(s), ` +
      `${d.batchesMerged} batch(es), mentions=${d.mentionCount}, ${d.vitality.state} ` +
      `(${d.vitality.messagesIn5m} msgs/${d.vitality.uniqueSpeakersIn5m} speakers in 5m) → ${verdict}`;
    for (const m of view.shown(d)) yield `            ${m.isMention ? "[mentioned]" : "[engaged]  "} ${m.sender}: ${m.text}`;
  }
  const out: string[] = [];
  const s = report.summary;
  out.push("");
  out.push(
    `${s.messages} messages, ${s.mentions} mentions → ${s.dispatches} dispatches (${s.modelCalls} model calls, ` +
      `${((100 * s.modelCalls) / Math.max(1, s.messages)).toFixed(1)}% of messages), ${s.sent} sent`,
  );
  out.push(`wait: max ${secs(s.maxWaitMs)} s, p95 ${secs(s.p95WaitMs)} s, mentions max ${secs(s.maxMentionWaitMs)} s`);
  const skipped = Object.entries(s.skipped).map(([k, v]) => `${k}=${v}`).join(", ");
  if (skipped) out.push(`skipped: ${skipped}`);
  const drops = new Map<string, number>();
  for (const d of view.drops()) drops.set(d.reason, (drops.get(d.reason) ?? 0) + 1);
  if (drops.size) out.push(`drops: ${[...drops].map(([k, v]) => `${k}=${v}`).join(", ")}`);
  // Who paid for the model calls, shown when someone was held to their share or refused.
  if (s.skipped["sender-over-share"] || s.skipped["strangers-over-share"] || drops.has("refused-sender")) out.push(`paid by: ${report.payers.map((p) => `${p.sender}=${p.dispatches}`).join(", ")}`);
  const a = report.addressed;
  if (a) {
    out.push(
      `addressed (annotated): ${a.reached}/${a.gold} reached a model call (${(a.reachRate * 100).toFixed(0)}%), ` +
        `wait p50 ${secs(a.waitP50Ms)} s, p95 ${secs(a.waitP95Ms)} s; ` +
        `flags precision ${a.precision.toFixed(2)}, recall ${a.recall.toFixed(2)}`,
    );
  }
  out.push("");
  out.push(...renderHourTable(hourRows(view.lineHours, view.dispatches())));
  yield* out;
}

export interface HourRow {
  /** Start of the hour, epoch ms (UTC). */
  hour: number;
  messages: number;
  mentions: number;
  dispatches: number;
  modelCalls: number;
  sent: number;
  skipped: number;
}

const HOUR = 3_600_000;

/** The hour rows from the lines counted per hour and the dispatches. */
export function hourRows(lineHours: ReadonlyMap<number, { messages: number; mentions: number }>, dispatches: Iterable<ReplayDispatch>): HourRow[] {
  const rows = new Map<number, HourRow>();
  const row = (ts: number) => {
    const hour = Math.floor(ts / HOUR) * HOUR;
    let r = rows.get(hour);
    if (!r) rows.set(hour, (r = { hour, messages: 0, mentions: 0, dispatches: 0, modelCalls: 0, sent: 0, skipped: 0 }));
    return r;
  };
  for (const [hour, n] of lineHours) {
    const r = row(hour);
    r.messages += n.messages;
    r.mentions += n.mentions;
  }
  for (const d of dispatches) {
    const r = row(d.at);
    r.dispatches++;
    if (d.outcome.modelCalled) r.modelCalls++;
    if (d.outcome.sent) r.sent++;
    else if (d.outcome.skipReason) r.skipped++;
  }
  return [...rows.values()].sort((a, b) => a.hour - b.hour);
}

export function renderHourTable(rows: readonly HourRow[]): string[] {
  const head = ["hour (UTC)", "messages", "mentions", "dispatches", "model calls", "sent", "skipped"];
  const body = rows.map((r) => [
    new Date(r.hour).toISOString().slice(0, 13).replace("T", " ") + ":00",
    ...[r.messages, r.mentions, r.dispatches, r.modelCalls, r.sent, r.skipped].map(String),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [fmt(head), ...body.map(fmt)];
}
