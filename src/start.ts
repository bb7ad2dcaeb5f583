// `start`: the embedded default. A local network (access point, message service, group service
// `group.<domain>`) plus every configured identity in one process, each signed in with its own
// key over real sockets, printing the conversation and each dispatch decision as it happens.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { listGroupsForIdentity, loadConfigFile } from "./config/load.ts";
import { intOption, parse, UsageError } from "./cli-args.ts";
import { requireGroup } from "./cli-checks.ts";
import { createScriptedBackend, offlineReplyText } from "./host/deterministic.ts";
import { createConversationRegistry } from "./host/conversation-store.ts";
import { createOpenAIBackend, resolveLlmSettings } from "./host/standalone.ts";
import { createJsonLogger, errorFields } from "./log.ts";
import type { DispatchDecision } from "./monitor/monitor.ts";
import { DEFAULT_LOCAL_DOMAIN, rehome, rehomeConfig, startDevNetwork, type DevNetwork } from "./dev-network.ts";
import type { NetworkAgent } from "./network/index.ts";
import { startIdentity, type RunningIdentity } from "./runtime.ts";
import type { GroupDefinition } from "./server/group-service.ts";
import { createGroupConnection, type GroupConnection } from "./transport/connection.ts";
import { displaySafe } from "./monitor/outbound.ts";
import { createFileStateStore, defaultStateDir } from "./state/file-store.ts";
import type { AgentBackend, ChannelConfig, GenerateRequest, GroupMessage, LogLevel } from "./types.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

import { DEFAULT_CONFIG } from "./paths.ts";

export { DEFAULT_CONFIG };

const OFFLINE_PREFIX = "[offline responder]";

/** Every option of `start` (the CLI's help must list each one; a test checks). */
export const START_OPTIONS = {
  config: { type: "string" },
  say: { type: "string", multiple: true },
  as: { type: "string" },
  group: { type: "string" },
  "no-stdin": { type: "boolean" },
  "duration-ms": { type: "string" },
  "log-level": { type: "string" },
  "state-dir": { type: "string" },
  fresh: { type: "boolean" },
  "show-prompts": { type: "boolean" },
  domain: { type: "string" },
  port: { type: "string" },
  tls: { type: "boolean" },
} as const;

