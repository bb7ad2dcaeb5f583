// `acp-group replay`: options, the replay, and its text, JSON or HTML report.
import { writeFileSync } from "node:fs";
import { intOption, list, parse, UsageError, type CommandSpec, type Io } from "../cli-args.ts";
import { configuredGroups, loadOptionalConfig, readLogFile, requireGroup, settingsFor, warnSilentPersona } from "../cli-checks.ts";
import { renderHtmlReport } from "../report/html.ts";
import type { ChannelConfig, IdentityConfig } from "../types.ts";
import { runReplay } from "./replay.ts";
import { ONLY_FILTERS, renderTextReport, type OnlyFilter } from "./text-report.ts";

/** Logs at least this long show a progress line on a terminal's stderr. */
const PROGRESS_MIN_LINES = 20_000;

export const replaySpec: CommandSpec = {
  name: "replay",
  summary: "Replay a recorded chat (JSON Lines: id, ts, sender, content) through the engine",
  usage:
    "<log.jsonl> --persona NAME [--aid AID] [--alias A,B] [--config FILE] [--group ID]\n" +
    "[--agent-latency-ms N] [--responder silent|mention|always] [--reply-text TEXT]\n" +
    "[--agents A,B] [--seed N] [--skip-bad] [--only mentions|engaged|skips|sent] [--json] [--html FILE]",
  help: [
    "Replays the log on a simulated clock through the real group client and monitor, with a",
    "deterministic stand-in for the model, and reports every dispatch and its decision.",
    "",
    "  --persona NAME       whose point of view: that sender's lines are the agent's own",
    "  --aid AID            the agent's id (default: the configured identity's, else NAME)",
    "  --alias A,B          more names that mention the agent",
    "  --config FILE        take identity and group settings from a configuration",
    "  --group ID           which configured group's settings apply (needs --config)",
    "  --agent-latency-ms N simulated model latency (default 2000)",
    "  --responder MODE     silent (default), mention or always: when the stand-in model replies",
    "  --reply-text TEXT    what it replies",
    "  --agents A,B         senders to treat as agents (everyone else is human)",
    "  --seed N             seed of the send-delay draws (default 1)",
    "  --skip-bad           count and skip bad lines instead of stopping at the first",
    "  --only F[,F]         text output: only dispatches that are mentions, engaged, skips or sent",
    "  --json               the whole report as one JSON object on stdout",
    "  --html FILE          also write a self-contained HTML page of the run to FILE",
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
      persona: { type: "string" },
      aid: { type: "string" },
      alias: { type: "string" },
      config: { type: "string" },
      group: { type: "string" },
      "agent-latency-ms": { type: "string" },
      responder: { type: "string" },
      "reply-text": { type: "string" },
      agents: { type: "string" },
      seed: { type: "string" },
      "skip-bad": { type: "boolean" },
      only: { type: "string" },
      json: { type: "boolean" },
      html: { type: "string" },
    },
    true,
  );
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("replay takes exactly one log file");
  if (!values.persona) throw new UsageError("replay needs `--persona NAME` (whose point of view to replay)");
  const responder = values.responder ?? "silent";
  if (responder !== "silent" && responder !== "mention" && responder !== "always") {
    throw new UsageError(`expected \`--responder\` to be silent, mention or always, got \`${responder}\``);
  }
  const only = parseOnly(values.only);
  if (only.length && values.json) throw new UsageError("`--only` filters the text output; leave it out with `--json`");
  if (values.html === "") throw new UsageError("expected `--html` to be a file name, got ``");
  const agentLatencyMs = intOption(values["agent-latency-ms"], "agent-latency-ms") ?? 2000;
  const seed = intOption(values.seed, "seed") ?? 1;
  const config = loadOptionalConfig(values.config);
  const identity = findIdentity(config, values.persona, values.aid);
  if (values.group !== undefined) requireGroup(values.group, config ? configuredGroups(config, identity) : [], values.config);
  const parsed = readLogFile(file, values["skip-bad"] === true);
  if (parsed.lines.length === 0) throw new Error(`${file}: no messages`);
  const aid = values.aid ?? identity?.aid;
  const aliases = [...(identity?.aliases ?? []), ...list(values.alias)];
  warnSilentPersona(parsed.lines, [values.persona, ...(aid ? [aid] : []), ...aliases], io);
  const progress = io.progress && parsed.lines.length >= PROGRESS_MIN_LINES ? io.progress : undefined;
  const report = await runReplay(parsed.lines, {
    persona: values.persona,
    ...(aid ? { aid } : {}),
    aliases,
    ...(identity?.owner !== undefined ? { owner: identity.owner } : {}),
    // The log has no group id of its own: --group picks whose configured settings apply.
    settings: settingsFor(config, identity, values.group ?? "replay"),
    agentLatencyMs,
    responder,
    ...(values["reply-text"] !== undefined ? { replyText: values["reply-text"] } : {}),
    agents: list(values.agents),
    seed,
    ...(progress ? { onProgress: (done: number, total: number) => progress(`replay: ${done.toLocaleString("en")}/${total.toLocaleString("en")} lines`) } : {}),
  });
  progress?.("");
  if (values.html !== undefined) {
    writeFileSync(values.html, renderHtmlReport({ report, lines: parsed.lines, persona: values.persona, aid, source: file }));
  }
  if (values.json) {
    io.out(JSON.stringify(parsed.skipped.length ? { ...report, skippedLines: parsed.skipped.length } : report));
  } else {
    for (const l of renderTextReport(report, parsed.lines, only)) io.out(l);
    if (values.html !== undefined) io.out(`report: ${values.html}`);
    if (parsed.skipped.length) io.out(`skipped ${parsed.skipped.length} bad line(s): ${parsed.skipped.slice(0, 5).map((s) => `line ${s.line} (${s.reason})`).join("; ")}`);
  }
  return 0;
}
