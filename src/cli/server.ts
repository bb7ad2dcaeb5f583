// `acp-group server`: the local network alone (access point, message service, group service
// `group.<domain>`), with the groups and members of a config re-homed onto the domain. Prints
// `access point: <url>`, `ca: <path>` (with --tls) and `join <group>: <link>`, one per line, then
// serves until Ctrl-C (or --duration-ms).
import { loadConfigFile, listGroupsForIdentity } from "../config/load.ts";
import { intOption, logLevelOption, parse, type Io } from "./args.ts";
import { rehomeConfig, startDevNetwork } from "../runtime/dev-network.ts";
import { createJsonLogger } from "../log.ts";
import type { GroupDefinition } from "../server/group-service.ts";
import { defaultStateDir } from "../state/file-store.ts";
import { NETWORK_OPTIONS, networkOptions } from "./network-options.ts";
import { DEFAULT_CONFIG } from "../paths.ts";
import { DEFAULT_SOCKET_LIMITS, type SocketLimits } from "../server/network/index.ts";

export async function serverCommand(args: string[], io: Io, opts: { signal?: AbortSignal } = {}): Promise<number> {
  const { values } = parse(args, {
    config: { type: "string" },
    "state-dir": { type: "string" },
    "duration-ms": { type: "string" },
    "log-level": { type: "string" },
    "strict-invite-ms": { type: "string" },
    "people-from-chat": { type: "boolean" },
    "no-presence": { type: "boolean" },
    "max-agents-per-source": { type: "string" },
    ...NETWORK_OPTIONS,
  });
  const network = networkOptions(values);
  const logLevel = logLevelOption(values["log-level"]);
  const durationMs = intOption(values["duration-ms"], "duration-ms", 1);
  const strictInviteDelayMs = intOption(values["strict-invite-ms"], "strict-invite-ms", 0);
  const socketLimits = agentsPerSourceLimits(intOption(values["max-agents-per-source"], "max-agents-per-source", 1));
  const loaded = loadConfigFile(values.config ?? DEFAULT_CONFIG);
  const stateDir = values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const config = rehomeConfig(loaded, network.domain);
  const groups: Record<string, GroupDefinition> = {};
  for (const identity of Object.values(config.identities)) {
    if (!identity.enabled) continue;
    for (const g of listGroupsForIdentity(config, identity)) {
      groups[g] ??= { name: config.groups[g]?.subject ?? g, members: {} };
      groups[g].members[identity.aid] = {};
    }
  }
  for (const g of Object.keys(config.groups)) if (g !== "*") groups[g] ??= { name: config.groups[g]?.subject ?? g, members: {} };
  for (const group of Object.values(groups)) for (const h of config.humans) group.members[h] = { human: true };
  const logger = createJsonLogger({ level: logLevel, write: (line) => io.err(line) });
  // The config's people (humans, owners) are reserved and certified here, keys in
  // <state>/local-network/identities/; its agents register themselves (`id create`), first key wins.
  const people = [...new Set([...config.humans, ...Object.values(config.identities).flatMap((i) => i.owner ?? [])])];
  const dev = await startDevNetwork({ ...network, stateDir, groups, logger, reserve: people, ...(strictInviteDelayMs !== undefined ? { strictInviteDelayMs } : {}), ...(values["people-from-chat"] ? { peopleFromChat: true } : {}), presence: values["no-presence"] !== true, ...(socketLimits ? { socketLimits } : {}) });
  for (const aid of people) {
    // Reserved either way; a name the access point cannot certify (not `<name>.<domain>`) is only logged.
    await dev.identity(aid).catch((err: unknown) => logger.log("warn", "server.member-not-certified", { aid, error: err instanceof Error ? err.message : String(err) }));
  }
  for (const line of dev.lines) io.out(line);
  io.out(`sdk domain: ${dev.net.sdkDomain} · state: ${stateDir} · Ctrl-C to stop`);

  await new Promise<void>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      if (timer) clearTimeout(timer);
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      opts.signal?.removeEventListener("abort", done);
      resolve();
    };
    if (durationMs !== undefined) timer = setTimeout(done, durationMs);
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
    opts.signal?.addEventListener("abort", done, { once: true });
    if (opts.signal?.aborted) done();
  });
  await dev.close();
  io.out("stopped");
  return 0;
}

/**
 * `--max-agents-per-source N`: room for N agents run from one machine (one address), such as one
 * `acp-group run` with N identities — their sockets, a sign-in storm of all of them after a
 * restart, and registering them. Never below the defaults.
 */
export function agentsPerSourceLimits(n: number | undefined): Partial<SocketLimits> | undefined {
  if (n === undefined) return undefined;
  const d = DEFAULT_SOCKET_LIMITS;
  // Each agent holds one socket and may have an HTTP request in flight; a restart signs each in twice.
  return {
    maxConnections: Math.max(d.maxConnections, n + 256),
    maxConnectionsPerSource: Math.max(d.maxConnectionsPerSource, 2 * n + 64),
    signInsPerSourcePer10s: Math.max(d.signInsPerSourcePer10s, 4 * n),
    newAidsPerSource: Math.max(d.newAidsPerSource, n + 20),
  };
}
