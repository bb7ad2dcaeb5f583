// `acp-group join <link> --identity <id>`: joins a group by its link. With an invite code
// (`https://group.<ap>/<group>?code=<invite>`) it sends `use_invite_code`; without one it sends
// `request_join` (the group's owner decides); src/runtime/join.ts does the joining. Once joined,
// the config file gets what `run` needs.
import { existsSync } from "node:fs";
import { loadConfigFile, parseChannelConfig } from "../config/load.ts";
import { addJoinToConfig, readIdentityAccess } from "./join-config.ts";
import { identityPaths } from "../network/identity-store.ts";
import { intOption, parse, UsageError, type Io } from "./args.ts";
import { createJsonLogger } from "../log.ts";
import { joinByLink, JoinLinkError, parseLink, type JoinLink } from "../runtime/join.ts";
import { defaultStateDir } from "../state/file-store.ts";
import type { ChannelConfig, LogLevel } from "../types.ts";

/** Parses `https://group.<ap>/<group>?code=<invite>`; throws UsageError naming what is wrong. */
export function parseJoinLink(link: string): JoinLink {
  try {
    return parseLink(link);
  } catch (err) {
    throw err instanceof JoinLinkError ? new UsageError(err.message) : err;
  }
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
  if (written.added.length === 0) io.out(`${values.config} already has ${target.groupId} for ${written.identityId}; start it with: npx acp-group run --config ${values.config}`);
  else io.out(`${written.created ? "created" : "updated"} ${values.config}: ${written.added.join(", ")}; start it with: npx acp-group run --config ${values.config}`);
  return 0;
}
