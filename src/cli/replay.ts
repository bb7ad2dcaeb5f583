// `acp-group replay`: options, the replay, and its text, JSON or HTML report.
import { closeSync, openSync } from "node:fs";
import { intOption, list, parse, UsageError, type CommandSpec, type Io } from "./args.ts";
import { configuredGroups, loadOptionalConfig, openLogFile, requireGroup, settingsFor, warnSilentPersona } from "./checks.ts";
import { writeHtmlReport } from "../report/html.ts";
import { viewRun, type PageRun } from "../report/page-run.ts";
import type { ChannelConfig, IdentityConfig } from "../types.ts";
import { FileWriter } from "../replay/file-writer.ts";
import type { LineSource } from "../replay/log-source.ts";
import { replayLog, type ReplayMessage, type ReplayReport, type ReplayView } from "../replay/replay.ts";
import { renderRoomText, runRoomReplay, type RoomMetrics, type RoomReport } from "../replay/room.ts";
import { renderSuiteTable, runSuite } from "../replay/suite.ts";
import { ONLY_FILTERS, renderTextReport, type OnlyFilter } from "../replay/text-report.ts";

/** Logs at least this long show a progress line on a terminal's stderr. */
const PROGRESS_MIN_LINES = 20_000;

export const replaySpec: CommandSpec = {
  name: "replay",
  summary: "Replay a recorded chat (JSON Lines: id, ts, sender, content) through the engine",
  usage:
    "<log.jsonl> --persona NAME [--persona NAME …] [--aid AID] [--alias A,B] [--config FILE] [--group ID]\n" +
    "[--agent-latency-ms N] [--responder silent|mention|always|helpful] [--reply-text TEXT]\n" +
    "[--agents A,B] [--strangers A,B] [--seed N] [--skip-bad] [--only mentions|engaged|skips|sent] [--json] [--html FILE]\n" +
    "--suite DIR [--personas N] [--config FILE] [--group ID] [--responder MODE] [--json]",
  help: [
    "Replays the log on a simulated clock through the real group client and monitor, with a",
    "deterministic stand-in for the model, and reports every dispatch and its decision.",
    "",
    "  --persona NAME       whose point of view: that sender's lines are the agent's own;",
    "                       repeated, a room of agents of ours on one clock, each seeing the",
    "                       others' replies (a name not in the log is a fresh agent)",
    "  --aid AID            the agent's id (default: the configured identity's, else NAME)",
    "  --alias A,B          more names that mention the agent",
    "  --config FILE        take identity and group settings from a configuration",
    "  --group ID           which configured group's settings apply (needs --config)",
    "  --agent-latency-ms N simulated model latency (default 2000)",
    "  --responder MODE     silent (default), mention, always or helpful (a mention or a question):",
    "                       when the stand-in model replies",
    "  --reply-text TEXT    what it replies",
    "  --agents A,B         senders to treat as agents (everyone else is human)",
    "  --strangers A,B      senders nobody vouches for: neither person nor agent (as someone",
    "                       who joined an open group by its link)",
    "  --seed N             seed of the send-delay draws (default 1)",
    "  --skip-bad           count and skip bad lines instead of stopping at the first",
    "  --only F[,F]         text output: only dispatches that are mentions, engaged, skips or sent",
    "  --json               the whole report as one JSON object on stdout",
    "  --html FILE          also write a self-contained HTML page of the run to FILE",
    "",
    "  --suite DIR          replay every .jsonl log of DIR for its most addressed personas (from",
    "                       DIR/personas.json, else the annotations) and print the reach table per",
    "                       persona, per log and pooled, with why lines were missed (responder",
    "                       default: mention)",
    "  --personas N         personas per log in a suite (default 3)",
  ].join("\n"),
  run: replayCommand,
};

function findIdentity(config: ChannelConfig | undefined, persona: string, aid: string | undefined): IdentityConfig | undefined {
  if (!config) return undefined;
  const key = persona.toLowerCase();
  return Object.values(config.identities).find(
    (i) => (aid && i.aid === aid) || i.name?.toLowerCase() === key || i.aid.split(".")[0]!.toLowerCase() === key,
  );
}

/** `skipped N bad line(s): line 3 (not valid JSON); …` — the first five named. */
const skippedLine = (parsed: Pick<LineSource, "skipped" | "skippedCount">): string => `skipped ${parsed.skippedCount} bad line(s): ${parsed.skipped.slice(0, 5).map((s) => `line ${s.line} (${s.reason})`).join("; ")}`;

