// `start`: the embedded default. A local group server plus every configured identity in one
// process, over real sockets, printing the conversation and each dispatch decision as it happens.
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { listGroupsForIdentity, loadConfigFile } from "./config/load.ts";
import { intOption, parse, UsageError } from "./cli-args.ts";
import { createScriptedBackend } from "./host/deterministic.ts";
import { createConversationRegistry } from "./host/conversation-store.ts";
import { createOpenAIBackend, resolveLlmSettings } from "./host/standalone.ts";
import { createJsonLogger, errorFields } from "./log.ts";
import type { DispatchDecision } from "./monitor/monitor.ts";
import { displaySafe } from "./monitor/outbound.ts"; // issue-10: terminal-safe transcript
import { startIdentity, type RunningIdentity } from "./runtime.ts";
import { startGroupServer, type GroupDefinition, type GroupServer } from "./server/group-server.ts";
import { createFileHistoryStore } from "./server/index.ts";
import { createFileStateStore, defaultStateDir } from "./state/file-store.ts";
import type { AgentBackend, ChannelConfig, GroupMessage, LogLevel } from "./types.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

export const DEFAULT_CONFIG = resolve(dirname(fileURLToPath(import.meta.url)), "..", "config", "demo.json");

const OFFLINE_PREFIX = "[offline responder]";

