// The report page's data block: what the inline script reads for hover and click details (the
// layout, each line compactly as columns, each dispatch's decision). Plain values only; the page
// escapes it into an inline JSON element.
import type { LogLine } from "../replay/log.ts";
import type { ReplayReport } from "../replay/replay.ts";
import type { Layout, SenderRows, TimeScale } from "./chart-layout.ts";

/** Message flags in the page data (bits). */
export const FLAG = { mention: 1, engaged: 2, reached: 4, gold: 8, own: 16 } as const;

/** Per line, in the report's message order: its {@link FLAG} bits. */
export function messageFlags(report: ReplayReport, lines: readonly LogLine[], isPersona: (sender: string) => boolean): number[] {
  return report.messages.map((m, i) => {
    let f = 0;
    if (m.isMention) f |= FLAG.mention;
    if (m.engaged) f |= FLAG.engaged;
    if (m.reached) f |= FLAG.reached;
    if (m.directed) f |= FLAG.gold;
    if (isPersona(lines[i]!.sender)) f |= FLAG.own;
    return f;
  });
}

export function pageData(p: {
  report: ReplayReport;
  lines: readonly LogLine[];
  time: TimeScale;
  layout: Layout;
  senders: SenderRows;
  flags: readonly number[];
  msgIndex: ReadonlyMap<string, number>;
}) {
  const { report, lines, senders, msgIndex } = p;
  return {
    t0: p.time.t0,
    t1: p.time.t1,
    layout: p.layout,
    senders: senders.ranked,
    msgs: {
      ts: lines.map((l) => l.ts),
      s: lines.map((l) => senders.senderIndex.get(l.sender)!),
      row: lines.map((l) => senders.rowOf.get(l.sender) ?? senders.rowSenders.length),
      text: lines.map((l) => l.content),
      f: p.flags,
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
}