/** `--html FILE`: the page written a piece at a time (its lines walked again from the log), never held whole. */
function writeHtml(file: string, run: PageRun, meta: { persona: string; aid: string | undefined; source: string; room?: RoomMetrics }, progress: ((line: string) => void) | undefined): void {
  const fd = openSync(file, "w");
  try {
    const out = new FileWriter(fd);
    const onProgress = progress && ((done: number, total: number) => progress(`page: ${done.toLocaleString("en")}/${total.toLocaleString("en")} lines`));
    writeHtmlReport(run, { ...meta, ...(onProgress ? { onProgress } : {}) }, (s) => out.write(s));
    out.flush();
  } finally {
    closeSync(fd);
    progress?.("");
  }
}

/**
 * A JSON object written a piece at a time where the output takes pieces (else built whole and
 * given to `out`): `raw` text, `array(items)` one item at a time, `end` the last piece and the line.
 */
function jsonOut(io: Io) {
  let pending: string[] = [];
  let size = 0;
  const raw = (s: string) => {
    pending.push(s);
    size += s.length;
    if (io.write && size >= 64 * 1024) {
      io.write(pending.join(""));
      pending = [];
      size = 0;
    }
  };
  return {
    raw,
    /** `[a,b,…]`, each item as JSON.stringify writes it. */
    array(items: Iterable<unknown>) {
      let first = true;
      raw("[");
      for (const item of items) {
        raw(first ? JSON.stringify(item) : `,${JSON.stringify(item)}`);
        first = false;
      }
      raw("]");
    },
    /** Closes with `rest`'s fields (JSON.stringify's text without its `{`), and ends the line. */
    end(rest: Record<string, unknown>) {
      const tail = JSON.stringify(rest);
      raw(tail === "{}" ? "}" : `,${tail.slice(1)}`);
      if (io.write) io.write(`${pending.join("")}\n`);
      else io.out(pending.join(""));
    },
  };
}

/** `--json` of one agent: the report as JSON.stringify writes it, `messages` as the replay walks the log. */
function jsonReport(io: Io): { message: (m: ReplayMessage) => void; end: (report: ReplayReport, view: ReplayView, skippedLines: number) => void } {
  const out = jsonOut(io);
  let first = true;
  out.raw('{"messages":[');
  return {
    message(m) {
      out.raw(first ? JSON.stringify(m) : `,${JSON.stringify(m)}`);
      first = false;
    },
    end(report, view, skippedLines) {
      out.raw('],"dispatches":');
      out.array(view.dispatches());
      out.raw(',"drops":');
      out.array(view.drops());
      const { payers, summary, addressed } = report;
      out.end({ payers, summary, addressed, ...(skippedLines ? { skippedLines } : {}) });
    },
  };
}

/** `--json` of a room: each agent's dispatches, drops and totals, then the room's figures. */
function jsonRoom(io: Io, room: RoomReport, skippedLines: number): void {
  const out = jsonOut(io);
  out.raw('{"agents":[');
  room.agents.forEach((a, i) => {
    out.raw(`${i ? "," : ""}{"persona":${JSON.stringify(a.persona)},"dispatches":`);
    out.array(a.view.dispatches());
    out.raw(',"drops":');
    out.array(a.view.drops());
    out.raw(`,"summary":${JSON.stringify(a.report.summary)}}`);
  });
  out.raw("]");
  out.end({ room: room.room, ...(skippedLines ? { skippedLines } : {}) });
}

function parseOnly(v: string | undefined): OnlyFilter[] {
  const items = list(v);
  for (const f of items) {
    if (!(ONLY_FILTERS as readonly string[]).includes(f)) throw new UsageError(`expected \`--only\` to be ${ONLY_FILTERS.join(", ")} (or a comma list), got \`${f}\``);
  }
  return items as OnlyFilter[];
}

