// `replay --persona A --persona B …`: a room of agents of ours in one replayed group, on one
// simulated clock. Each agent runs its own group client and monitor; a reply one of them sends
// enters every other agent's timeline at the moment it is sent (after its model latency and send
// delay) as an agent's message. The log's people are as in the log. Then the room is measured:
// open questions and how many agents answered each, agent messages per person message, and the
// longest run of agent messages with no person between them.
import { memberKeys } from "../group/addressee.ts";
import { isOpenQuestion, replyToOf } from "../monitor/floor.ts";
import type { LogLine } from "./log.ts";
import { feedReplay, installReplayClock, startReplayAgent, type ReplayAgent, type ReplayOptions, type ReplayReport, type ReplaySent } from "./replay.ts";

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
}

export interface RoomAgentReport {
  persona: string;
  aid: string;
  report: ReplayReport;
}

export interface RoomReport {
  agents: RoomAgentReport[];
  /** Every reply the agents sent, in the order sent. */
  sent: ReplaySent[];
  room: RoomMetrics;
}

/** Runs several agents of ours over one log. Each entry of `agents` is one agent's options. */
export async function runRoomReplay(
  lines: readonly LogLine[],
  agents: readonly ReplayOptions[],
  onProgress?: (linesDone: number, linesTotal: number) => void,
  /** Simulated network time from one agent's send to the others' receipt (default 0). */
  deliveryMs = 0,
): Promise<RoomReport> {
  const ids = agents.map((o) => ({ persona: o.persona, aid: o.aid ?? o.persona }));
  const clock = installReplayClock(lines);
  try {
    const sent: ReplaySent[] = [];
    const running: ReplayAgent[] = [];
    agents.forEach((opts, i) => {
      running.push(
        startReplayAgent({
          lines,
          opts,
          peers: ids.filter((_, j) => j !== i),
          onSent: (m) => {
            sent.push(m);
            // Delivered once the sender's own send has returned, at the same simulated time.
            setTimeout(() => {
              for (const other of running) if (other.aid !== m.aid) other.receive(m);
            }, deliveryMs);
          },
        }),
      );
    });
    await feedReplay({ lines, clock, agents: running, ...(onProgress ? { onProgress } : {}) });
    const reports: RoomAgentReport[] = [];
    for (const a of running) reports.push({ persona: a.persona, aid: a.aid, report: await a.finish() });
    const isAgentLine = (l: LogLine) => running.some((a) => a.isPersona(l.sender));
    return { agents: reports, sent, room: measureRoom({ lines, isAgentLine, agentNames: ids, sent, reports }) };
  } finally {
    clock.uninstall();
  }
}

/**
 * The room's figures. Who a reply answers: the open question its `reply_to` names, or, with no
 * `reply_to`, every open question in the batch it was written for.
 */
export function measureRoom(p: {
  lines: readonly LogLine[];
  isAgentLine: (l: LogLine) => boolean;
  agentNames: ReadonlyArray<{ persona: string; aid: string }>;
  sent: readonly ReplaySent[];
  reports: readonly RoomAgentReport[];
}): RoomMetrics {
  const keys = new Set<string>();
  for (const l of p.lines) for (const k of memberKeys(l.sender)) keys.add(k);
  for (const a of p.agentNames) for (const k of [...memberKeys(a.persona), ...memberKeys(a.aid)]) keys.add(k);
  const mentioned = new Set<string>();
  for (const a of p.reports) for (const m of a.report.messages) if (m.isMention) mentioned.add(m.id);

  const open = new Map<string, Set<string>>();
  let personMessages = 0;
  let agentLines = 0;
  for (const l of p.lines) {
    if (p.isAgentLine(l)) {
      agentLines++;
      continue;
    }
    personMessages++;
    if (!mentioned.has(l.id) && isOpenQuestion(l.content, (k) => keys.has(k), l.sender)) open.set(l.id, new Set());
  }
  for (const m of p.sent) {
    const replyTo = replyToOf(m.metadata);
    const targets = replyTo !== undefined ? [replyTo] : m.answers;
    for (const id of targets) open.get(id)?.add(m.aid);
  }
  const answeredBy = { none: 0, one: 0, twoOrMore: 0 };
  for (const by of open.values()) {
    if (by.size === 0) answeredBy.none++;
    else if (by.size === 1) answeredBy.one++;
    else answeredBy.twoOrMore++;
  }
  const answered = answeredBy.one + answeredBy.twoOrMore;
  const agentMessages = p.sent.length + agentLines;
  return {
    agents: p.agentNames.length,
    personMessages,
    agentMessages,
    agentPerPerson: agentMessages / Math.max(1, personMessages),
    openQuestions: open.size,
    answeredBy,
    multiAnswerRate: answered === 0 ? 0 : answeredBy.twoOrMore / answered,
    longestAgentChain: longestChain(p.lines, p.isAgentLine, p.sent),
  };
}

/** The timeline of log lines and sent replies by time (a log line first at a tie): the longest agent run. */
function longestChain(lines: readonly LogLine[], isAgentLine: (l: LogLine) => boolean, sent: readonly ReplaySent[]): number {
  const events = [
    ...lines.map((l, i) => ({ ts: l.ts, order: i, agent: isAgentLine(l) })),
    ...sent.map((m, i) => ({ ts: m.timestamp, order: lines.length + i, agent: true })),
  ].sort((a, b) => a.ts - b.ts || a.order - b.order);
  let run = 0;
  let longest = 0;
  for (const e of events) {
    run = e.agent ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/** The room's text lines (after each agent's own report). */
export function renderRoomText(room: RoomMetrics): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  return [
    `room: ${room.agents} agents, ${room.personMessages} person messages, ${room.agentMessages} agent messages ` +
      `(${room.agentPerPerson.toFixed(3)} per person message), longest agent chain ${room.longestAgentChain}`,
    `open questions: ${room.openQuestions} — answered by no agent ${room.answeredBy.none}, by one ${room.answeredBy.one}, ` +
      `by two or more ${room.answeredBy.twoOrMore} (${pct(room.multiAnswerRate)} of those answered)`,
  ];
}
