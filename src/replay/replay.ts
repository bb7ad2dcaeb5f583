// `replay`: a recorded chat through the real group client and monitor on a simulated clock.
// Hours of chat take seconds: @sinonjs/fake-timers drives every timer (buffer gate, cooldown,
// model latency, send delay) while the log's own timestamps are the server clock.
import FakeTimers from "@sinonjs/fake-timers";
import { closeGroupClientForIdentity, initGroupClientForIdentity, type GroupClientEvent } from "../group/group-client.ts";
import { silentLogger } from "../log.ts";
import { MemberDirectory } from "../members/member-types.ts";
import { createGroupMonitor } from "../monitor/monitor.ts";
import { WalkedNames } from "../monitor/known-names.ts";
import { createScriptedBackend, type ScriptedMode } from "../backends/deterministic.ts";
import type { GroupMessage, GroupSettings, IdentityConfig } from "../types.ts";
import { batchesOf, type LogLine } from "./log.ts";
import { arraySource, type LineSource } from "./log-source.ts";
import { createReplayRecorder, type OnMessage, type ReplayMessage, type ReplayReport, type ReplayView } from "./replay-report.ts";

// The report is what runReplay returns: its types are part of this module's surface.
export type { LastCarrier, LineFate, OnMessage, ReplayDispatch, ReplayMessage, ReplayReport, ReplayView, ShownLine } from "./replay-report.ts";

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
  /** Senders nobody vouches for (as someone who joined an open group by its link): neither person nor agent. */
  strangers?: readonly string[];
  /** Seed of the delay gate's random draws. */
  seed?: number;
  /** Called every {@link PROGRESS_EVERY} lines fed, and once at the end. */
  onProgress?: (linesDone: number, linesTotal: number) => void;
  /** Hears every group client event the report is built from (each accepted line with its flags and reason). */
  onEvent?: (e: GroupClientEvent) => void;
}

export const PROGRESS_EVERY = 5000;

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

/** Replays lines held in memory: the report with every line's fate in `messages`. */
export async function runReplay(lines: readonly LogLine[], opts: ReplayOptions): Promise<ReplayReport> {
  const messages: ReplayMessage[] = [];
  const { report } = await replayLog(arraySource(lines), opts, (m) => messages.push(m));
  report.messages = messages;
  return report;
}

/**
 * Replays a log walked from its source (a file is read as it goes, not held): the report without
 * `messages` (each line's fate goes to `onMessage`, in time order, once every timer has played
 * out), and what the text report needs of the lines.
 */
