// `acp-group start | replay | inspect`. Errors are printed as one clear line (no stack trace);
// `--debug` or ACP_GROUP_DEBUG=1 adds the stack for bug reports.
import { readFileSync } from "node:fs";
import { intOption, list, parse, UsageError } from "./cli-args.ts";
import { ConfigError, DEFAULT_GROUP_SETTINGS, loadConfigFile, resolveGroupSettings } from "./config/load.ts";
import { LogParseError, parseLog, type ParsedLog } from "./replay/log.ts";
import { runReplay, type ReplayReport } from "./replay/replay.ts";
import { inspectAt, inspectSample } from "./replay/inspect.ts";
import type { ChannelConfig, GroupSettings, IdentityConfig } from "./types.ts";


const USAGE = `Usage: acp-group <command> [options]

Commands:
  start    Run the configured agents in a live group on an embedded local network
           [--config FILE] [--say TEXT]... [--as NAME] [--no-stdin] [--duration-ms N] [--log-level L]
           [--domain D] [--port P] [--tls]
  server   Run the local network alone (access point, message service, group.<domain>)
           [--domain D] [--port P] [--tls] [--config FILE] [--state-dir DIR]
  join     Join a group by its link (https://group.<ap>/<group>?code=<invite>)
           <link> --identity ID --config FILE [--message TEXT]
  replay   Replay a recorded chat (JSON Lines: id, ts, sender, content) through the engine
           <log.jsonl> --persona NAME [--aid AID] [--alias A,B] [--config FILE] [--group ID]
           [--agent-latency-ms N] [--responder silent|mention|always] [--reply-text TEXT]
           [--agents A,B] [--seed N] [--skip-bad] [--json]
  inspect  Print the exact system prompt and message body the model would get
           [--config FILE] [--identity ID] [--group ID] [--log FILE --at TS] [--persona NAME] [--json]
  id       Identities (key + certificate) for the ACP network
           create <aid> [--ap DOMAIN | --ap-url URL] [--no-passphrase] | list | show <aid> | import

Run 'acp-group <command> --help' for details.`;

type Io = { out: (s: string) => void; err: (s: string) => void };
const defaultIo: Io = { out: (s) => process.stdout.write(s + "\n"), err: (s) => process.stderr.write(s + "\n") };

export { UsageError } from "./cli-args.ts";

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const [command, ...rest] = argv;
  const debug = rest.includes("--debug") || process.env.ACP_GROUP_DEBUG === "1";
  const args = rest.filter((a) => a !== "--debug");
  try {
    switch (command) {
      case "replay":
        return await replayCommand(args, io);
      case "inspect":
        return await inspectCommand(args, io);
      case "id": {
        const { idCommand } = await import("./cli-id.ts");
        return await idCommand(args, io);
      }
      case "start": {
        const { startCommand } = await import("./start.ts");
        return await startCommand(args, io);
      }
      case "server": {
        const { serverCommand } = await import("./server-command.ts");
        return await serverCommand(args, io);
      }
      case "join": {
        const { joinCommand } = await import("./cli-join.ts");
        return await joinCommand(args, io);
      }
      case undefined:
        // No command is a mistake: the usage goes to stderr so `acp-group > out` stays clean.
        io.err(USAGE);
        return 2;
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return 0;
      default:
        throw new UsageError(`unknown command \`${command}\``);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`acp-group: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof LogParseError) {
      io.err(`acp-group: ${err.message}`);
      return 1;
    }
    const e = err as Error & { code?: string };
    io.err(`acp-group: ${e.message ?? String(err)}${e.code ? ` (${e.code})` : ""}`);
    if (debug && e.stack) io.err(e.stack);
    return 1;
  }
}


function settingsFor(config: ChannelConfig | undefined, identity: IdentityConfig | undefined, groupId: string): GroupSettings {
  return config ? resolveGroupSettings(config, identity, groupId) : DEFAULT_GROUP_SETTINGS;
}

function findIdentity(config: ChannelConfig | undefined, persona: string, aid: string | undefined): IdentityConfig | undefined {
  if (!config) return undefined;
  const key = persona.toLowerCase();
  return Object.values(config.identities).find(
    (i) => (aid && i.aid === aid) || i.name?.toLowerCase() === key || i.aid.split(".")[0]!.toLowerCase() === key,
  );
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
      json: { type: "boolean" },
    },
    true,
  );
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("replay takes exactly one log file");
  if (!values.persona) throw new UsageError("replay needs `--persona NAME` (whose point of view to replay)");
  const responder = values.responder ?? "silent";
  if (responder !== "silent" && responder !== "mention" && responder !== "always") {
    throw new UsageError(`expected \`--responder\` to be silent, mention or always, got \`${responder}\``);
  }
  const config = values.config ? loadConfigFile(values.config) : undefined;
  const identity = findIdentity(config, values.persona, values.aid);
  const parsed = readLogFile(file, values["skip-bad"] === true);
  if (parsed.lines.length === 0) throw new Error(`${file}: no messages`);
  const report = await runReplay(parsed.lines, {
    persona: values.persona,
    ...(values.aid ? { aid: values.aid } : identity ? { aid: identity.aid } : {}),
    aliases: [...(identity?.aliases ?? []), ...list(values.alias)],
    // The log has no group id of its own: --group picks whose configured settings apply.
    settings: settingsFor(config, identity, values.group ?? "replay"),
    agentLatencyMs: intOption(values["agent-latency-ms"], "agent-latency-ms") ?? 2000,
    responder,
    ...(values["reply-text"] !== undefined ? { replyText: values["reply-text"] } : {}),
    agents: list(values.agents),
    seed: intOption(values.seed, "seed") ?? 1,
  });
  if (values.json) {
    io.out(JSON.stringify(parsed.skipped.length ? { ...report, skippedLines: parsed.skipped.length } : report));
  } else {
    printTimeline(report, parsed.lines, io);
    if (parsed.skipped.length) io.out(`skipped ${parsed.skipped.length} bad line(s): ${parsed.skipped.slice(0, 5).map((s) => `line ${s.line} (${s.reason})`).join("; ")}`);
  }
  return 0;
}

