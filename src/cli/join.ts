// `acp-group join <link> --identity <id>`: joins a group by its link. With an invite code
// (`https://group.<ap>/<group>?code=<invite>`) it sends `use_invite_code`; without one it sends
// `request_join` (the group's owner decides). The identity signs in as the runtime does.
import { existsSync } from "node:fs";
import { loadConfigFile, parseChannelConfig } from "../config/load.ts";
import { addJoinToConfig, readIdentityAccess } from "./join-config.ts";
import { identityPaths } from "../network/identity-store.ts";
import { intOption, parse, UsageError } from "./args.ts";
import { createJsonLogger } from "../log.ts";
import { connectConfiguredIdentity } from "../runtime/link.ts";
import { defaultStateDir } from "../state/file-store.ts";
import { createGroupConnection } from "../transport/connection.ts";
import { TransportError } from "../transport/errors.ts";
import type { ChannelConfig, Logger, LogLevel } from "../types.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

export interface JoinLink {
  /** `group.<ap>`: the group service agent to open a session with. */
  service: string;
  accessPoint: string;
  groupId: string;
  code: string | undefined;
}

/** Parses `https://group.<ap>/<group>?code=<invite>`; throws UsageError naming what is wrong. */
export function parseJoinLink(link: string): JoinLink {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new UsageError(`expected a link such as https://group.agentcp.io/<group>?code=<invite>, got \`${link}\``);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError(`expected an https:// link, got \`${link}\``);
  const host = url.hostname.toLowerCase();
  if (!/^group\.[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(host)) throw new UsageError(`expected the link's host to be group.<access point>, got \`${host}\``);
  const groupId = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, ""));
  if (groupId === "" || groupId.includes("/")) throw new UsageError(`expected the link's path to be the group id, got \`${url.pathname}\``);
  const code = url.searchParams.get("code") ?? undefined;
  return { service: host, accessPoint: host.slice("group.".length), groupId, code: code === "" ? undefined : code };
}

/** The config a join or chat signs in with: the config's identity (by key or aid), else the aid as `id create` left it in the state dir. */
export function identityForLink(p: { config: ChannelConfig; identity: string; stateDir: string; caFile?: string | undefined; accessPointUrl?: string | undefined }): {
  config: ChannelConfig;
  identityId: string;
  aid: string;
  accessPointUrl?: string;
} {
  const { config } = p;
  const byKey = config.identities[p.identity];
  const byAid = Object.entries(config.identities).find(([, i]) => i.aid.toLowerCase() === p.identity.toLowerCase());
  const found = byKey ? ([p.identity, byKey] as const) : byAid;
  const caFile = p.caFile ?? config.network.caFile;
  if (found) {
    const network = caFile ? { ...config.network, caFile } : config.network;
    return { config: { ...config, network, stateDir: p.stateDir }, identityId: found[0], aid: found[1].aid, ...(found[1].accessPointUrl ? { accessPointUrl: found[1].accessPointUrl } : {}) };
  }
  if (!p.identity.includes(".")) {
    throw new UsageError(`no identity \`${p.identity}\` in the config (have: ${Object.keys(config.identities).join(", ") || "none"}); give an aid such as ${p.identity}.agentcp.io`);
  }
  const aid = p.identity;
  if (!existsSync(identityPaths({ aid, stateDir: p.stateDir }).cert)) {
    throw new UsageError(`no identity ${aid} in ${p.stateDir}/identities (create it with \`acp-group id create ${aid}\`, or pass --state-dir)`);
  }
  const access = readIdentityAccess(p.stateDir, aid);
  const accessPointUrl = p.accessPointUrl ?? access?.accessPointUrl;
  const ca = caFile ?? access?.caFile;
  const identity = parseChannelConfig({ identities: { id: { aid, ...(accessPointUrl ? { accessPointUrl } : {}) } } }).identities.id!;
  return {
    config: { ...config, stateDir: p.stateDir, network: ca ? { ...config.network, caFile: ca } : config.network, identities: { ...config.identities, [aid]: identity } },
    identityId: aid,
    aid,
    ...(accessPointUrl ? { accessPointUrl } : {}),
  };
}