export async function replayLog(source: LineSource, opts: ReplayOptions, onMessage: OnMessage = () => {}): Promise<{ report: ReplayReport; view: ReplayView }> {
  const clock = installReplayClock(source.firstTs);
  try {
    const agent = startReplayAgent({ source, opts, peers: [] });
    await feedReplay({ source, clock, agents: [agent], ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
    return await agent.finish(onMessage);
  } finally {
    clock.uninstall();
  }
}

export type ReplayClock = ReturnType<typeof FakeTimers.install>;

/** One simulated clock for a whole replay, from the first line's time: every timer of every agent, and `Date`. */
export function installReplayClock(firstTs: number | undefined): ReplayClock {
  return FakeTimers.install({
    now: firstTs ?? 0,
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
  /** Feeds one timestamp's lines, the agent's own under its aid; `first`: the first one's position in the log. */
  feed(batch: readonly LogLine[], first: number): void;
  /** Another agent's reply arrives. */
  receive(m: ReplaySent): void;
  /** Closes the agent's client and monitor and computes its report, walking the log once more; each line's fate to `onMessage` (only when started with `fates`). */
  finish(onMessage?: OnMessage): Promise<{ report: ReplayReport; view: ReplayView }>;
}

/**
 * Builds one agent on the installed clock. `peers`: the other agents of the room (persona, aid),
 * who are agents to this one; their lines in the log are theirs. `onSent` hears every reply sent,
 * with the position in the log of each message it answers (`answers`; undefined where not a log
 * line). `fates` (default true): each line's fate will be asked for at the end (its addressing
 * reason is kept, a byte or two a line).
 */
export function startReplayAgent(p: {
  source: LineSource;
  opts: ReplayOptions;
  peers: ReadonlyArray<{ persona: string; aid: string }>;
  onSent?: (m: ReplaySent, lines: ReadonlyArray<number | undefined>) => void;
  fates?: boolean;
}): ReplayAgent {
  const { source, opts } = p;
  const { aid, isPersona, identity, members, agents, senderOf } = replayRoster(source, opts, p.peers);
  const recorder = createReplayRecorder({ count: source.count, persona: opts.persona, isPersona, spill: !source.inMemory, fates: p.fates ?? true });
  let replySeq = 0;
  const backend = createScriptedBackend({
    mode: opts.responder ?? "silent",
    latencyMs: opts.agentLatencyMs ?? 2000,
    keepCalls: false,
    ...(opts.replyText !== undefined ? { replyText: opts.replyText } : {}),
  });
  // Nothing reads the engine's log lines in a replay: kept, they would grow with the log.
  const logger = silentLogger;
  const monitor = createGroupMonitor({
    identityId: aid,
    identity,
    groupId: REPLAY_GROUP_ID,
    settings: opts.settings,
    humans: [],
    memberTypes: members,
    backend,
    // Alone, replies go nowhere: the log is history. The group client still counts them as ours.
    // In a room, they reach the other agents.
    sender: {
      sendMessage: async (m) => {
        const sent = { msgId: p.peers.length ? `${aid}:reply-${++replySeq}` : `reply-${++replySeq}`, timestamp: Date.now() };
        const answers = recorder.newestDispatchIds();
        p.onSent?.({ aid, msgId: sent.msgId, timestamp: sent.timestamp, content: m.content, metadata: m.metadata ?? null, answers }, recorder.newestDispatchLines());
        return sent;
      },
    },
    logger,
    random: mulberry32(opts.seed ?? 1),
    onDecision: recorder.onDecision,
  });
  const client = initGroupClientForIdentity({
    identityId: aid,
    groupId: REPLAY_GROUP_ID,
    identity,
    // The owner, and the directory's people (the group client's own list would be a copy of them).
    humans: [],
    memberTypes: { typeOf: (sender) => members.typeOf(sender) },
    settings: opts.settings,
    dispatch: monitor.handle,
    logger,
    onEvent: opts.onEvent
      ? (e) => {
          recorder.onEvent(e);
          opts.onEvent!(e);
        }
      : recorder.onEvent,
    // A room: the other agents of ours, and `--agents`.
    inRoom: () => agents.length > 0,
  });

  return {
    persona: opts.persona,
    aid,
    isPersona,
    feed: (batch, first) => {
      batch.forEach((l, i) => recorder.onLine(l, first + i));
      client.feedBufferGate(batch.map((l) => toGroupMessage(l, senderOf(l.sender))));
      recorder.endBatch();
    },
    receive: (m) =>
      client.feedBufferGate([{ msgId: m.msgId, groupId: REPLAY_GROUP_ID, sender: m.aid, content: m.content, contentType: "text", timestamp: m.timestamp, metadata: m.metadata }]),
    async finish(onMessage) {
      await closeGroupClientForIdentity(client);
      monitor.close();
      return recorder.finish(backend.callCount, source.lines(), onMessage);
    },
  };
}

/**
 * Who is who for one agent: its identity (the persona under `--aid`), the agents it knows
 * (`--agents` and the room's other agents), everyone else in the log as a person, and the sender
 * each log line is fed under (the persona's and the peers' lines under their aids). `members`: the
 * one directory its monitor and group client share. Its people are every other sender of the log,
 * answered for by a rule without a table of them (a log may have a new sender on every line; a
 * replay feeds only the log's senders and the agents' replies); the oldest of them under a
 * look-alike key is found by walking the log (only a `--strangers` sender is shown with a tag).
 */
export function replayRoster(source: LineSource, opts: ReplayOptions, peers: ReadonlyArray<{ persona: string; aid: string }>) {
  const aid = opts.aid ?? opts.persona;
  const isPersona = personaMatcher(opts.persona, aid);
  const peerMatchers = peers.map((peer) => ({ aid: peer.aid, is: personaMatcher(peer.persona, peer.aid) }));
  const peerOf = (sender: string) => peerMatchers.find((m) => m.is(sender));
  const agents = new Set([...(opts.agents ?? []), ...peers.map((peer) => peer.aid)].map((a) => a.toLowerCase()));
  const strangers = new Set((opts.strangers ?? []).map((s) => s.toLowerCase()));
  const isPerson = (lower: string) => !isPersona(lower) && !agents.has(lower) && !strangers.has(lower) && peerOf(lower) === undefined;
  const identity: IdentityConfig = {
    aid,
    name: opts.persona,
    aliases: [...(opts.aliases ?? [])],
    ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
    enabled: true,
    groups: {},
  };
  const senderOf = (sender: string) => (isPersona(sender) ? aid : (peerOf(sender)?.aid ?? sender));
  const people = new WalkedNames({ has: isPerson, walk: () => sendersOf(source) });
  const members = new MemberDirectory({ agents: [...agents], owner: identity.owner, people: { has: isPerson, names: people } });
  return { aid, isPersona, identity, members, agents: [...agents], senderOf };
}

/** The senders of a log's lines, in time order (repeated). */
function* sendersOf(source: LineSource): Generator<string> {
  for (const l of source.lines()) yield l.sender;
}

/** Feeds the log on the clock to every agent, then lets every timer play out. */
export async function feedReplay(p: {
  source: LineSource;
  clock: ReplayClock;
  agents: readonly ReplayAgent[];
  onProgress?: (linesDone: number, linesTotal: number) => void;
  /** Hears each timestamp's lines before the agents do; `first`: the first one's position in the log. */
  onBatch?: (batch: readonly LogLine[], first: number) => void;
}): Promise<void> {
  const { clock, source } = p;
  let fed = 0;
  let nextProgress = PROGRESS_EVERY;
  for (const batch of batchesOf(source.lines())) {
    const ts = batch[0]!.ts;
    if (ts > clock.now) await clock.tickAsync(ts - clock.now);
    p.onBatch?.(batch, fed);
    for (const a of p.agents) a.feed(batch, fed);
    fed += batch.length;
    if (fed >= nextProgress) {
      nextProgress = fed + PROGRESS_EVERY;
      p.onProgress?.(fed, source.count);
    }
  }
  p.onProgress?.(fed, source.count);
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
    // Reply annotations in research logs are ground truth for evaluation, not chat metadata;
    // `metadata` is what the network carried.
    metadata: l.metadata ?? null,
  };
}