async function replayCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      persona: { type: "string", multiple: true },
      aid: { type: "string" },
      alias: { type: "string" },
      config: { type: "string" },
      group: { type: "string" },
      "agent-latency-ms": { type: "string" },
      responder: { type: "string" },
      "reply-text": { type: "string" },
      agents: { type: "string" },
      strangers: { type: "string" },
      seed: { type: "string" },
      "skip-bad": { type: "boolean" },
      only: { type: "string" },
      json: { type: "boolean" },
      html: { type: "string" },
      suite: { type: "string" },
      personas: { type: "string" },
    },
    true,
  );
  if (values.suite !== undefined) return suiteCommand(values, positionals, io);
  if (values.personas !== undefined) throw new UsageError("`--personas` goes with `--suite DIR`");
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("replay takes exactly one log file");
  const personas = values.persona ?? [];
  if (personas.length === 0) throw new UsageError("replay needs `--persona NAME` (whose point of view to replay)");
  const responder = values.responder ?? "silent";
  if (responder !== "silent" && responder !== "mention" && responder !== "always" && responder !== "helpful") {
    throw new UsageError(`expected \`--responder\` to be silent, mention, always or helpful, got \`${responder}\``);
  }
  const only = parseOnly(values.only);
  if (only.length && values.json) throw new UsageError("`--only` filters the text output; leave it out with `--json`");
  if (values.html === "") throw new UsageError("expected `--html` to be a file name, got ``");
  const agentLatencyMs = intOption(values["agent-latency-ms"], "agent-latency-ms") ?? 2000;
  const seed = intOption(values.seed, "seed") ?? 1;
  const config = loadOptionalConfig(values.config);
  if (personas.length > 1) {
    if (values.aid !== undefined || values.alias !== undefined) throw new UsageError("`--aid` and `--alias` name one agent; with several `--persona`, configure them with `--config`");
    return replayRoom({ file, personas, values, config, responder, agentLatencyMs, seed, only, io });
  }
  const persona = personas[0]!;
  const identity = findIdentity(config, persona, values.aid);
  if (values.group !== undefined) requireGroup(values.group, config ? configuredGroups(config, identity) : [], values.config);
  const parsed = openLogFile(file, values["skip-bad"] === true);
  try {
    if (parsed.count === 0) throw new Error(`${file}: no messages`);
    const aid = values.aid ?? identity?.aid;
    const aliases = [...(identity?.aliases ?? []), ...list(values.alias)];
    warnSilentPersona(parsed.lines(), [persona, ...(aid ? [aid] : []), ...aliases], io);
    const progress = io.progress && parsed.count >= PROGRESS_MIN_LINES ? io.progress : undefined;
    // Each line's fate as it comes: written out with --json.
    const json = values.json ? jsonReport(io) : undefined;
    const onMessage = (m: ReplayMessage) => json?.message(m);
    const { report, view } = await replayLog(parsed, {
      persona,
      ...(aid ? { aid } : {}),
      aliases,
      ...(identity?.owner !== undefined ? { owner: identity.owner } : {}),
      // The log has no group id of its own: --group picks whose configured settings apply.
      settings: settingsFor(config, identity, values.group ?? "replay"),
      agentLatencyMs,
      responder,
      ...(values["reply-text"] !== undefined ? { replyText: values["reply-text"] } : {}),
      agents: list(values.agents),
      strangers: list(values.strangers),
      seed,
      ...(progress ? { onProgress: (done: number, total: number) => progress(`replay: ${done.toLocaleString("en")}/${total.toLocaleString("en")} lines`) } : {}),
    }, onMessage);
    progress?.("");
    try {
      if (values.html !== undefined) {
        writeHtml(values.html, viewRun(report, view, parsed), { persona, aid, source: file }, progress);
      }
      if (json) {
        json.end(report, view, parsed.skippedCount);
      } else {
        for (const l of renderTextReport(report, view, only)) io.out(l);
        if (values.html !== undefined) io.out(`report: ${values.html}`);
        if (parsed.skippedCount) io.out(skippedLine(parsed));
      }
    } finally {
      view.close();
    }
    return 0;
  } finally {
    parsed.close();
  }
}

