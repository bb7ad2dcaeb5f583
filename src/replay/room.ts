// `replay --persona A --persona B …`: a room of agents of ours in one replayed group, on one
// simulated clock. Each agent runs its own group client and monitor; a reply one of them sends
// enters every other agent's timeline at the moment it is sent (after its model latency and send
// delay) as an agent's message. The log's people are as in the log. Then the room is measured:
// open questions and how many agents answered each, agent messages per person message, and the
// longest run of agent messages with no person between them. What the figures keep of a log walked
// from its file (room-tally.ts, orphan-join.ts, member-asks.ts) is in paged columns and buckets on
// disk: it does not grow with the log's lines, its questions, its senders or the agents' replies.
import { isOpenQuestion, replyToOf } from "../monitor/floor.ts";
import type { LogLine } from "./log.ts";
import { arraySource, type LineSource } from "./log-source.ts";
import { MemberAsks } from "./member-asks.ts";
import { ORPHAN_ANSWER_WITHIN_MS, OrphanJoin, type OrphanMetrics } from "./orphan-join.ts";
import { isAnnotatedOpen, RoomTally, type ReplyTarget } from "./room-tally.ts";
import { feedReplay, installReplayClock, startReplayAgent, type ReplayAgent, type ReplayMessage, type ReplayOptions, type ReplayReport, type ReplaySent, type ReplayView } from "./replay.ts";

export interface RoomMetrics {
  agents: number;
  personMessages: number;
  /** Replies our agents sent, plus the log lines of personas that are in the log. */
  agentMessages: number;
  agentPerPerson: number;
  /** Person lines ending in `?`/`？` addressed to nobody (no leading address, no agent mentioned). */
  openQuestions: number;
  /** Open questions by how many different agents answered them. */
  answeredBy: { none: number; one: number; twoOrMore: number };
  /** Of the open questions any agent answered, the share that got two or more answers. */
  multiAnswerRate: number;
  /** Most agent messages in a row with no person's message between them. */
  longestAgentChain: number;
  /** The open questions of the log's annotated part, and the ones no person answered. */
  orphans: OrphanMetrics;
}

export { ORPHAN_ANSWER_WITHIN_MS, type OrphanMetrics } from "./orphan-join.ts";

export interface RoomAgentReport {
  persona: string;
  aid: string;
  /** `messages` is filled when the lines were in memory (empty for a log read from its file). */
  report: ReplayReport;
  view: ReplayView;
}

export interface RoomReport {
  agents: RoomAgentReport[];
  /** Every reply the agents sent, in the order sent, when the lines were in memory (empty for a log read from its file). */
  sent: ReplaySent[];
  room: RoomMetrics;
}

/** Runs several agents of ours over one log (lines in memory, or a source walking a file). Each entry of `agents` is one agent's options. */
export async function runRoomReplay(
  log: readonly LogLine[] | LineSource,
  agents: readonly ReplayOptions[],
  onProgress?: (linesDone: number, linesTotal: number) => void,
  /** Simulated network time from one agent's send to the others' receipt (default 0). */
  deliveryMs = 0,
): Promise<RoomReport> {
  const source = Array.isArray(log) ? arraySource(log as readonly LogLine[]) : (log as LineSource);
  const ids = agents.map((o) => ({ persona: o.persona, aid: o.aid ?? o.persona }));
  const agentIndex = indexOfAid(ids.map((a) => a.aid));
  // What the room's figures need of each reply is counted as it is sent; the replies themselves are kept only with the lines in memory.
  const tally = new RoomTally(source.count, agentIndex.size, !source.inMemory);
  // Which lines put a question to a member by name, noted as the lines are fed.
  const asks = new MemberAsks({ members: agentNamesOf(ids), lines: source.count, spill: !source.inMemory });
  const clock = installReplayClock(source.firstTs);
  try {
    const sent: ReplaySent[] = [];
    const running: ReplayAgent[] = [];
    const isAgentLine = (l: LogLine) => running.some((a) => a.isPersona(l.sender));
    agents.forEach((opts, i) => {
      running.push(
        startReplayAgent({
          source,
          opts,
          peers: ids.filter((_, j) => j !== i),
          // Each line's fate is asked for only with the lines in memory (the reports' `messages`).
          fates: source.inMemory,
          onSent: (m, lines) => {
            if (source.inMemory) sent.push(m);
            tally.reply(agentIndex.get(m.aid)!, m.timestamp, targetsOf(m, lines));
            // Delivered once the sender's own send has returned, at the same simulated time.
            setTimeout(() => {
              for (const other of running) if (other.aid !== m.aid) other.receive(m);
            }, deliveryMs);
          },
        }),
      );
    });
    await feedReplay({
      source,
      clock,
      agents: running,
      onBatch: (batch, first) =>
        batch.forEach((l, k) => {
          tally.line(l, first + k, isAgentLine(l));
          asks.line(l, first + k);
        }),
      ...(onProgress ? { onProgress } : {}),
    });
    const reports: RoomAgentReport[] = [];
    for (const a of running) {
      const messages: ReplayMessage[] = [];
      const { report, view } = await a.finish(source.inMemory ? (m) => messages.push(m) : undefined);
      report.messages = messages;
      reports.push({ persona: a.persona, aid: a.aid, report, view });
    }
    const mentioned = (ordinal: number) => reports.some((r) => r.view.isMention(ordinal));
    const lines = { [Symbol.iterator]: () => source.lines()[Symbol.iterator]() };
    return { agents: reports, sent, room: measureTally({ lines, count: source.count, spill: !source.inMemory, isAgentLine, agentNames: ids, tally, asks, mentioned }) };
  } finally {
    clock.uninstall();
    tally.remove();
    asks.remove();
  }
}

