// The report of one replayed agent: its shape, and how it is recorded while the replay runs — the
// group client's events (flags, drops, dispatch starts), the monitor's decisions (outcomes,
// payers), then, once every timer has played out, each line's fate and the totals.
import { addressingLabel } from "../group/addressing/reason.ts";
import type { GroupClientEvent } from "../group/group-client.ts";
import type { DispatchDecision } from "../monitor/monitor.ts";
import type { AddressingReason, DropReason, ReplyType, SkipReason, TriggerType, VitalityState } from "../types.ts";
import { AddressedCount, isDirectedAt, Waits, type AddressedReport } from "./addressed.ts";
import type { LogLine } from "./log.ts";
import { PagedColumn } from "./paged-column.ts";
import { ReasonColumn } from "./reason-column.ts";
import { fileStore, memoryStore, type RecordStore } from "./spill.ts";

export interface ReplayDispatch {
  at: number;
  trigger: TriggerType;
  messageIds: string[];
  batchesMerged: number;
  mentionCount: number;
  vitality: { state: VitalityState; messagesIn5m: number; uniqueSpeakersIn5m: number; myMessagesIn5m: number };
  outcome: {
    replyType: ReplyType | null;
    sent: boolean;
    skipReason: SkipReason | null;
    text: string | null;
    budgetRatio: number;
    /** The dispatch reached the model (a gate such as the budget can stop it before). */
    modelCalled: boolean;
    /** Machine-readable detail of a skip or downgrade, e.g. `unaddressed:5m:tokens 24100/24000 +100`, `near-duplicate:0.86`. */
    detail: string | null;
  };
}

export interface ReplayMessage {
  id: string;
  isMention: boolean;
  engaged: boolean;
  /** Why the engine took the line as ours or not (`mention`, `engaged`, `addressed-other:bob`, …), or null for plain talk. */
  why: string | null;
  /** Carried by a dispatch whose model was called. */
  reached: boolean;
  /** The log's annotation: meant for the persona (true/false), or null where not annotated. */
  directed: boolean | null;
}

export interface ReplayReport {
  messages: ReplayMessage[];
  dispatches: ReplayDispatch[];
  drops: Array<{ id: string; reason: DropReason }>;
  /** Model-called dispatches by who paid for them (the sender who addressed us), most first. */
  payers: Array<{ sender: string; dispatches: number }>;
  summary: {
    messages: number;
    dispatches: number;
    mentions: number;
    maxWaitMs: number;
    p95WaitMs: number;
    /** Longest wait of a mentioning message for the dispatch that carried it. */
    maxMentionWaitMs: number;
    /** Model calls the responder received. */
    modelCalls: number;
    sent: number;
    skipped: Partial<Record<SkipReason, number>>;
    replyTypes: Partial<Record<ReplyType, number>>;
  };
  /** Reach of the lines annotated as meant for the persona; null when the log has no annotations. */
  addressed: AddressedReport | null;
}

/** What the text report shows of a line flagged as a mention or engaged. */
export interface ShownLine {
  sender: string;
  /** The content's first 100 characters. */
  text: string;
  isMention: boolean;
  engaged: boolean;
}

/** What the report's readers need beyond the report's totals: kept (or written out) while the replay runs. */
export interface ReplayView {
  /** The dispatches, in the order they started (the report's `dispatches` when the log is in memory). */
  dispatches(): Iterable<ReplayDispatch>;
  /** The drops, in order (the report's `drops` when the log is in memory). */
  drops(): Iterable<{ id: string; reason: DropReason }>;
  /** The flagged lines the dispatch a walk of `dispatches()` gave last carried, in its order (throws for another dispatch). */
  shown(dispatch: ReplayDispatch): Iterable<ShownLine>;
  /**
   * The log lines the dispatch a walk of `dispatches()` gave last carried, by position in time
   * order, and the time of its first message when that is a log line (not another agent's reply).
   * Throws for another dispatch.
   */
  carried(dispatch: ReplayDispatch): { ordinals: readonly number[]; firstTs: number | undefined };
  /** The line at this position: mentioned the agent, engaged it, reached a model call (bits of {@link LINE_BITS}). */
  lineBits(ordinal: number): number;
  /** Each dispatched line's wait for the first dispatch that carried it, mentions and unaddressed lines (neither a mention nor engaged) apart. */
  waitsByKind: { mentions: Waits; unaddressed: Waits };
  /** Lines and mentions per UTC hour (start of the hour, epoch ms). */
  lineHours: ReadonlyMap<number, { messages: number; mentions: number }>;
  /** The last line's time (undefined: no lines). */
  lastTs: number | undefined;
  /** Whether the line at this position (in time order) mentioned the agent. */
  isMention(ordinal: number): boolean;
  /** The waits of the annotated lines meant for the persona that reached a model call (the report's `addressed` waits). */
  goldWaits: Waits;
  /** Removes what was written out (a temp file); the view is not read after. */
  close(): void;
}

