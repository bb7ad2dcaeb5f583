// `start`: the embedded default. A local network (access point, message service, group service
// `group.<domain>`) plus every configured identity in one process, each signed in with its own
// key over real sockets, printing the conversation and each dispatch decision as it happens.
// Read top to bottom: options → groups → local network → identities → the human → input.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listGroupsForIdentity, loadConfigFile } from "../config/load.ts";
import { intOption, logLevelOption, parse, UsageError, type Io } from "./args.ts";
import { requireGroup } from "./checks.ts";
import { createCliBackend, createTranscript, decisionLine, directLine } from "./live.ts";
import { outputWidth } from "./transcript.ts";
import { createSerialPoster, openLiveSession } from "./live-session.ts";
import { NETWORK_OPTIONS, networkOptions } from "./network-options.ts";
import { createJsonLogger, errorFields } from "../log.ts";
import { rehome, rehomeConfig, startDevNetwork, type DevNetwork } from "../runtime/dev-network.ts";
import type { NetworkAgent } from "../network/index.ts";
import type { GroupDefinition } from "../server/group-service.ts";
import { createGroupConnection, type GroupConnection } from "../transport/connection.ts";
import { createFileStateStore, defaultStateDir } from "../state/file-store.ts";
import type { ChannelConfig, Logger } from "../types.ts";
import { DEFAULT_CONFIG } from "../paths.ts";

/** Every option of `start` (the CLI's help must list each one; a test checks). */
export const START_OPTIONS = {
  config: { type: "string" },
  say: { type: "string", multiple: true },
  dm: { type: "string", multiple: true },
  as: { type: "string" },
  group: { type: "string" },
  "no-stdin": { type: "boolean" },
  "duration-ms": { type: "string" },
  "log-level": { type: "string" },
  "state-dir": { type: "string" },
  fresh: { type: "boolean" },
  "show-prompts": { type: "boolean" },
  ...NETWORK_OPTIONS,
} as const;

export async function startCommand(args: string[], io: Io, opts: { signal?: AbortSignal; stdin?: NodeJS.ReadableStream } = {}): Promise<number> {
  // `start --help` is answered by the CLI's command table before this runs.
  const o = readStartOptions(args, io);
  const plan = planGroups(o);
  const { dev, identities } = await openLocalNetwork(o, plan, io);
  const { config, logger } = o;
  const store = createFileStateStore({ dir: o.stateDir, logger });
  const { backend, save: saveConversations } = createCliBackend({ config, logger, store, out: io.out, showPrompts: o.showPrompts });
  const agents = new Map(o.identityIds.map((id) => [config.identities[id]!.aid, id]));
  dev.service.onStored(createTranscript(io.out, (sender) => (agents.has(sender) ? "agent" : undefined), outputWidth));

  let humanAgent: NetworkAgent | undefined;
  let humanConnection: GroupConnection | undefined;
  const session = openLiveSession({
    io,
    signal: opts.signal,
    afterStop: async () => {
      saveConversations();
      await backend.close?.().catch((err: unknown) => logger.log("warn", "start.backend-close-failed", errorFields(err)));
      await humanConnection?.close();
      await humanAgent?.close();
      await dev.close();
    },
    onStopFailed: (err) => logger.log("error", "start.shutdown-failed", errorFields(err)),
  });

  try {
    await session.startIdentities(o.identityIds, (id) => ({
      config,
      backend,
      logger,
      store,
      onDecision: (d) => io.out(decisionLine(d)),
      direct: { onEvent: (e) => io.out(directLine(id, config.identities[id]!.aid, e, outputWidth())) },
      connect: ({ logger: l }) => dev.connect(identities.get(config.identities[id]!.aid)!, l),
      // agent.md of the local network's identities lives on the local server.
      profileFetch: dev.profileFetch,
    }));
    if (session.stopping) throw new StartAborted();
    humanAgent = dev.connect(identities.get(o.human)!, logger);
    // Agents for direct messages only: the human has no group to post in, only `/dm`.
    humanConnection = plan.sayGroup === undefined ? undefined : connectHuman({ dev, agent: humanAgent, aid: o.human, groupId: plan.sayGroup, logger });
    // Stopping while connecting ends the wait too (ready rejects once its identity closes).
    await Promise.race([Promise.all([...session.running.map((r) => r.ready), humanAgent.ready, humanConnection?.start()]), session.stopped]);
  } catch (err) {
    if (!(err instanceof StartAborted)) {
      // A refused identity: close what already runs (and the local network) first.
      await session.stop("start failed");
      session.release();
      o.removeFresh();
      throw err;
    }
  }
  if (!session.stopping) io.out(`agents online: ${session.running.map((r) => `${r.identityId} (${r.aid})`).join(", ")}`);

  // A line `/dm NAME TEXT` is the human's direct message to that agent; any other goes to the group.
  const post = createSerialPoster({
    io,
    as: o.human,
    open: () => !session.stopping && humanAgent !== undefined,
    send: async (content) => {
      const dm = directLineOf(content, config, o.network.domain);
      if (dm) return humanAgent!.sendDirect({ peer: dm.to, text: dm.text });
      if (plan.sayGroup === undefined) throw new UsageError("no group to post in (the agents take direct messages only): type `/dm NAME TEXT`");
      return humanConnection!.sendMessage({ groupId: plan.sayGroup, content });
    },
    onFailed: (err) => logger.log("warn", "start.post-failed", { group: plan.sayGroup, ...errorFields(err) }),
  });
  for (const text of o.say) post(text);
  for (const text of o.dm) post(`/dm ${text}`);
  // Typed or piped lines (`echo "Alice, hi" | npm start`) post as the human; the end of a pipe
  // does not stop the group — Ctrl-C or --duration-ms does.
  if (!session.stopping && !o.noStdin) session.readLines({ input: opts.stdin, groupId: plan.sayGroup, as: o.human, post });
  session.stopAfter(o.durationMs);
  await session.stopped;
  session.release();
  o.removeFresh();
  io.out("stopped");
  return 0;
}