/** Reads and parses a log; a bad line's error names the file as well as the line. */
function readLogFile(file: string, skipBad: boolean): ParsedLog {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return parseLog(text, { skipBad });
  } catch (err) {
    if (err instanceof LogParseError) throw new LogParseError(err.line, err.reason, file);
    throw err;
  }
}

function clock(ts: number): string {
  return new Date(ts).toISOString().slice(11, 19);
}

function printTimeline(report: ReplayReport, lines: readonly { id: string; ts: number; sender: string; content: string }[], io: Io): void {
  const byId = new Map(lines.map((l) => [l.id, l]));
  const flagsById = new Map(report.messages.map((m) => [m.id, m]));
  for (const d of report.dispatches) {
    const o = d.outcome;
    const verdict = o.sent ? `sent ${o.replyType}: ${JSON.stringify(o.text)}` : `skipped (${o.skipReason ?? "?"})`;
    io.out(
      `${clock(d.at)}  dispatch ${d.trigger.padEnd(7)} ${String(d.messageIds.length).padStart(3)} msg(s), ` +
        `${d.batchesMerged} batch(es), mentions=${d.mentionCount}, ${d.vitality.state} ` +
        `(${d.vitality.messagesIn5m} msgs/${d.vitality.uniqueSpeakersIn5m} speakers in 5m) → ${verdict}`,
    );
    for (const id of d.messageIds) {
      const l = byId.get(id);
      const m = flagsById.get(id);
      if (l && m && (m.isMention || m.engaged)) io.out(`            ${m.isMention ? "[mentioned]" : "[engaged]  "} ${l.sender}: ${l.content.slice(0, 100)}`);
    }
  }
  const s = report.summary;
  io.out("");
  io.out(
    `${s.messages} messages, ${s.mentions} mentions → ${s.dispatches} dispatches (${s.modelCalls} model calls, ` +
      `${((100 * s.modelCalls) / Math.max(1, s.messages)).toFixed(1)}% of messages), ${s.sent} sent`,
  );
  io.out(`wait: max ${(s.maxWaitMs / 1000).toFixed(1)} s, p95 ${(s.p95WaitMs / 1000).toFixed(1)} s, mentions max ${(s.maxMentionWaitMs / 1000).toFixed(1)} s`);
  const skipped = Object.entries(s.skipped).map(([k, v]) => `${k}=${v}`).join(", ");
  if (skipped) io.out(`skipped: ${skipped}`);
  const drops = new Map<string, number>();
  for (const d of report.drops) drops.set(d.reason, (drops.get(d.reason) ?? 0) + 1);
  if (drops.size) io.out(`drops: ${[...drops].map(([k, v]) => `${k}=${v}`).join(", ")}`);
  const a = report.addressed;
  if (a) {
    io.out(
      `addressed (annotated): ${a.reached}/${a.gold} reached a model call (${(a.reachRate * 100).toFixed(0)}%), ` +
        `wait p50 ${(a.waitP50Ms / 1000).toFixed(1)} s, p95 ${(a.waitP95Ms / 1000).toFixed(1)} s; ` +
        `flags precision ${a.precision.toFixed(2)}, recall ${a.recall.toFixed(2)}`,
    );
  }
}

async function inspectCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, {
    config: { type: "string" },
    identity: { type: "string" },
    group: { type: "string" },
    log: { type: "string" },
    at: { type: "string" },
    persona: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  if ((values.log === undefined) !== (values.at === undefined)) throw new UsageError("`--log` and `--at` go together");
  const config = values.config ? loadConfigFile(values.config) : undefined;
  const ids = config ? Object.keys(config.identities) : [];
  const identityId = values.identity ?? ids[0];
  let identity: IdentityConfig | undefined = identityId && config ? config.identities[identityId] : undefined;
  if (values.identity && !identity) throw new UsageError(`no identity \`${values.identity}\` in the configuration (have: ${ids.join(", ") || "none"})`);
  identity ??= { aid: "agent.agentcp.io", name: values.persona ?? "Agent", aliases: [], enabled: true, groups: {} };
  const groups = config ? [...new Set([...Object.keys(config.groups), ...Object.keys(identity.groups)])].filter((g) => g !== "*") : [];
  const groupId = values.group ?? groups[0] ?? "group";
  const settings = settingsFor(config, config ? identity : undefined, groupId);
  let result;
  if (values.log !== undefined && values.at !== undefined) {
    const at = /^\d+$/.test(values.at) ? Number(values.at) : Date.parse(values.at);
    if (!Number.isFinite(at)) throw new UsageError(`expected \`--at\` to be epoch ms or an ISO time, got \`${values.at}\``);
    const { lines } = readLogFile(values.log, false);
    result = await inspectAt({ lines, at, identity, persona: values.persona ?? identity.name ?? identity.aid, groupId, settings });
  } else {
    result = inspectSample({ identity, groupId, settings, now: Date.now() });
  }
  if (values.json) {
    io.out(JSON.stringify(result));
    return 0;
  }
  io.out(`# identity ${identity.aid} · group ${groupId} · messages: ${result.source} (${result.messageCount}) · reply_type=${result.replyType}`);
  io.out("\n===== system prompt =====");
  io.out(result.systemPrompt);
  io.out("\n===== message body =====");
  io.out(result.body);
  return 0;
}