/** Each aid's number (the first agent's, when two share one). */
function indexOfAid(aids: readonly string[]): Map<string, number> {
  const index = new Map<string, number>();
  for (const aid of aids) if (!index.has(aid)) index.set(aid, index.size);
  return index;
}

/**
 * What a reply answers: the message its `reply_to` names, or, with no `reply_to`, every message of
 * the batch it was written for — a log line by its position where the batch carried it as one
 * (`lines`: each batch message's position, undefined for another agent's reply), else by id.
 */
function targetsOf(m: ReplaySent, lines?: ReadonlyArray<number | undefined>): ReplyTarget[] {
  const at = (k: number) => lines?.[k] ?? m.answers[k]!;
  const replyTo = replyToOf(m.metadata);
  if (replyTo === undefined) return m.answers.map((_, k) => at(k));
  const k = m.answers.findIndex((id, j) => id === replyTo && lines?.[j] !== undefined);
  return [k === -1 ? replyTo : at(k)];
}

/**
 * The room's figures from a hand-written timeline: the log's lines and the replies sent (in the
 * order sent). See {@link measureTally}.
 */
export function measureRoom(p: {
  lines: Iterable<LogLine>;
  isAgentLine: (l: LogLine) => boolean;
  agentNames: ReadonlyArray<{ persona: string; aid: string }>;
  sent: readonly ReplaySent[];
  /** Whether an agent took the line at this position as a mention (default: from `reports`' messages). */
  mentioned?: (ordinal: number, id: string) => boolean;
  reports?: readonly RoomAgentReport[];
  /** The lines' count, and whether the figures' records go to temp files as for a log walked from its file (default: held). */
  count?: number;
  spill?: boolean;
}): RoomMetrics {
  const index = indexOfAid([...p.agentNames.map((a) => a.aid), ...p.sent.map((m) => m.aid)]);
  const count = p.count ?? 0;
  const spill = p.spill ?? false;
  // Every target is an id here: no batch carried the lines by position.
  const tally = new RoomTally(count, index.size, spill);
  const asks = new MemberAsks({ members: agentNamesOf(p.agentNames), lines: count, spill });
  try {
    for (const m of p.sent) tally.reply(index.get(m.aid)!, m.timestamp, targetsOf(m));
    let ordinal = 0;
    for (const l of p.lines) asks.line(l, ordinal++);
    return measureTally({ ...p, count, spill, tally, asks, mentioned: p.mentioned ?? mentionedIn(p.reports ?? []) });
  } finally {
    tally.remove();
    asks.remove();
  }
}

/**
 * The room's figures. Who a reply answers: the open question its `reply_to` names, or, with no
 * `reply_to`, every open question in the batch it was written for (as the tally counted them).
 * Whether a question opens with a member's name is `asks`' (given every line). Walks the lines
 * once to join the replies given by id with the lines they name, when there are any
 * (room-tally.ts: in buckets, on disk with `spill`); once for the figures; and once more for
 * the person-answered questions when the log has annotated open questions, joining those with the
 * replies to them (orphan-join.ts: on disk with `spill`, in buckets for `count` lines).
 */
function measureTally(p: {
  lines: Iterable<LogLine>;
  count: number;
  spill: boolean;
  isAgentLine: (l: LogLine) => boolean;
  agentNames: ReadonlyArray<{ persona: string; aid: string }>;
  tally: RoomTally;
  asks: MemberAsks;
  mentioned: (ordinal: number, id: string) => boolean;
}): RoomMetrics {
  p.asks.join();
  p.tally.joinIds(p.lines);
  // The annotated open questions, in log order: id, asker and what the agents did.
  const questions = new OrphanJoin({ spill: p.spill, lines: p.count });
  try {
    return measureLines(p, questions);
  } finally {
    questions.remove();
  }
}

