// `start`: the embedded default. A local network (access point, message service, group service
// `group.<domain>`) plus every configured identity in one process, each signed in with its own
// key over real sockets, printing the conversation and each dispatch decision as it happens.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { listGroupsForIdentity, loadConfigFile } from "../config/load.ts";
import { intOption, parse, UsageError } from "./args.ts";
import { requireGroup } from "./checks.ts";
import { createCliBackend, createTranscript, decisionLine } from "./live.ts";
import { createJsonLogger, errorFields } from "../log.ts";
import type { DispatchDecision } from "../monitor/monitor.ts";
import { DEFAULT_LOCAL_DOMAIN, rehome, rehomeConfig, startDevNetwork, type DevNetwork } from "../runtime/dev-network.ts";
import type { NetworkAgent } from "../network/index.ts";
import { startIdentity, type RunningIdentity } from "../runtime/identity.ts";
import type { GroupDefinition } from "../server/group-service.ts";
import { createGroupConnection, type GroupConnection } from "../transport/connection.ts";
import { createFileStateStore, defaultStateDir } from "../state/file-store.ts";
import type { ChannelConfig, LogLevel } from "../types.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

import { DEFAULT_CONFIG } from "../paths.ts";

export { DEFAULT_CONFIG };

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

  const store = createFileStateStore({ dir: stateDir, logger });
  const { backend, save: saveConversations } = createCliBackend({ config, logger, store, out: io.out, showPrompts: values["show-prompts"] === true });

  const aidToName = new Map(identityIds.map((id) => [config.identities[id]!.aid, id]));
  const printMessage = createTranscript(io.out, (sender) => (aidToName.has(sender) ? `${sender} (agent)` : sender));
  dev.service.onStored(printMessage);
  const printDecision = (d: DispatchDecision) => io.out(decisionLine(d));

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
