// The report of one replayed agent: its shape, and how it is recorded while the replay runs — the
// group client's events (flags, drops, dispatch starts), the monitor's decisions (outcomes,
// payers), then, once every timer has played out, each line's fate and the totals.
import { addressingLabel } from "../group/addressing/reason.ts";
import type { GroupClientEvent } from "../group/group-client.ts";
import type { DispatchDecision } from "../monitor/monitor.ts";
import type { DropReason, ReplyType, SkipReason, TriggerType, VitalityState } from "../types.ts";
import { AddressedCount, isDirectedAt, Waits, type AddressedReport } from "./addressed.ts";
import type { LogLine } from "./log.ts";

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

/** What the report's readers need beyond the report, without the lines: kept while the replay runs. */
export interface ReplayView {
  /** A flagged line by id (only flagged lines are kept). */
  shown(id: string): ShownLine | undefined;
  /** Lines and mentions per UTC hour (start of the hour, epoch ms). */
  lineHours: ReadonlyMap<number, { messages: number; mentions: number }>;
  /** Whether the line at this position (in time order) mentioned the agent. */
  isMention(ordinal: number): boolean;
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
  /**
   * The report, once the client and monitor are closed; `modelCalls` as the stand-in model counted
   * them. Walks the lines once more, in the order fed; each line's fate goes to `onMessage`.
   */
  finish(modelCalls: number, lines: Iterable<LogLine>, onMessage: (m: ReplayMessage) => void): { report: ReplayReport; view: ReplayView };
}

// Per line, by position: bits, the addressing label's index and the time. 13 bytes a line; the
// lines themselves are not kept (the log is walked again at the end).
const MENTION = 1;
const ENGAGED = 2;
const ACCEPTED = 4;
const DISPATCHED = 8;
const REACHED = 16;
const GOLD = 32;
const HOUR = 3_600_000;

