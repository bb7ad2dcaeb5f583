// The report of one replayed agent: its shape, and how it is recorded while the replay runs — the
// group client's events (flags, drops, dispatch starts), the monitor's decisions (outcomes,
// payers), then, once every timer has played out, each line's fate and the totals.
import { addressingLabel } from "../group/addressing/reason.ts";
import type { GroupClientEvent } from "../group/group-client.ts";
import type { DispatchDecision } from "../monitor/monitor.ts";
import type { DropReason, ReplyType, SkipReason, TriggerType, VitalityState } from "../types.ts";
import { isDirectedAt, measureAddressed, percentile, type AddressedReport } from "./addressed.ts";
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

type LineFlags = { isMention: boolean; engaged: boolean; why: string | null };

export interface ReplayRecorder {
  /** The group client's events: a line accepted with its flags, a drop, a dispatch starting. */
  onEvent(e: GroupClientEvent): void;
  /** The monitor's decision on a dispatch: its outcome, and who paid for a model call. */
  onDecision(d: DispatchDecision): void;
  /** The msg ids of the newest dispatch: one dispatch runs at a time per agent, so the one sending. */
  newestDispatchIds(): readonly string[];
  /** The report, once the client and monitor are closed; `modelCalls` as the stand-in model counted them. */
  finish(modelCalls: number): ReplayReport;
}

export function createReplayRecorder(p: { lines: readonly LogLine[]; persona: string; isPersona: (sender: string) => boolean }): ReplayRecorder {
  const { lines } = p;
  const report: ReplayReport = {
    messages: [],
    dispatches: [],
    drops: [],
    payers: [],
    summary: { messages: lines.length, dispatches: 0, mentions: 0, maxWaitMs: 0, p95WaitMs: 0, maxMentionWaitMs: 0, modelCalls: 0, sent: 0, skipped: {}, replyTypes: {} },
    addressed: null,
  };
  const flags = new Map<string, LineFlags>();
  const firstDispatchAt = new Map<string, number>();
  const byDispatch = new Map<number, ReplayDispatch>();
  const paid = new Map<string, number>();

  return {
    onEvent(e) {
      if (e.type === "accepted") {
        flags.set(e.message.msgId, { isMention: e.message.isMention, engaged: e.message.engaged, why: addressingLabel(e.message.addressing) });
      } else if (e.type === "dropped") {
        report.drops.push({ id: e.msgId, reason: e.reason });
      } else if (e.type === "dispatch-start") {
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
        for (const id of rec.messageIds) if (!firstDispatchAt.has(id)) firstDispatchAt.set(id, b.now);
      }
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
    newestDispatchIds: () => report.dispatches.at(-1)?.messageIds ?? [],
    finish(modelCalls) {
      report.summary.modelCalls = modelCalls;
      const modelCallAt = firstModelCallAt(report.dispatches);
      recordLines({ report, lines, flags, firstDispatchAt, modelCallAt, persona: p.persona, isPersona: p.isPersona });
      report.addressed = measureAddressed({ lines, isPersona: p.isPersona, persona: p.persona, flags, modelCallAt });
      report.payers = [...paid].map(([sender, dispatches]) => ({ sender, dispatches })).sort((a, b) => b.dispatches - a.dispatches || a.sender.localeCompare(b.sender));
      countOutcomes(report);
      return report;
    },
  };
}

/** A message is reached by the first dispatch that carried it and called the model. */
function firstModelCallAt(dispatches: readonly ReplayDispatch[]): Map<string, number> {
  const modelCallAt = new Map<string, number>();
  for (const d of dispatches) {
    if (!d.outcome.modelCalled) continue;
    for (const id of d.messageIds) if (!modelCallAt.has(id)) modelCallAt.set(id, d.at);
  }
  return modelCallAt;
}

/** Each line's fate (flags, reached, annotation) into `messages`, and the mention count and waits into the summary. */
function recordLines(p: {
  report: ReplayReport;
  lines: readonly LogLine[];
  flags: ReadonlyMap<string, LineFlags>;
  firstDispatchAt: ReadonlyMap<string, number>;
  modelCallAt: ReadonlyMap<string, number>;
  persona: string;
  isPersona: (sender: string) => boolean;
}): void {
  const { report, lines } = p;
  // By id, as the dispatches name lines: with a repeated id the last line's time counts.
  const tsOf = new Map(lines.map((l) => [l.id, l.ts] as const));
  const waits: number[] = [];
  let maxMentionWait = 0;
  for (const l of lines) {
    const f = p.flags.get(l.id) ?? { isMention: false, engaged: false, why: null };
    report.messages.push({
      id: l.id,
      isMention: f.isMention,
      engaged: f.engaged,
      why: f.why,
      reached: p.modelCallAt.has(l.id),
      directed: p.isPersona(l.sender) ? null : isDirectedAt(l, p.persona),
    });
    if (f.isMention) report.summary.mentions++;
    const at = p.firstDispatchAt.get(l.id);
    if (at !== undefined) {
      const wait = Math.max(0, at - (tsOf.get(l.id) ?? at));
      waits.push(wait);
      if (f.isMention && wait > maxMentionWait) maxMentionWait = wait;
    }
  }
  waits.sort((a, b) => a - b);
  const s = report.summary;
  s.dispatches = report.dispatches.length;
  s.maxWaitMs = waits.at(-1) ?? 0;
  s.p95WaitMs = percentile(waits, 95);
  s.maxMentionWaitMs = maxMentionWait;
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