/** `--persona A --persona B …`: the room replay, its per-agent reports and the room's figures. */
async function replayRoom(p: {
  file: string;
  personas: readonly string[];
  values: { config?: string | undefined; group?: string | undefined; "reply-text"?: string | undefined; agents?: string | undefined; strangers?: string | undefined; "skip-bad"?: boolean | undefined; json?: boolean | undefined; html?: string | undefined };
  config: ChannelConfig | undefined;
  responder: "silent" | "mention" | "always" | "helpful";
  agentLatencyMs: number;
  seed: number;
  only: OnlyFilter[];
  io: Io;
}): Promise<number> {
  const { values, config, io } = p;
  const keys = p.personas.map((n) => n.toLowerCase());
  if (new Set(keys).size !== keys.length) throw new UsageError("each `--persona` must name a different agent");
  const identities = p.personas.map((name) => findIdentity(config, name, undefined));
  if (values.group !== undefined) requireGroup(values.group, config ? [...new Set(identities.flatMap((i) => configuredGroups(config, i)))] : [], values.config);
  const parsed = openLogFile(p.file, values["skip-bad"] === true);
  try {
    if (parsed.count === 0) throw new Error(`${p.file}: no messages`);
    const progress = io.progress && parsed.count >= PROGRESS_MIN_LINES ? io.progress : undefined;
    const room = await runRoomReplay(
      parsed,
      p.personas.map((persona, i) => {
        const identity = identities[i];
        return {
          persona,
          ...(identity ? { aid: identity.aid } : {}),
          aliases: [...(identity?.aliases ?? [])],
          settings: settingsFor(config, identity, values.group ?? "replay"),
          agentLatencyMs: p.agentLatencyMs,
          responder: p.responder,
          ...(values["reply-text"] !== undefined ? { replyText: values["reply-text"] } : {}),
          agents: list(values.agents),
          strangers: list(values.strangers),
          // Each agent draws its own delays.
          seed: p.seed + i,
        };
      }),
      progress ? (done, total) => progress(`replay: ${done.toLocaleString("en")}/${total.toLocaleString("en")} lines`) : undefined,
    );
    progress?.("");
    try {
      if (values.html !== undefined) {
        const first = room.agents[0]!;
        writeHtml(values.html, viewRun(first.report, first.view, parsed), { persona: first.persona, aid: first.aid, source: p.file, room: room.room }, progress);
      }
      if (values.json) {
        jsonRoom(io, room, parsed.skippedCount);
        return 0;
      }
      for (const a of room.agents) {
        io.out(`── agent ${a.persona}${a.aid !== a.persona ? ` (${a.aid})` : ""} ──`);
        for (const l of renderTextReport(a.report, a.view, p.only)) io.out(l);
        io.out("");
      }
      for (const l of renderRoomText(room.room)) io.out(l);
      if (values.html !== undefined) io.out(`report: ${values.html}`);
      if (parsed.skippedCount) io.out(skippedLine(parsed));
      return 0;
    } finally {
      for (const a of room.agents) a.view.close();
    }
  } finally {
    parsed.close();
  }
}

const SUITE_ONLY_WITH = new Set(["suite", "personas", "config", "group", "responder", "agent-latency-ms", "seed", "json"]);

async function suiteCommand(values: Record<string, string | string[] | boolean | undefined>, positionals: string[], io: Io): Promise<number> {
  const dir = values.suite as string;
  if (dir === "") throw new UsageError("expected `--suite` to be a folder, got ``");
  if (positionals.length) throw new UsageError("`--suite DIR` replays the folder's logs: leave out the log file");
  const stray = Object.keys(values).filter((k) => values[k] !== undefined && !SUITE_ONLY_WITH.has(k));
  if (stray.length) throw new UsageError(`\`--${stray[0]}\` does not go with \`--suite\``);
  const responder = (values.responder as string | undefined) ?? "mention";
  if (responder !== "silent" && responder !== "mention" && responder !== "always" && responder !== "helpful") {
    throw new UsageError(`expected \`--responder\` to be silent, mention, always or helpful, got \`${responder}\``);
  }
  const personas = intOption(values.personas as string | undefined, "personas", 1) ?? 3;
  const config = loadOptionalConfig(values.config as string | undefined);
  const group = values.group as string | undefined;
  if (group !== undefined) requireGroup(group, config ? configuredGroups(config, undefined) : [], values.config as string | undefined);
  const agentLatencyMs = intOption(values["agent-latency-ms"] as string | undefined, "agent-latency-ms");
  const seed = intOption(values.seed as string | undefined, "seed");
  const report = await runSuite(dir, {
    settings: settingsFor(config, undefined, group ?? "replay"),
    responder,
    personas,
    ...(agentLatencyMs !== undefined ? { agentLatencyMs } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(io.progress ? { onLog: (log: string, persona: string) => io.progress!(`replay --suite: ${log} as ${persona}`) } : {}),
  });
  io.progress?.("");
  if (values.json) io.out(JSON.stringify(report));
  else for (const l of renderSuiteTable(report)) io.out(l);
  return 0;
}
