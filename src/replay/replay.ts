// `replay`: a recorded chat through the real group client and monitor on a simulated clock.
// Hours of chat take seconds: @sinonjs/fake-timers drives every timer (buffer gate, cooldown,
// model latency, send delay) while the log's own timestamps are the server clock.
import FakeTimers from "@sinonjs/fake-timers";
import { closeGroupClientForIdentity, initGroupClientForIdentity } from "../group/group-client.ts";
import { createMemoryLogger } from "../log.ts";
import { initDedup } from "../monitor/dedup.ts";
import { createGroupMonitor, type DispatchDecision } from "../monitor/monitor.ts";
import { createScriptedBackend, type ScriptedMode } from "../host/deterministic.ts";
import type { DropReason, GroupMessage, GroupSettings, IdentityConfig, ReplyType, SkipReason, VitalityState } from "../types.ts";
import { isDirectedAt, measureAddressed, percentile, type AddressedReport } from "./addressed.ts";
import { batchByTimestamp, type LogLine } from "./log.ts";

export const REPLAY_GROUP_ID = "replay";

export interface ReplayOptions {
  persona: string;
  /** Our agent id; default the persona name. Lines from the persona are our own messages. */
  aid?: string;
  aliases?: readonly string[];
  /** The agent's owner (from the config): never refused, never limited by a sender's share. */
  owner?: string;
  settings: GroupSettings;
  /** Simulated model latency. Default 2000 ms. */
  agentLatencyMs?: number;
  /** Deterministic stand-in for the model. Default "silent". */
  responder?: ScriptedMode;
  replyText?: string;
  /** Senders to treat as agents for the bot-loop guard; everyone else in a recorded log is human. */
  agents?: readonly string[];
  /** Seed of the delay gate's random draws. */
  seed?: number;
  /** Called every {@link PROGRESS_EVERY} lines fed, and once at the end. */
  onProgress?: (linesDone: number, linesTotal: number) => void;
}

export const PROGRESS_EVERY = 5000;

export interface ReplayDispatch {
  at: number;
  trigger: "normal" | "mention" | "engaged";
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

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}


/** The persona's own lines: sent under its name or its aid (either case). */
export function personaMatcher(persona: string, aid?: string): (sender: string) => boolean {
  const name = persona.toLowerCase();
  const aidKey = (aid ?? persona).toLowerCase();
  return (sender) => {
    const s = sender.toLowerCase();
    return s === name || s === aidKey;
  };
}