export async function joinCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    identity: { type: "string" },
    config: { type: "string" },
    message: { type: "string" },
    "state-dir": { type: "string" },
    "ca-file": { type: "string" },
    "ap-url": { type: "string" },
    "timeout-ms": { type: "string" },
    "log-level": { type: "string" },
  }, true);
  const [link, ...extra] = positionals;
  if (!link || extra.length > 0) throw new UsageError("expected exactly one link");
  if (!values.identity) throw new UsageError("expected `--identity AID` (an aid from `acp-group id create`, or an identity of the config)");
  if (!values.config) throw new UsageError("expected `--config FILE` (created when missing, else added to)");
  const target = parseJoinLink(link);
  const timeoutMs = intOption(values["timeout-ms"], "timeout-ms", 1) ?? 30_000;
  const loaded = existsSync(values.config) ? loadConfigFile(values.config) : parseChannelConfig({});
  const stateDir = values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const who = identityForLink({ config: loaded, identity: values.identity, stateDir, caFile: values["ca-file"], accessPointUrl: values["ap-url"] });
  const logger = createJsonLogger({ level: (values["log-level"] ?? "warn") as LogLevel, write: (line) => io.err(line) });
  const status = await joinByLink({ config: who.config, identityId: who.identityId, target, message: values.message, timeoutMs, logger });
  io.out(`${who.aid} → ${target.groupId} on ${target.service}: ${status}`);
  if (status === "pending") {
    io.out(`the group's owner decides; run \`acp-group join\` again once accepted to add ${target.groupId} to ${values.config}`);
    return 0;
  }
  if (status !== "joined" && status !== "member") return 1;
  const written = addJoinToConfig(values.config, {
    ...(who.identityId !== who.aid || loaded.identities[who.identityId] ? { identityId: who.identityId } : {}),
    aid: who.aid,
    groupId: target.groupId,
    groupAccessPoint: target.accessPoint,
    ...(who.accessPointUrl ? { accessPointUrl: who.accessPointUrl } : {}),
    ...(who.config.network.caFile ? { caFile: who.config.network.caFile } : {}),
    stateDir,
  });
  if (written.added.length === 0) io.out(`${values.config} already has ${target.groupId} for ${written.identityId}; start it with: acp-group run --config ${values.config}`);
  else io.out(`${written.created ? "created" : "updated"} ${values.config}: ${written.added.join(", ")}; start it with: acp-group run --config ${values.config}`);
  return 0;
}

/** Signs in, opens the session with the link's group service and joins (invite code) or asks to (request_join). Returns the status. */
export async function joinByLink(p: { config: ChannelConfig; identityId: string; target: JoinLink; message?: string | undefined; timeoutMs: number; logger: Logger }): Promise<string> {
  const { config, target, logger } = p;
  const identity = config.identities[p.identityId]!;
  const agent = connectConfiguredIdentity({ config, identityId: p.identityId, logger });
  // No groups to feed: this connection only registers and asks.
  const connection = createGroupConnection({ channel: agent.channel(target.service), aid: identity.aid, groups: [], getCursor: () => 0, onMessages: () => {}, logger });
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no session with ${target.service} within ${p.timeoutMs} ms`)), p.timeoutMs);
    });
    try {
      // A refused identity fails at once; otherwise wait for the session to come up.
      await Promise.race([agent.ready.then(() => connection.start()), timeout]);
    } finally {
      clearTimeout(timer);
    }
    const action = target.code ? "use_invite_code" : "request_join";
    const params = target.code ? { code: target.code } : p.message ? { message: p.message } : {};
    let data: unknown;
    try {
      data = await connection.request(action, { groupId: target.groupId, params });
    } catch (err) {
      if (err instanceof TransportError && err.context.resultCode === 1005) data = { status: "member" };
      else throw err;
    }
    return data && typeof data === "object" && typeof (data as { status?: unknown }).status === "string" ? (data as { status: string }).status : "joined";
  } finally {
    await connection.close();
    await agent.close();
  }
}

/**
 * Joins the group of `link` with a configured identity (the OpenClaw setup flow's entry): the
 * status `joinByLink` returns — `joined`, `member`, `pending` or what the group service said — and
 * the parsed link. Throws when sign-in or the request fails.
 */
export async function joinGroupByLink(p: { config: ChannelConfig; identityId: string; link: string; logger: Logger; timeoutMs?: number; message?: string }): Promise<{ status: string; target: JoinLink }> {
  const target = parseJoinLink(p.link);
  if (!p.config.identities[p.identityId]) throw new UsageError(`no identity \`${p.identityId}\` in the config`);
  const status = await joinByLink({ config: p.config, identityId: p.identityId, target, message: p.message, timeoutMs: p.timeoutMs ?? 30_000, logger: p.logger });
  return { status, target };
}