/** `/dm NAME TEXT` → the agent NAME (an identity id, or a name on the local domain) and the text; undefined for any other line. */
function directLineOf(line: string, config: ChannelConfig, domain: string): { to: string; text: string } | undefined {
  const m = /^\/dm\s+(\S+)\s+([\s\S]+)$/.exec(line.trim());
  if (!m) {
    if (/^\/dm\b/.test(line.trim())) throw new UsageError("expected `/dm NAME TEXT` (NAME an agent of the config, such as alice)");
    return undefined;
  }
  const name = m[1]!;
  return { to: config.identities[name]?.aid ?? rehome(name, domain), text: m[2]!.trim() };
}

/** Stopped before every member was connected: nothing more to start. */
class StartAborted extends Error {}

interface StartOptions {
  config: ChannelConfig;
  configFile: string;
  network: ReturnType<typeof networkOptions>;
  stateDir: string;
  /** Removes the --fresh state dir (a no-op without --fresh). */
  removeFresh: () => void;
  identityIds: string[];
  /** The human member's aid on the local domain. */
  human: string;
  say: string[];
  /** `NAME TEXT` direct messages from the human at start. */
  dm: string[];
  group: string | undefined;
  noStdin: boolean;
  durationMs: number | undefined;
  showPrompts: boolean;
  logger: Logger;
}

/** The options, checked in the order a user fixes them, and the config re-homed onto the local domain. */
function readStartOptions(args: string[], io: Io): StartOptions {
  const { values } = parse(args, START_OPTIONS);
  const network = networkOptions(values);
  const logLevel = logLevelOption(values["log-level"]);
  const durationMs = intOption(values["duration-ms"], "duration-ms", 1);
  const configFile = values.config ?? DEFAULT_CONFIG;
  const loaded = loadConfigFile(configFile);
  if (values.fresh && values["state-dir"] !== undefined) throw new UsageError("`--fresh` uses a new state directory: leave out `--state-dir`");
  // --fresh: a throwaway state dir (created on first write, removed at exit), so a second run
  // starts as the first did.
  const freshDir = values.fresh ? join(tmpdir(), `acp-group-fresh-${randomUUID().slice(0, 8)}`) : undefined;
  const removeFresh = (): void => {
    if (!freshDir) return;
    process.off("exit", removeFresh);
    rmSync(freshDir, { recursive: true, force: true });
  };
  // Every exit removes it, not only a clean stop: a closed output pipe (`start --fresh | head -1`)
  // exits at once from its EPIPE, and an uncaught error exits too.
  if (freshDir) process.once("exit", removeFresh);
  const stateDir = freshDir ?? values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const config: ChannelConfig = { ...rehomeConfig(loaded, network.domain), stateDir };
  const identityIds = Object.entries(config.identities).filter(([, i]) => i.enabled).map(([id]) => id);
  if (identityIds.length === 0) throw new UsageError(`${configFile}: no enabled identity under \`identities\``);
  return {
    config,
    configFile,
    network,
    stateDir,
    removeFresh,
    identityIds,
    human: rehome(values.as ?? config.humans[0] ?? "human", network.domain),
    say: values.say ?? [],
    dm: (values.dm ?? []).map((d) => {
      if (!/^\S+\s+\S/.test(d.trim())) throw new UsageError(`expected \`--dm 'NAME TEXT'\` (an agent's name, a space, the message), got \`${d}\``);
      return d.trim();
    }),
    group: values.group,
    noStdin: values["no-stdin"] === true,
    durationMs,
    showPrompts: values["show-prompts"] === true,
    logger: createJsonLogger({ level: logLevel, write: (line) => io.err(line) }),
  };
}