export function createReplayRecorder(p: { count: number; persona: string; isPersona: (sender: string) => boolean }): ReplayRecorder {
  const report: ReplayReport = {
    messages: [],
    dispatches: [],
    drops: [],
    payers: [],
    summary: { messages: p.count, dispatches: 0, mentions: 0, maxWaitMs: 0, p95WaitMs: 0, maxMentionWaitMs: 0, modelCalls: 0, sent: 0, skipped: {}, replyTypes: {} },
    addressed: null,
  };
  const bits = new Uint8Array(p.count);
  const why = new Uint32Array(p.count);
  const ts = new Float64Array(p.count);
  const labels: Array<string | null> = [null];
  const labelIndex = new Map<string, number>();
  // The lines of the batch being fed (accepted events come while it is fed), then each accepted
  // message's position for as long as the group client holds it.
  let feeding = new Map<string, { l: LogLine; ordinal: number }>();
  const ordinalOf = new WeakMap<object, number>();
  const shown = new Map<string, ShownLine>();
  const byDispatch = new Map<number, ReplayDispatch>();
  const dispatchOrdinals: number[][] = [];
  const paid = new Map<string, number>();
  const waits = new Waits();
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
    byDispatch.set(b.dispatchId, rec);
    report.dispatches.push(rec);
    const ordinals: number[] = [];
    for (const m of b.messages) {
      const i = ordinalOf.get(m);
      // Not a log line: another agent's reply in a room.
      if (i === undefined) continue;
      ordinals.push(i);
      if (bits[i]! & DISPATCHED) continue;
      bits[i]! |= DISPATCHED;
      const wait = Math.max(0, b.now - ts[i]!);
      waits.add(wait);
      if (bits[i]! & MENTION && wait > maxMentionWait) maxMentionWait = wait;
    }
    dispatchOrdinals.push(ordinals);
  };

  return {
    onLine(l, ordinal) {
      feeding.set(l.id, { l, ordinal });
      ts[ordinal] = l.ts;
      if (!p.isPersona(l.sender) && isDirectedAt(l, p.persona) === true) bits[ordinal]! |= GOLD;
    },
    onEvent(e) {
      if (e.type === "accepted") {
        const fed = feeding.get(e.message.msgId);
        if (fed === undefined) return;
        const i = fed.ordinal;
        ordinalOf.set(e.message, i);
        const label = addressingLabel(e.message.addressing);
        let li = 0;
        if (label !== null) {
          li = labelIndex.get(label) ?? labels.push(label) - 1;
          labelIndex.set(label, li);
        }
        why[i] = li;
        bits[i] = (bits[i]! & ~(MENTION | ENGAGED)) | ACCEPTED | (e.message.isMention ? MENTION : 0) | (e.message.engaged ? ENGAGED : 0);
        if (e.message.isMention || e.message.engaged) shown.set(fed.l.id, { sender: fed.l.sender, text: fed.l.content.slice(0, 100), isMention: e.message.isMention, engaged: e.message.engaged });
        else shown.delete(fed.l.id);
      } else if (e.type === "dropped") {
        report.drops.push({ id: e.msgId, reason: e.reason });
      } else if (e.type === "dispatch-start") onDispatch(e);
    },
    onDecision(d) {
      if (d.payer !== undefined && d.modelCalls > 0) paid.set(d.payer, (paid.get(d.payer) ?? 0) + 1);
      const rec = byDispatch.get(d.dispatchId);
      if (!rec) return;
      rec.outcome = {
        replyType: d.replyType,
        sent: d.outcome.kind === "sent",
        skipReason: d.outcome.kind === "sent" ? null : d.outcome.reason,
        text: d.outcome.kind === "sent" ? d.outcome.text : null,
        budgetRatio: Math.round(d.budgetRatio * 1000) / 1000,
        modelCalled: d.modelCalls > 0,
        detail: d.detail ?? null,
      };
    },
    endBatch() {
      feeding = new Map();
    },
    newestDispatchIds: () => report.dispatches.at(-1)?.messageIds ?? [],
    finish(modelCalls, lines, onMessage) {
      report.summary.modelCalls = modelCalls;
      const addressed = new AddressedCount();
      // A message is reached by the first dispatch that carried it and called the model.
      report.dispatches.forEach((d, k) => {
        if (!d.outcome.modelCalled) return;
        for (const i of dispatchOrdinals[k]!) {
          if (bits[i]! & REACHED) continue;
          bits[i]! |= REACHED;
          if (bits[i]! & GOLD) addressed.waits.add(Math.max(0, d.at - ts[i]!));
        }
      });
      const lineHours = new Map<number, { messages: number; mentions: number }>();
      let i = 0;
      for (const l of lines) {
        const b = bits[i]!;
        const isMention = (b & MENTION) !== 0;
        const engaged = (b & ENGAGED) !== 0;
        const directed = p.isPersona(l.sender) ? null : isDirectedAt(l, p.persona);
        onMessage({ id: l.id, isMention, engaged, why: labels[why[i]!]!, reached: (b & REACHED) !== 0, directed });
        if (isMention) report.summary.mentions++;
        if (directed !== null) addressed.add({ directed, flagged: isMention || engaged, reached: (b & REACHED) !== 0 });
        const hour = Math.floor(l.ts / HOUR) * HOUR;
        const row = lineHours.get(hour) ?? lineHours.set(hour, { messages: 0, mentions: 0 }).get(hour)!;
        row.messages++;
        if (isMention) row.mentions++;
        i++;
      }
      const s = report.summary;
      s.dispatches = report.dispatches.length;
      s.maxWaitMs = waits.max;
      s.p95WaitMs = waits.percentile(95);
      s.maxMentionWaitMs = maxMentionWait;
      report.addressed = addressed.report();
      report.payers = [...paid].map(([sender, dispatches]) => ({ sender, dispatches })).sort((a, b) => b.dispatches - a.dispatches || a.sender.localeCompare(b.sender));
      countOutcomes(report);
      return { report, view: { shown: (id) => shown.get(id), lineHours, isMention: (ordinal) => ((bits[ordinal] ?? 0) & MENTION) !== 0 } };
    },
  };
}

/** Sent replies by type and skips by reason. */
function countOutcomes(report: ReplayReport): void {
  const s = report.summary;
  for (const d of report.dispatches) {
    if (d.outcome.sent) s.sent++;
    else if (d.outcome.skipReason) s.skipped[d.outcome.skipReason] = (s.skipped[d.outcome.skipReason] ?? 0) + 1;
    if (d.outcome.sent && d.outcome.replyType) s.replyTypes[d.outcome.replyType] = (s.replyTypes[d.outcome.replyType] ?? 0) + 1;
  }
}