export interface ReplayRecorder {
  /** A log line about to be fed, at its position in time order. */
  onLine(l: LogLine, ordinal: number): void;
  /** The batch is in: its lines' accepted events have come (the group client takes a batch at once). */
  endBatch(): void;
  /** The group client's events: a line accepted with its flags, a drop, a dispatch starting. */
  onEvent(e: GroupClientEvent): void;
  /** The monitor's decision on a dispatch: its outcome, and who paid for a model call. */
  onDecision(d: DispatchDecision): void;
  /** The msg ids of the newest dispatch: one dispatch runs at a time per agent, so the one sending. */
  newestDispatchIds(): readonly string[];
  /** The position in the log of each of those messages (undefined: not a log line, another agent's reply). */
  newestDispatchLines(): ReadonlyArray<number | undefined>;
  /**
   * The report, once the client and monitor are closed; `modelCalls` as the stand-in model counted
   * them. Walks the lines once more, in the order fed; each line's fate goes to `onMessage` (only
   * with `fates`).
   */
  finish(modelCalls: number, lines: Iterable<LogLine>, onMessage?: OnMessage): { report: ReplayReport; view: ReplayView };
}

/** What the last dispatch that carried a line did with it: none carried it, skipped over budget (which allowance), or anything else. */
export type LastCarrier = "none" | "over-budget-unaddressed" | "over-budget-addressed" | "other";

/** A line's fate beyond its message: the line, the rule that decided it (undefined: plain or never accepted), its last dispatch. */
export interface LineFate {
  line: LogLine;
  rule: AddressingReason["rule"] | undefined;
  lastCarrier: LastCarrier;
}

/** Hears each line's fate once the replay is over, in time order. */
export type OnMessage = (m: ReplayMessage, fate: LineFate) => void;

// Per line, by position, only what its fate needs once the replay is over: these bits and the
// addressing reason's index (1–2 bytes a line, paged: a few pages in memory, the rest in temp files).
// The rest of a line lives on the message the group client holds (a mark in a WeakMap), and goes with it.
const MENTION = 1;
const ENGAGED = 2;
const DISPATCHED = 4;
const REACHED = 8;
/** What {@link ReplayView.lineBits} gives. */
export const LINE_BITS = { mention: MENTION, engaged: ENGAGED, reached: REACHED } as const;
/** Two bits: what the last dispatch that carried the line did (LAST_CARRIERS' index; 0 none). */
const CARRIER_SHIFT = 4;
const CARRIER = 3 << CARRIER_SHIFT;
const LAST_CARRIERS: readonly LastCarrier[] = ["none", "over-budget-unaddressed", "over-budget-addressed", "other"];
const HOUR = 3_600_000;

/** What a held message is in the log: its position and time, whether it is gold, and what the text report shows of it. */
interface LineMark {
  ordinal: number;
  ts: number;
  gold: boolean;
  shown: ShownLine | undefined;
}

/** A dispatch that started and has no outcome yet, with the marks of its log lines. */
interface Pending {
  id: number;
  rec: ReplayDispatch;
  marks: LineMark[];
  /** Its first message's time, when that is a log line. */
  firstTs: number | undefined;
  decided: boolean;
}

/** A settled dispatch as kept (or written out): the record, the flagged lines it shows, the log lines it carried. */
interface DispatchRecord {
  rec: ReplayDispatch;
  shown: ShownLine[];
  lines: number[];
  first: number | null;
}

/**
 * `spill`: write the dispatches and drops to temp files as they settle (a log walked from its
 * file); else keep them in the report. `fates`: keep each line's addressing reason for the fates
 * `finish` gives (without, `finish` takes no `onMessage`).
 */