interface GroupPlan {
  groupIds: string[];
  /** Each group with its members: the identities configured in it, the humans and the human of --as. */
  groups: Record<string, GroupDefinition>;
  /** Where --say and typed lines go; none when every agent takes direct messages only. */
  sayGroup: string | undefined;
}

/** The groups of the enabled identities and who is a member of each. */
function planGroups(o: StartOptions): GroupPlan {
  const { config } = o;
  const groupMembers = new Map<string, Set<string>>();
  for (const id of o.identityIds) {
    for (const g of listGroupsForIdentity(config, config.identities[id]!)) {
      let set = groupMembers.get(g);
      if (!set) groupMembers.set(g, (set = new Set()));
      set.add(id);
    }
  }
  const groupIds = [...groupMembers.keys()].sort();
  // No group at all: agents for direct messages only (`/dm`, `--dm`); --say and --group have nowhere to go.
  if (groupIds.length === 0 && o.say.length > 0) throw new UsageError(`\`--say\` posts into a group and ${o.configFile} configures none: use \`--dm 'NAME TEXT'\``);
  const sayGroup = o.group ?? groupIds[0];
  if (sayGroup !== undefined) requireGroup(sayGroup, groupIds, o.configFile);
  const groups: Record<string, GroupDefinition> = {};
  for (const [g, ids] of groupMembers) {
    const members: GroupDefinition["members"] = {};
    for (const id of ids) members[config.identities[id]!.aid] = {};
    for (const h of new Set([...config.humans, o.human])) members[h] = { human: true };
    groups[g] = { name: config.groups[g]?.subject ?? g, members };
  }
  return { groupIds, groups, sayGroup };
}

/** The local network with the planned groups, and a certified identity for every member (the human too: nobody posts unsigned). */
async function openLocalNetwork(o: StartOptions, plan: GroupPlan, io: Io): Promise<{ dev: DevNetwork; identities: Map<string, Awaited<ReturnType<DevNetwork["identity"]>>> }> {
  const { config } = o;
  // Every configured member is reserved: only this process certifies them (the owner above all).
  const reserve = [...Object.values(plan.groups).flatMap((g) => Object.keys(g.members)), ...o.identityIds.flatMap((id) => config.identities[id]!.owner ?? [])];
  const dev = await startDevNetwork({ ...o.network, stateDir: o.stateDir, groups: plan.groups, logger: o.logger, reserve });
  for (const line of dev.lines) io.out(line);
  io.out(`local network ${o.network.domain} · groups: ${plan.groupIds.join(", ") || "none (direct messages only)"} · state: ${o.stateDir}`);
  try {
    const aids = [...o.identityIds.map((id) => config.identities[id]!.aid), o.human];
    return { dev, identities: new Map(await Promise.all(aids.map(async (aid) => [aid, await dev.identity(aid)] as const))) };
  } catch (err) {
    await dev.close();
    o.removeFresh();
    throw err;
  }
}

/** The human's connection to the group service: it only posts (the printed transcript is what the human reads). */
function connectHuman(p: { dev: DevNetwork; agent: NetworkAgent; aid: string; groupId: string; logger: Logger }): GroupConnection {
  const latest = Number(p.dev.service.history(p.groupId).at(-1)?.msgId ?? 0);
  return createGroupConnection({
    channel: p.agent.channel(p.dev.service.aid),
    aid: p.aid,
    groups: [p.groupId],
    getCursor: () => latest,
    onMessages: () => {},
    logger: p.logger,
  });
}