export async function runReplay(lines: readonly LogLine[], opts: ReplayOptions): Promise<ReplayReport> {
  await initDedup();
  const clock = installReplayClock(lines);
  try {
    const agent = startReplayAgent({ lines, opts, peers: [] });
    await feedReplay({ lines, clock, agents: [agent], ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
    return await agent.finish();
  } finally {
    clock.uninstall();
  }
}

export type ReplayClock = ReturnType<typeof FakeTimers.install>;

/** One simulated clock for a whole replay: every timer of every agent, and `Date`. */
export function installReplayClock(lines: readonly LogLine[]): ReplayClock {
  return FakeTimers.install({
    now: lines[0]?.ts ?? 0,
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"],
    loopLimit: 1_000_000,
  });
}

/** A reply one replayed agent sent: it enters the other agents' timelines. */
export interface ReplaySent {
  aid: string;
  msgId: string;
  timestamp: number;
  content: string;
  metadata: Record<string, unknown> | null;
  /** The msg ids of the dispatch batch it answers. */
  answers: readonly string[];
}

/** One agent of ours inside a replay: its group client, monitor and what it recorded. */
export interface ReplayAgent {
  persona: string;
  aid: string;
  isPersona: (sender: string) => boolean;
  /** Feeds one timestamp's lines, the agent's own under its aid. */
  feed(batch: readonly LogLine[]): void;
  /** Another agent's reply arrives. */
  receive(m: ReplaySent): void;
  /** Closes the agent's client and monitor and computes its report. */
  finish(): Promise<ReplayReport>;
}

/**
 * Builds one agent on the installed clock. `peers`: the other agents of the room (persona, aid),
 * who are agents to this one; their lines in the log are theirs. `onSent` hears every reply sent.
 */
export function startReplayAgent(p: {
  lines: readonly LogLine[];
  opts: ReplayOptions;
  peers: ReadonlyArray<{ persona: string; aid: string }>;
  onSent?: (m: ReplaySent) => void;
}): ReplayAgent {
  const { lines, opts } = p;
  const aid = opts.aid ?? opts.persona;
  const isPersona = personaMatcher(opts.persona, aid);
  const peerMatchers = p.peers.map((peer) => ({ aid: peer.aid, is: personaMatcher(peer.persona, peer.aid) }));
  const peerOf = (sender: string) => peerMatchers.find((m) => m.is(sender));
  const agents = new Set([...(opts.agents ?? []), ...p.peers.map((peer) => peer.aid)].map((a) => a.toLowerCase()));
  const humans = [...new Set(lines.map((l) => l.sender))].filter((s) => !isPersona(s) && !agents.has(s.toLowerCase()) && peerOf(s) === undefined);
  const identity: IdentityConfig = {
    aid,
    name: opts.persona,
    aliases: [...(opts.aliases ?? [])],
    ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
    enabled: true,
    groups: {},
  };
  const report: ReplayReport = {
    messages: [],
    dispatches: [],
    drops: [],
    payers: [],
    summary: { messages: lines.length, dispatches: 0, mentions: 0, maxWaitMs: 0, p95WaitMs: 0, maxMentionWaitMs: 0, modelCalls: 0, sent: 0, skipped: {}, replyTypes: {} },
    addressed: null,
  };
  const flags = new Map<string, { isMention: boolean; engaged: boolean; why: string | null }>();
  const tsOf = new Map(lines.map((l) => [l.id, l.ts] as const));
  const firstDispatchAt = new Map<string, number>();
  const byDispatch = new Map<number, ReplayDispatch>();
  let replySeq = 0;
  const paid = new Map<string, number>();
  const backend = createScriptedBackend({
    mode: opts.responder ?? "silent",
    latencyMs: opts.agentLatencyMs ?? 2000,
    ...(opts.replyText !== undefined ? { replyText: opts.replyText } : {}),
  });
  const logger = createMemoryLogger();
  const monitor = createGroupMonitor({
    identityId: aid,
    identity,
    groupId: REPLAY_GROUP_ID,
    settings: opts.settings,
    humans,
    // `--agents` and the room's other agents: shown as agents in the prompt's [Senders], not as unknown.
    agents: [...agents],
    backend,
    // Alone, replies go nowhere: the log is history. The group client still counts them as ours.
    // In a room, they reach the other agents.
    sender: {
      sendMessage: async (m) => {
        const sent = { msgId: p.peers.length ? `${aid}:reply-${++replySeq}` : `reply-${++replySeq}`, timestamp: Date.now() };
        // One dispatch runs at a time per agent: the newest one is the one sending.
        const answers = report.dispatches.at(-1)?.messageIds ?? [];
        p.onSent?.({ aid, msgId: sent.msgId, timestamp: sent.timestamp, content: m.content, metadata: m.metadata ?? null, answers });
        return sent;
      },
    },
    logger,
    random: mulberry32(opts.seed ?? 1),
    onDecision: (d: DispatchDecision) => {
      if (d.payer !== undefined && d.modelCalls > 0) paid.set(d.payer, (paid.get(d.payer) ?? 0) + 1);
      const rec = byDispatch.get(d.dispatchId);
      if (!rec) return;
      rec.outcome = {
        replyType: d.replyType,
        sent: d.outcome.sent,
        skipReason: d.outcome.skipReason ?? null,
        text: d.outcome.text ?? null,
        budgetRatio: Math.round(d.budgetRatio * 1000) / 1000,
        modelCalled: d.modelCalls > 0,
        detail: d.detail ?? null,
      };
    },
  });
  const client = initGroupClientForIdentity({
    identityId: aid,
    groupId: REPLAY_GROUP_ID,
    identity,
    humans,
    settings: opts.settings,
    dispatch: monitor.handle,
    logger,
    onEvent: (e) => {
      if (e.type === "accepted") {
        flags.set(e.message.msgId, { isMention: e.message.isMention, engaged: e.message.engaged, why: e.message.addressing ?? null });
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
  });
  const senderOf = (sender: string) => (isPersona(sender) ? aid : (peerOf(sender)?.aid ?? sender));

  return {
    persona: opts.persona,
    aid,
    isPersona,
    feed: (batch) => client.feedBufferGate(batch.map((l) => toGroupMessage(l, senderOf(l.sender)))),
    receive: (m) =>
      client.feedBufferGate([{ msgId: m.msgId, groupId: REPLAY_GROUP_ID, sender: m.aid, content: m.content, contentType: "text", timestamp: m.timestamp, metadata: m.metadata }]),
    async finish() {
      await closeGroupClientForIdentity(client);
      monitor.close();
      report.summary.modelCalls = backend.calls.length;

      // A message is reached by the first dispatch that carried it and called the model.
      const modelCallAt = new Map<string, number>();
      for (const d of report.dispatches) {
        if (!d.outcome.modelCalled) continue;
        for (const id of d.messageIds) if (!modelCallAt.has(id)) modelCallAt.set(id, d.at);
      }
      const waits: number[] = [];
      let maxMentionWait = 0;
      for (const l of lines) {
        const f = flags.get(l.id) ?? { isMention: false, engaged: false, why: null };
        report.messages.push({
          id: l.id,
          isMention: f.isMention,
          engaged: f.engaged,
          why: f.why,
          reached: modelCallAt.has(l.id),
          directed: isPersona(l.sender) ? null : isDirectedAt(l, opts.persona),
        });
        if (f.isMention) report.summary.mentions++;
        const at = firstDispatchAt.get(l.id);
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
      report.addressed = measureAddressed({ lines, isPersona, persona: opts.persona, flags, modelCallAt });
      report.payers = [...paid].map(([sender, dispatches]) => ({ sender, dispatches })).sort((a, b) => b.dispatches - a.dispatches || a.sender.localeCompare(b.sender));
      for (const d of report.dispatches) {
        if (d.outcome.sent) s.sent++;
        else if (d.outcome.skipReason) s.skipped[d.outcome.skipReason] = (s.skipped[d.outcome.skipReason] ?? 0) + 1;
        if (d.outcome.sent && d.outcome.replyType) s.replyTypes[d.outcome.replyType] = (s.replyTypes[d.outcome.replyType] ?? 0) + 1;
      }
      return report;
    },
  };
}

/** Feeds the log on the clock to every agent, then lets every timer play out. */
export async function feedReplay(p: {
  lines: readonly LogLine[];
  clock: ReplayClock;
  agents: readonly ReplayAgent[];
  onProgress?: (linesDone: number, linesTotal: number) => void;
}): Promise<void> {
  const { clock, lines } = p;
  let fed = 0;
  let nextProgress = PROGRESS_EVERY;
  for (const batch of batchByTimestamp(lines)) {
    const ts = batch[0]!.ts;
    if (ts > clock.now) await clock.tickAsync(ts - clock.now);
    for (const a of p.agents) a.feed(batch);
    fed += batch.length;
    if (fed >= nextProgress) {
      nextProgress = fed + PROGRESS_EVERY;
      p.onProgress?.(fed, lines.length);
    }
  }
  p.onProgress?.(fed, lines.length);
  // Let the buffer gate, cooldowns and the last dispatch play out.
  await clock.runAllAsync();
}

function toGroupMessage(l: LogLine, sender: string): GroupMessage {
  return {
    msgId: l.id,
    groupId: REPLAY_GROUP_ID,
    sender,
    content: l.content,
    contentType: "text",
    timestamp: l.ts,
    // Reply annotations in research logs are ground truth for evaluation, not chat metadata.
    metadata: null,
  };
}
