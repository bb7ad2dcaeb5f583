// What the report page reads of a run: the report's totals, a fresh walk of the lines, each line's
// flags by position, each dispatch with the lines it carried, and the waits and hours already
// counted. From a replay that walked its log from the file (its view: nothing held per line but a
// byte) or from a report whose lines and messages are in memory (tests, a replay of lines given).
import { Waits } from "../replay/addressed.ts";
import type { LogLine } from "../replay/log.ts";
import type { LineSource } from "../replay/log-source.ts";
import { LINE_BITS } from "../replay/replay-report.ts";
import type { ReplayDispatch, ReplayReport, ReplayView } from "../replay/replay.ts";

/** A dispatch as the page draws it: the record, the positions of the log lines it carried, its first message's time when a log line. */
export interface PageDispatch {
  d: ReplayDispatch;
  ordinals: readonly number[];
  firstTs: number | undefined;
}

export interface PageRun {
  report: ReplayReport;
  /** Lines in the log, the first and last line's times. */
  count: number;
  firstTs: number | undefined;
  lastTs: number | undefined;
  /** A fresh walk over the lines, in time order. */
  lines(): Iterable<LogLine>;
  /** Whether what is counted of the lines goes to temp files (a log walked from its file). */
  spill: boolean;
  /** The line at this position: {@link LINE_BITS} (mention, engaged, reached). */
  lineBits(ordinal: number): number;
  /** A fresh walk over the dispatches, in the order they started. */
  dispatches(): Iterable<PageDispatch>;
  /** Each dispatched line's wait for the first dispatch that carried it: mentions, and lines neither a mention nor engaged. */
  waitsByKind: { mentions: Waits; unaddressed: Waits };
  /** Lines and mentions per UTC hour. */
  lineHours: ReadonlyMap<number, { messages: number; mentions: number }>;
}

/** The page of a replay walked from its file: what its view kept, the lines walked again from the source. */
export function viewRun(report: ReplayReport, view: ReplayView, source: LineSource): PageRun {
  return {
    report,
    count: source.count,
    spill: !source.inMemory,
    firstTs: source.firstTs,
    lastTs: view.lastTs,
    lines: () => source.lines(),
    lineBits: (i) => view.lineBits(i),
    *dispatches() {
      for (const d of view.dispatches()) yield { d, ...view.carried(d) };
    },
    waitsByKind: view.waitsByKind,
    lineHours: view.lineHours,
  };
}

const HOUR = 3_600_000;

/** The page of a report with its `messages`, and its lines in the same order, in memory. */
export function memoryRun(report: ReplayReport, lines: readonly LogLine[]): PageRun {
  const msgIndex = new Map(lines.map((l, i) => [l.id, i]));
  const waitsByKind = { mentions: new Waits(), unaddressed: new Waits() };
  const carriedAt = new Map<string, number>();
  for (const d of report.dispatches) for (const id of d.messageIds) if (!carriedAt.has(id)) carriedAt.set(id, d.at);
  const lineHours = new Map<number, { messages: number; mentions: number }>();
  lines.forEach((l, i) => {
    const m = report.messages[i];
    const hour = Math.floor(l.ts / HOUR) * HOUR;
    const row = lineHours.get(hour) ?? lineHours.set(hour, { messages: 0, mentions: 0 }).get(hour)!;
    row.messages++;
    if (m?.isMention) row.mentions++;
    const at = carriedAt.get(l.id);
    if (at === undefined || !m) return;
    if (m.isMention) waitsByKind.mentions.add(at - l.ts);
    else if (!m.engaged) waitsByKind.unaddressed.add(at - l.ts);
  });
  return {
    report,
    count: lines.length,
    spill: false,
    firstTs: lines[0]?.ts,
    lastTs: lines.at(-1)?.ts,
    lines: () => lines,
    lineBits: (i) => {
      const m = report.messages[i];
      return m ? (m.isMention ? LINE_BITS.mention : 0) | (m.engaged ? LINE_BITS.engaged : 0) | (m.reached ? LINE_BITS.reached : 0) : 0;
    },
    *dispatches() {
      for (const d of report.dispatches) {
        const firstIdx = msgIndex.get(d.messageIds[0] ?? "");
        yield { d, ordinals: d.messageIds.map((id) => msgIndex.get(id)!).filter((i) => i !== undefined), firstTs: firstIdx === undefined ? undefined : lines[firstIdx]!.ts };
      }
    },
    waitsByKind,
    lineHours,
  };
}