/** {@link measureTally}'s walks, the open questions' people, agents and times going to `questions`. */
function measureLines(
  p: { lines: Iterable<LogLine>; isAgentLine: (l: LogLine) => boolean; agentNames: ReadonlyArray<{ persona: string; aid: string }>; tally: RoomTally; asks: MemberAsks; mentioned: (ordinal: number, id: string) => boolean },
  questions: OrphanJoin,
): RoomMetrics {
  const { tally } = p;
  const answeredBy = { none: 0, one: 0, twoOrMore: 0 };
  let openQuestions = 0;
  let personMessages = 0;
  let agentLines = 0;
  let ordinal = 0;
  // The longest agent run: log lines and sent replies by time, a log line first at a tie.
  let next = 0;
  let run = 0;
  let longest = 0;
  const step = (agent: boolean) => {
    run = agent ? run + 1 : 0;
    if (run > longest) longest = run;
  };
  for (const l of p.lines) {
    const i = ordinal++;
    while (next < tally.replies && tally.sentAt(next) < l.ts) {
      step(true);
      next++;
    }
    const agent = p.isAgentLine(l);
    step(agent);
    if (agent) {
      agentLines++;
      continue;
    }
    personMessages++;
    if (isAnnotatedOpen(l)) {
      const n = tally.answeredBy(i);
      questions.question({ id: l.id, asker: l.sender.toLowerCase(), answeredBy: n, waitMs: n === 0 ? undefined : tally.firstAnswer(i)! - l.ts });
    }
    // The key the line asks about is the one MemberAsks joined for this line (floor.ts's openQuestionAsks).
    if (p.mentioned(i, l.id) || !isOpenQuestion(l.content, () => p.asks.asksMember(i), l.sender)) continue;
    openQuestions++;
    const by = tally.answeredBy(i);
    if (by === 0) answeredBy.none++;
    else if (by === 1) answeredBy.one++;
    else answeredBy.twoOrMore++;
  }
  for (; next < tally.replies; next++) step(true);
  const answered = answeredBy.one + answeredBy.twoOrMore;
  const agentMessages = tally.replies + agentLines;
  return {
    agents: p.agentNames.length,
    personMessages,
    agentMessages,
    agentPerPerson: agentMessages / Math.max(1, personMessages),
    openQuestions,
    answeredBy,
    multiAnswerRate: answered === 0 ? 0 : answeredBy.twoOrMore / answered,
    longestAgentChain: longest,
    orphans: measureOrphans({ lines: p.lines, isAgentLine: p.isAgentLine, questions }),
  };
}

/** The room's agents are members though they may send nothing: their personas and aids. */
const agentNamesOf = (agents: ReadonlyArray<{ persona: string; aid: string }>): string[] => agents.flatMap((a) => [a.persona, a.aid]);

/** Mentions by the agents' reports (lines in memory): by id. */
const mentionedIn = (reports: readonly RoomAgentReport[]) => {
  const ids = new Set<string>();
  for (const a of reports) for (const m of a.report.messages) if (m.isMention) ids.add(m.id);
  return (_ordinal: number, id: string) => ids.has(id);
};

/** {@link OrphanMetrics} of the annotated open questions (given to `questions` as the lines were walked); walks the lines for the people's replies to them. */
function measureOrphans(p: { lines: Iterable<LogLine>; isAgentLine: (l: LogLine) => boolean; questions: OrphanJoin }): OrphanMetrics {
  const { questions } = p;
  if (questions.questions > 0) {
    for (const l of p.lines) {
      if (p.isAgentLine(l)) continue;
      for (const id of l.replyTo ?? []) questions.reply(id, l.sender.toLowerCase());
    }
  }
  return questions.measure();
}

/** The room's text lines (after each agent's own report). */
export function renderRoomText(room: RoomMetrics): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  return [
    `room: ${room.agents} agents, ${room.personMessages} person messages, ${room.agentMessages} agent messages ` +
      `(${room.agentPerPerson.toFixed(3)} per person message), longest agent chain ${room.longestAgentChain}`,
    `open questions: ${room.openQuestions} — answered by no agent ${room.answeredBy.none}, by one ${room.answeredBy.one}, ` +
      `by two or more ${room.answeredBy.twoOrMore} (${pct(room.multiAnswerRate)} of those answered)`,
    orphanText(room.orphans),
  ];
}

/** `orphaned questions: …`: the annotated open questions no person answered, and how the agents did. */
export function orphanText(o: OrphanMetrics): string {
  const secs = (ms: number | null) => (ms === null ? "–" : `${Math.round(ms / 1000)} s`);
  return (
    `orphaned questions: ${o.orphaned} of ${o.open} annotated open questions no person answered — answered by no agent ${o.orphanedAnsweredBy.none}, ` +
    `by one ${o.orphanedAnsweredBy.one}, by two or more ${o.orphanedAnsweredBy.twoOrMore}; once within ${ORPHAN_ANSWER_WITHIN_MS / 60_000} min ` +
    `${o.orphanedOnceInTime} (${(o.orphanedOnceInTimeRate * 100).toFixed(0)}%); time to the answer p50 ${secs(o.timeToAnswerMs.p50)}, p90 ${secs(o.timeToAnswerMs.p90)}; ` +
    `person-answered ones an agent answered too ${o.personAnsweredAlsoByAgent}`
  );
}