export async function startCommand(args: string[], io: Io, opts: { signal?: AbortSignal; stdin?: NodeJS.ReadableStream } = {}): Promise<number> {
  const { values } = parse(args, {
    config: { type: "string" },
    say: { type: "string", multiple: true },
    as: { type: "string" },
    group: { type: "string" },
    "no-stdin": { type: "boolean" },
    "duration-ms": { type: "string" },
    "log-level": { type: "string" },
    "state-dir": { type: "string" },
  });
  if (values.help) {
    io.out(
      "acp-group start [--config FILE] [--say TEXT]... [--as NAME] [--group ID] [--no-stdin] [--duration-ms N] [--log-level debug|info|warn|error] [--state-dir DIR]\n" +
        `  Default config: ${DEFAULT_CONFIG}. Lines typed on stdin are posted into the group as the human member.`,
    );
    return 0;
  }
  const logLevel = (values["log-level"] ?? "warn") as LogLevel;
  if (!["debug", "info", "warn", "error"].includes(logLevel)) throw new UsageError(`expected \`--log-level\` to be debug, info, warn or error, got \`${logLevel}\``);
  const durationMs = intOption(values["duration-ms"], "duration-ms", 1);
  const configFile = values.config ?? DEFAULT_CONFIG;
  const loaded = loadConfigFile(configFile);
  const stateDir = values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const config: ChannelConfig = { ...loaded, stateDir };
  const identityIds = Object.entries(config.identities).filter(([, i]) => i.enabled).map(([id]) => id);
  if (identityIds.length === 0) throw new UsageError(`${configFile}: no enabled identity under \`identities\``);
  const logger = createJsonLogger({ level: logLevel, write: (line) => io.err(line) });
  const human = values.as ?? config.humans[0] ?? "you";

  // Groups and their members, from the identities' configured groups.
  const groupMembers = new Map<string, Set<string>>();
  for (const id of identityIds) {
    for (const g of listGroupsForIdentity(config, config.identities[id]!)) {
      let set = groupMembers.get(g);
      if (!set) groupMembers.set(g, (set = new Set()));
      set.add(id);
    }
  }
  const groupIds = [...groupMembers.keys()].sort();
  if (groupIds.length === 0) throw new UsageError(`${configFile}: no group configured (add one under \`groups\`)`);
  const sayGroup = values.group ?? groupIds[0]!;
  if (!groupMembers.has(sayGroup)) throw new UsageError(`no group \`${sayGroup}\` (have: ${groupIds.join(", ")})`);

  let server: GroupServer | undefined;
  if (!config.serverUrl) {
    const historyFile = join(stateDir, "embedded-server", "history.jsonl");
    mkdirSync(dirname(historyFile), { recursive: true });
    const groups: Record<string, GroupDefinition> = {};
    for (const [g, ids] of groupMembers) {
      const members: GroupDefinition["members"] = {};
      for (const id of ids) {
        const i = config.identities[id]!;
        members[i.aid] = i.token ? { token: i.token } : {};
      }
      for (const h of new Set([...config.humans, human])) members[h] = { human: true };
      groups[g] = { name: config.groups[g]?.subject ?? g, members };
    }
    // issue-10: the history store is built here so its skipped bad lines reach the log.
    const history = createFileHistoryStore(historyFile);
    if (history.skippedLines > 0) logger.log("warn", "server.history_lines_skipped", { file: historyFile, skipped: history.skippedLines });
    server = await startGroupServer({ groups, history, logger });
    config.serverUrl = server.url.replace("http://", "ws://");
    io.out(`embedded group server on ${server.url} · groups: ${groupIds.join(", ")} · state: ${stateDir}`);
  } else if (values.say?.length) {
    throw new UsageError("--say needs the embedded server (leave `serverUrl` out of the config)");
  }

  const llm = resolveLlmSettings(config.llm, process.env);
  const store = createFileStateStore({ dir: stateDir, logger });
  let backend: AgentBackend;
  let saveConversations = () => {};
  if (llm.configured) {
    const conversations = createConversationRegistry({ historyTokenLimit: llm.historyTokenLimit, persistence: store, logger });
    backend = createOpenAIBackend({ llm: config.llm, logger, conversations });
    saveConversations = () => conversations.saveAll();
    io.out(`model: ${llm.model} at ${llm.baseUrl ?? "the OpenAI API"}`);
  } else {
    backend = createScriptedBackend({
      mode: "mention",
      replyText: (req) => {
        const last = [...req.messages].reverse().find((m) => m.isMention) ?? req.messages.at(-1);
        return `${OFFLINE_PREFIX} heard ${last?.sender ?? "someone"}: "${[...(last?.content ?? "")].slice(0, 80).join("")}"`;
      },
    });
    io.out(`no model configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY): using the ${OFFLINE_PREFIX}, which answers only when mentioned`);
  }

  const aidToName = new Map(identityIds.map((id) => [config.identities[id]!.aid, id]));
  const printed = new Set<string>();
  const printMessage = (m: GroupMessage) => {
    const key = `${m.groupId}\u0000${m.msgId}`;
    if (printed.has(key)) return;
    printed.add(key);
    const who = aidToName.has(m.sender) ? `${m.sender} (agent)` : m.sender;
    // Member-written fields are shown, never obeyed by the terminal (escape sequences, bidi).
    io.out(displaySafe(`${new Date(m.timestamp).toISOString().slice(11, 19)} [${m.groupId}] #${m.msgId} ${who}: ${m.content}`));
  };
  if (server) server.onMessage(printMessage);

  const printDecision = (d: DispatchDecision) => {
    const o = d.outcome;
    const verdict = o.sent ? `sent ${o.replyType}` : `skipped: ${o.skipReason}${d.detail ? ` (${d.detail})` : ""}`;
    io.out(
      `    ↳ ${d.identityId} [${d.groupId}] dispatch #${d.dispatchId} ${d.trigger} · ${d.messageIds.length} msg(s) · ` +
        `${d.vitality.state} ${d.vitality.messagesIn5m}/${d.vitality.uniqueSpeakersIn5m} · mentions ${d.mentionInfo.mentionCount} · ` +
        `reply_type ${d.replyType ?? "-"} · budget ${d.budgetRatio.toFixed(2)} → ${verdict}`,
    );
  };

  const running: RunningIdentity[] = [];
  const stop = new AbortController();
  let stopping: Promise<void> | undefined;
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  const shutdown = (why: string): Promise<void> => {
    stopping ??= (async () => {
      try {
        io.out(`stopping (${why}) — saving state`);
        stop.abort();
        await Promise.all(running.map((r) => r.done));
        saveConversations();
        await backend.close?.().catch((err: unknown) => logger.log("warn", "start.backend_close_failed", errorFields(err)));
        await server?.close();
      } catch (err) {
        logger.log("error", "start.shutdown_failed", errorFields(err));
      } finally {
        // Resolved here, not from an abort listener: `stopping` is not assigned yet while
        // stop.abort() runs its listeners synchronously.
        markStopped();
      }
    })();
    return stopping;
  };
  // Installed before connecting, so Ctrl-C while an external server is unreachable still saves state.
  const onSigint = () => void shutdown("Ctrl-C");
  const onAbortSignal = () => void shutdown("aborted");
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigint);
  opts.signal?.addEventListener("abort", onAbortSignal, { once: true });
  const detach = () => {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    opts.signal?.removeEventListener("abort", onAbortSignal);
  };
  if (opts.signal?.aborted) void shutdown("aborted");

  try {
    for (const id of identityIds) {
      if (stopping) break;
      running.push(
        startIdentity({
          config,
          identityId: id,
          backend,
          logger,
          store,
          abortSignal: stop.signal,
          onDecision: printDecision,
          ...(server ? {} : { onMessages: (_g: string, msgs: readonly GroupMessage[]) => msgs.forEach(printMessage) }),
        }),
      );
    }
    // Stopping while connecting ends the wait too (ready rejects once its identity closes).
    await Promise.race([Promise.all(running.map((r) => r.ready)), stopped]);
  } catch (err) {
    // A refused token or a bad identity: close what already runs (and the embedded server) first.
    await shutdown("start failed");
    detach();
    throw err;
  }
  if (!stopping) io.out(`agents online: ${running.map((r) => `${r.identityId} (${r.aid})`).join(", ")}`);

  const post = (content: string) => {
    if (!server || stopping) return;
    server.post({ groupId: sayGroup, sender: human, content });
  };
  for (const text of values.say ?? []) post(text);

  let rl: ReturnType<typeof createInterface> | undefined;
  const input = opts.stdin ?? process.stdin;
  // Typed or piped lines (`echo "Alice, hi" | npm start`) post as the human; the end of a pipe
  // does not stop the group — Ctrl-C or --duration-ms does.
  if (server && !stopping && !values["no-stdin"]) {
    if (opts.stdin || process.stdin.isTTY) io.out(`type a line to post it into [${sayGroup}] as ${human}; Ctrl-C to stop`);
    rl = createInterface({ input });
    rl.on("line", (line) => {
      const t = line.trim();
      if (t) post(t);
    });
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (durationMs !== undefined && !stopping) timer = setTimeout(() => void shutdown(`--duration-ms ${durationMs}`), durationMs);
  await stopped;
  if (timer) clearTimeout(timer);
  rl?.close();
  detach();
  io.out("stopped");
  return 0;
}