export async function startCommand(args: string[], io: Io, opts: { signal?: AbortSignal; stdin?: NodeJS.ReadableStream } = {}): Promise<number> {
  // `start --help` is answered by the CLI's command table before this runs.
  const { values } = parse(args, START_OPTIONS);
  const network = networkOptions(values);
  const logLevel = (values["log-level"] ?? "warn") as LogLevel;
  if (!["debug", "info", "warn", "error"].includes(logLevel)) throw new UsageError(`expected \`--log-level\` to be debug, info, warn or error, got \`${logLevel}\``);
  const durationMs = intOption(values["duration-ms"], "duration-ms", 1);
  const configFile = values.config ?? DEFAULT_CONFIG;
  const loaded = loadConfigFile(configFile);
  if (values.fresh && values["state-dir"] !== undefined) throw new UsageError("`--fresh` uses a new state directory: leave out `--state-dir`");
  // --fresh: a throwaway state dir (created on first write, removed at exit), so a second run
  // starts as the first did.
  const freshDir = values.fresh ? join(tmpdir(), `acp-group-fresh-${randomUUID().slice(0, 8)}`) : undefined;
  const removeFresh = () => freshDir && rmSync(freshDir, { recursive: true, force: true });
  const stateDir = freshDir ?? values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const config: ChannelConfig = { ...rehomeConfig(loaded, network.domain), stateDir };
  const identityIds = Object.entries(config.identities).filter(([, i]) => i.enabled).map(([id]) => id);
  if (identityIds.length === 0) throw new UsageError(`${configFile}: no enabled identity under \`identities\``);
  const logger = createJsonLogger({ level: logLevel, write: (line) => io.err(line) });
  const human = rehome(values.as ?? config.humans[0] ?? "human", network.domain);

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
  requireGroup(sayGroup, groupIds, configFile);

  const groups: Record<string, GroupDefinition> = {};
  for (const [g, ids] of groupMembers) {
    const members: GroupDefinition["members"] = {};
    for (const id of ids) members[config.identities[id]!.aid] = {};
    for (const h of new Set([...config.humans, human])) members[h] = { human: true };
    groups[g] = { name: config.groups[g]?.subject ?? g, members };
  }
  // Every configured member is reserved: only this process certifies them (the owner above all).
  const reserve = [...Object.values(groups).flatMap((g) => Object.keys(g.members)), ...identityIds.flatMap((id) => config.identities[id]!.owner ?? [])];
  const dev: DevNetwork = await startDevNetwork({ ...network, stateDir, groups, logger, reserve });
  for (const line of dev.lines) io.out(line);
  io.out(`local network ${network.domain} · groups: ${groupIds.join(", ")} · state: ${stateDir}`);
  // Every member, the human included, signs in with a key the local CA issued: nobody posts unsigned.
  let identities: Map<string, Awaited<ReturnType<DevNetwork["identity"]>>>;
  try {
    identities = new Map(await Promise.all([...identityIds.map((id) => config.identities[id]!.aid), human].map(async (aid) => [aid, await dev.identity(aid)] as const)));
  } catch (err) {
    await dev.close();
    removeFresh();
    throw err;
  }

  const llm = resolveLlmSettings(config.llm, process.env);
  const store = createFileStateStore({ dir: stateDir, logger });
  let backend: AgentBackend;
  let saveConversations = () => {};
  if (llm.configured) {
    const conversations = createConversationRegistry({ historyTokenLimit: llm.historyTokenLimit, persistence: store, logger });
    backend = createOpenAIBackend({
      llm: config.llm,
      logger,
      conversations,
      ...(values["show-prompts"] ? { onRequest: (body: unknown, r: GenerateRequest) => printRequest(r, JSON.stringify(body, null, 2)) } : {}),
    });
    saveConversations = () => conversations.saveAll();
    io.out(`model: ${llm.model} at ${llm.baseUrl ?? "the OpenAI API"}`);
  } else {
    backend = createScriptedBackend({
      // Mentions and open questions: a question to the room shows the agents settling who answers.
      mode: "helpful",
      replyText: (req) => offlineReplyText(req, OFFLINE_PREFIX),
    });
    io.out(`no model configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY): using the ${OFFLINE_PREFIX}, which answers mentions and questions`);
    if (values["show-prompts"]) backend = showingPrompts(backend, (r) => printRequest(r, `[system]\n${r.systemPrompt}\n[user]\n${r.body}`));
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
  dev.service.onStored(printMessage);

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
        await backend.close?.().catch((err: unknown) => logger.log("warn", "start.backend-close-failed", errorFields(err)));
        await humanConnection?.close();
        await humanAgent?.close();
        await dev.close();
      } catch (err) {
        logger.log("error", "start.shutdown-failed", errorFields(err));
      } finally {
        // Resolved here, not from an abort listener: `stopping` is not assigned yet while
        // stop.abort() runs its listeners synchronously.
        markStopped();
      }
    })();
    return stopping;
  };
  let humanAgent: NetworkAgent | undefined;
  let humanConnection: GroupConnection | undefined;
  // Installed before connecting, so Ctrl-C while connecting still saves state.
  const onSigint = () => void shutdown("Ctrl-C");
  const onSigterm = () => void shutdown("SIGTERM");
  const onAbortSignal = () => void shutdown("aborted");
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigterm);
  opts.signal?.addEventListener("abort", onAbortSignal, { once: true });
  const detach = () => {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
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
          connect: ({ logger: l }) => dev.connect(identities.get(config.identities[id]!.aid)!, l),
          // agent.md of the local network's identities lives on the local server.
          profileFetch: dev.profileFetch,
        }),
      );
    }
    if (stopping) throw new StartAborted();
    humanAgent = dev.connect(identities.get(human)!, logger);
    const history = dev.service.history(sayGroup);
    const latest = Number(history.at(-1)?.msgId ?? 0);
    humanConnection = createGroupConnection({
      channel: humanAgent.channel(dev.service.aid),
      aid: human,
      groups: [sayGroup],
      // The human reads the printed transcript; its connection only posts.
      getCursor: () => latest,
      onMessages: () => {},
      logger,
    });
    // Stopping while connecting ends the wait too (ready rejects once its identity closes).
    await Promise.race([Promise.all([...running.map((r) => r.ready), humanConnection.start()]), stopped]);
  } catch (err) {
    if (!(err instanceof StartAborted)) {
      // A refused identity: close what already runs (and the local network) first.
      await shutdown("start failed");
      detach();
      removeFresh();
      throw err;
    }
  }
  if (!stopping) io.out(`agents online: ${running.map((r) => `${r.identityId} (${r.aid})`).join(", ")}`);

  // Posted one after another, in order; a failed post is reported, never retried twice.
  let posting: Promise<unknown> = Promise.resolve();
  const post = (content: string) => {
    if (stopping || !humanConnection) return;
    const connection = humanConnection;
    posting = posting.then(() =>
      connection.sendMessage({ groupId: sayGroup, content }).catch((err: unknown) => {
        io.err(`could not post as ${human}: ${err instanceof Error ? err.message : String(err)}`);
        logger.log("warn", "start.post-failed", { group: sayGroup, ...errorFields(err) });
      }),
    );
  };
  for (const text of values.say ?? []) post(text);

  let rl: ReturnType<typeof createInterface> | undefined;
  const input = opts.stdin ?? process.stdin;
  // Typed or piped lines (`echo "Alice, hi" | npm start`) post as the human; the end of a pipe
  // does not stop the group — Ctrl-C or --duration-ms does.
  if (!stopping && !values["no-stdin"]) {
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
  removeFresh();
  io.out("stopped");
  return 0;

  function printRequest(r: Pick<GenerateRequest, "identityId" | "groupId" | "dispatchId">, text: string): void {
    io.out(`    ⇢ ${r.identityId} [${r.groupId}] dispatch #${r.dispatchId} request as sent:\n${text.replace(/^/gm, "      ")}`);
  }
}

/** The offline responder, printing each request it gets (`--show-prompts`). */
function showingPrompts(backend: AgentBackend, show: (r: GenerateRequest) => void): AgentBackend {
  return {
    ...backend,
    generate: (r) => {
      show(r);
      return backend.generate(r);
    },
  };
}

/** Stopped before every member was connected: nothing more to start. */
class StartAborted extends Error {}

/** `--domain/--port/--tls`, shared by `start` and `server`. */
export const NETWORK_OPTIONS = {
  domain: { type: "string" },
  port: { type: "string" },
  tls: { type: "boolean" },
} as const;

export function networkOptions(values: { domain?: string | undefined; port?: string | undefined; tls?: boolean | undefined }): { domain: string; port?: number; tls: boolean } {
  const domain = values.domain ?? DEFAULT_LOCAL_DOMAIN;
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(domain)) throw new UsageError(`expected \`--domain\` to be a domain such as ${DEFAULT_LOCAL_DOMAIN}, got \`${domain}\``);
  const port = intOption(values.port, "port", 0);
  if (port !== undefined && port > 65535) throw new UsageError(`expected \`--port\` to be at most 65535, got \`${port}\``);
  return { domain, ...(port !== undefined ? { port } : {}), tls: values.tls === true };
}