export function createReplayRecorder(p: { count: number; persona: string; isPersona: (sender: string) => boolean; spill: boolean; fates?: boolean }): ReplayRecorder {
  const report: ReplayReport = {
    messages: [],
    dispatches: [],
    drops: [],
    payers: [],
    summary: { messages: p.count, dispatches: 0, mentions: 0, maxWaitMs: 0, p95WaitMs: 0, maxMentionWaitMs: 0, modelCalls: 0, sent: 0, skipped: {}, replyTypes: {} },
    addressed: null,
  };
  const dispatches: RecordStore<DispatchRecord> = p.spill ? fileStore("dispatches") : memoryStore();
  const drops: RecordStore<{ id: string; reason: DropReason }> = p.spill ? fileStore("drops") : memoryStore();
  const bits = new PagedColumn({ name: "line-bits", spill: p.spill });
  const why = p.fates === false ? undefined : new ReasonColumn(p.count, { spill: p.spill });
  // The lines of the batch being fed (accepted events come while it is fed), then each accepted
  // message's mark for as long as the group client holds it.
  let feeding = new Map<string, { l: LogLine; ordinal: number }>();
  const marks = new WeakMap<object, LineMark>();
  const pending: Pending[] = [];
  let newest: readonly string[] = [];
  let newestLines: ReadonlyArray<number | undefined> = [];
  const paid = new Map<string, number>();
  const waits = new Waits();
  const waitsByKind = { mentions: new Waits(), unaddressed: new Waits() };
  const addressed = new AddressedCount();
  let maxMentionWait = 0;

  const onDispatch = (e: Extract<GroupClientEvent, { type: "dispatch-start" }>) => {
    const b = e.batch;
    const rec: ReplayDispatch = {
      at: b.now,
      trigger: b.mentionInfo.triggerType,
      messageIds: b.messages.map((m) => m.msgId),
      batchesMerged: b.mentionInfo.batchesMerged,
      mentionCount: b.mentionInfo.mentionCount,
      vitality: {
        state: b.vitality.state,
        messagesIn5m: b.vitality.messagesIn5m,
        uniqueSpeakersIn5m: b.vitality.uniqueSpeakersIn5m,
        myMessagesIn5m: b.vitality.myMessagesIn5m,
      },
      outcome: { replyType: null, sent: false, skipReason: null, text: null, budgetRatio: 0, modelCalled: false, detail: null },
    };
    newest = rec.messageIds;
    newestLines = b.messages.map((m) => marks.get(m)?.ordinal);
    const carried: LineMark[] = [];
    for (const m of b.messages) {
      const mark = marks.get(m);
      // Not a log line: another agent's reply in a room.
      if (mark === undefined) continue;
      carried.push(mark);
      const i = mark.ordinal;
      const was = bits.get(i);
      if (was & DISPATCHED) continue;
      bits.set(i, was | DISPATCHED);
      if (was & MENTION) waitsByKind.mentions.add(b.now - mark.ts);
      else if (!(was & ENGAGED)) waitsByKind.unaddressed.add(b.now - mark.ts);
      const wait = Math.max(0, b.now - mark.ts);
      waits.add(wait);
      if (was & MENTION && wait > maxMentionWait) maxMentionWait = wait;
    }
    const first = b.messages.length ? marks.get(b.messages[0]!) : undefined;
    pending.push({ id: b.dispatchId, rec, marks: carried, firstTs: first?.ts, decided: false });
  };

  /** Dispatches leave in the order they started, each once it has its outcome (or at the end). */
  const settle = (all: boolean) => {
    while (pending.length && (all || pending[0]!.decided)) {
      const { rec, marks: carried, firstTs } = pending.shift()!;
      const s = report.summary;
      s.dispatches++;
      if (rec.outcome.sent) s.sent++;
      else if (rec.outcome.skipReason) s.skipped[rec.outcome.skipReason] = (s.skipped[rec.outcome.skipReason] ?? 0) + 1;
      if (rec.outcome.sent && rec.outcome.replyType) s.replyTypes[rec.outcome.replyType] = (s.replyTypes[rec.outcome.replyType] ?? 0) + 1;
      // A message is reached by the first dispatch that carried it and called the model.
      if (rec.outcome.modelCalled) {
        for (const mark of carried) {
          if (bits.get(mark.ordinal) & REACHED) continue;
          bits.set(mark.ordinal, bits.get(mark.ordinal) | REACHED);
          if (mark.gold) addressed.waits.add(Math.max(0, rec.at - mark.ts));
        }
      }
      const o = rec.outcome;
      const carrier = o.skipReason === "over-budget" ? (o.detail?.startsWith("unaddressed:") ? 1 : 2) : 3;
      for (const mark of carried) bits.set(mark.ordinal, (bits.get(mark.ordinal) & ~CARRIER) | (carrier << CARRIER_SHIFT));
      const shown = carried.flatMap((mark) => (mark.shown ? [mark.shown] : []));
      dispatches.push({ rec, shown, lines: carried.map((mark) => mark.ordinal), first: firstTs ?? null });
    }
  };

  return {
    onLine(l, ordinal) {
      feeding.set(l.id, { l, ordinal });
    },
    endBatch() {
      feeding = new Map();
    },
    onEvent(e) {
      if (e.type === "accepted") {
        const fed = feeding.get(e.message.msgId);
        if (fed === undefined) return;
        const { l, ordinal: i } = fed;
        why?.set(i, e.message.addressing);
        const { isMention, engaged } = e.message;
        bits.set(i, (bits.get(i) & ~(MENTION | ENGAGED)) | (isMention ? MENTION : 0) | (engaged ? ENGAGED : 0));
        marks.set(e.message, {
          ordinal: i,
          ts: l.ts,
          gold: !p.isPersona(l.sender) && isDirectedAt(l, p.persona) === true,
          shown: isMention || engaged ? { sender: l.sender, text: l.content.slice(0, 100), isMention, engaged } : undefined,
        });
      } else if (e.type === "dropped") {
        drops.push({ id: e.msgId, reason: e.reason });
      } else if (e.type === "dispatch-start") onDispatch(e);
    },
    onDecision(d) {
      if (d.payer !== undefined && d.modelCalls > 0) paid.set(d.payer, (paid.get(d.payer) ?? 0) + 1);
      const at = pending.find((x) => x.id === d.dispatchId);
      if (!at) return;
      at.rec.outcome = {
        replyType: d.replyType,
        sent: d.outcome.kind === "sent",
        skipReason: d.outcome.kind === "sent" ? null : d.outcome.reason,
        text: d.outcome.kind === "sent" ? d.outcome.text : null,
        budgetRatio: Math.round(d.budgetRatio * 1000) / 1000,
        modelCalled: d.modelCalls > 0,
        detail: d.detail ?? null,
      };
      at.decided = true;
      settle(false);
    },
    newestDispatchIds: () => newest,
    newestDispatchLines: () => newestLines,
    finish(modelCalls, lines, onMessage) {
      if (onMessage && why === undefined) throw new Error("each line's fate was not kept (started without fates)");
      settle(true);
      report.summary.modelCalls = modelCalls;
      const lineHours = new Map<number, { messages: number; mentions: number }>();
      let lastTs: number | undefined;
      let i = 0;
      for (const l of lines) {
        const b = bits.get(i);
        const isMention = (b & MENTION) !== 0;
        const engaged = (b & ENGAGED) !== 0;
        const directed = p.isPersona(l.sender) ? null : isDirectedAt(l, p.persona);
        const reason = why?.get(i);
        onMessage?.(
          { id: l.id, isMention, engaged, why: reason === undefined ? null : addressingLabel(reason), reached: (b & REACHED) !== 0, directed },
          { line: l, rule: reason?.rule, lastCarrier: LAST_CARRIERS[(b & CARRIER) >> CARRIER_SHIFT]! },
        );
        if (isMention) report.summary.mentions++;
        if (directed !== null) addressed.add({ directed, flagged: isMention || engaged, reached: (b & REACHED) !== 0 });
        const hour = Math.floor(l.ts / HOUR) * HOUR;
        const row = lineHours.get(hour) ?? lineHours.set(hour, { messages: 0, mentions: 0 }).get(hour)!;
        lastTs = l.ts;
        row.messages++;
        if (isMention) row.mentions++;
        i++;
      }
      why?.remove();
      const s = report.summary;
      s.maxWaitMs = waits.max;
      s.p95WaitMs = waits.percentile(95);
      s.maxMentionWaitMs = maxMentionWait;
      report.addressed = addressed.report();
      report.payers = [...paid].map(([sender, dispatches]) => ({ sender, dispatches })).sort((a, b) => b.dispatches - a.dispatches || a.sender.localeCompare(b.sender));
      if (!p.spill) {
        report.dispatches = [...dispatches.records()].map((d) => d.rec);
        report.drops = [...drops.records()];
      }
      // The shown and carried lines travel with their dispatch's record: those of the record a walk
      // gave last. (Not a WeakMap of every record given: its entries carried each record read back
      // through the young generation's collections into the old one, ~40 MB of garbage at a time.)
      // Asking about any other dispatch is a caller's mistake, said at once rather than answered empty.
      let last: DispatchRecord | undefined;
      const bitsAt = (ordinal: number) => (Number.isInteger(ordinal) && ordinal >= 0 && ordinal < p.count ? bits.get(ordinal) : 0);
      const recordOf = (d: ReplayDispatch) => {
        if (last?.rec !== d) throw new Error("a dispatch's shown and carried lines are kept only for the dispatch a walk of dispatches() gave last");
        return last;
      };
      const view: ReplayView = {
        *dispatches() {
          for (const d of dispatches.records()) {
            last = d;
            yield d.rec;
          }
        },
        drops: () => drops.records(),
        shown: (d) => recordOf(d).shown,
        carried: (d) => {
          const r = recordOf(d);
          return { ordinals: r.lines, firstTs: r.first ?? undefined };
        },
        lineBits: (ordinal) => bitsAt(ordinal) & (MENTION | ENGAGED | REACHED),
        waitsByKind,
        lineHours,
        lastTs,
        isMention: (ordinal) => (bitsAt(ordinal) & MENTION) !== 0,
        goldWaits: addressed.waits,
        close() {
          dispatches.remove();
          drops.remove();
          bits.remove();
        },
      };
      return { report, view };
    },
  };
}
