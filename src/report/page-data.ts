// The report page's data block: what the inline script reads for hover and click details (the
// layout, each line compactly as columns, each dispatch's decision). Plain values only, written
// as JSON a piece at a time (the columns from the buckets the walk of the lines filled), escaped
// for the inline JSON element.
import { LINE_BITS } from "../replay/replay-report.ts";
import type { LogLine } from "../replay/log.ts";
import type { Buckets } from "./buckets.ts";
import type { Layout, SenderRows, TimeScale } from "./chart-layout.ts";
import { escapeForScript } from "./html-text.ts";
import type { PageRun } from "./page-run.ts";

/** Message flags in the page data (bits). */
export const FLAG = { mention: 1, engaged: 2, reached: 4, gold: 8, own: 16 } as const;

/** A line's {@link FLAG} bits: the run's bits for its position, whether it is meant for the persona (`gold`), whether it is the persona's own. */
export function lineFlags(bits: number, gold: boolean, own: boolean): number {
  let f = 0;
  if (bits & LINE_BITS.mention) f |= FLAG.mention;
  if (bits & LINE_BITS.engaged) f |= FLAG.engaged;
  if (bits & LINE_BITS.reached) f |= FLAG.reached;
  if (gold) f |= FLAG.gold;
  if (own) f |= FLAG.own;
  return f;
}

/** The message columns, in the page data's order: each a bucket the walk of the lines fills. */
export const COLUMNS = ["ts", "s", "row", "text", "f"] as const;
const bucketOf = (column: (typeof COLUMNS)[number]) => `col:${column}`;

/** Adds the line at position `i` (its flags `f`) to the columns. */
export function addLineColumns(buckets: Buckets, l: LogLine, i: number, f: number, senders: SenderRows): void {
  const sep = i === 0 ? "" : ",";
  buckets.add(bucketOf("ts"), sep + JSON.stringify(l.ts));
  buckets.add(bucketOf("s"), sep + JSON.stringify(l.sender));
  buckets.add(bucketOf("row"), sep + JSON.stringify(senders.rowOf.get(l.sender) ?? senders.rowSenders.length));
  buckets.add(bucketOf("text"), sep + JSON.stringify(l.content));
  buckets.add(bucketOf("f"), sep + JSON.stringify(f));
}

/** The data block's JSON (as JSON.stringify writes it, escaped for the inline element), to `out` a piece at a time. */
export function writePageData(p: { run: PageRun; time: TimeScale; layout: Layout; senders: SenderRows; buckets: Buckets }, out: (s: string) => void): void {
  const put = (s: string) => out(escapeForScript(s));
  put(`{"t0":${JSON.stringify(p.time.t0)},"t1":${JSON.stringify(p.time.t1)},"layout":${JSON.stringify(p.layout)},"msgs":{`);
  COLUMNS.forEach((c, k) => {
    put(`${k ? "," : ""}"${c}":[`);
    p.buckets.drain(bucketOf(c), put);
    put("]");
  });
  put(`},"ds":[`);
  let first = true;
  for (const { d, ordinals, firstTs } of p.run.dispatches()) {
    const item = {
      at: d.at,
      // A dispatch carries its messages oldest first: the first one's wait is the longest.
      first: Math.min(d.at, firstTs ?? d.at),
      trigger: d.trigger,
      ids: ordinals,
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
    };
    put(`${first ? "" : ","}${JSON.stringify(item)}`);
    first = false;
  }
  put("]}");
}
