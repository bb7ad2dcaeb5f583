// `openclaw channels add --channel acp-group …` (and the guided setup, which asks the same fields):
// create or reuse the identity in the same store and layout as `acp-group id create`, join groups
// by their links, and write `channels.acp-group`. Host-agnostic: src/plugin.ts hands these to the
// host's setup contract; package.json `openclaw.channel.setup.fields` mirrors ACP_GROUP_SETUP_FIELDS.
import { parseChannelConfig } from "../config/load.ts";
import { resolveSeedPassword } from "../config/secret-ref.ts";
import { joinGroupByLink } from "../runtime/join.ts";
import type { Logger } from "../types.ts";
import { accessPointUrlFor } from "../network/access-point.ts";
import { ensureIdentity } from "../network/identity-store.ts";
import { ACP_GROUP_CHANNEL_ID } from "./host-calls.ts";

/** The setup flags. Each key is the camelCased long flag (the host's rule). */
export const ACP_GROUP_SETUP_FIELDS = {
  aid: { kind: "string", cli: { flags: "--aid <aid>", description: "The agent's id on the ACP network (e.g. bot.agentcp.io)" } },
  accessPointUrl: { kind: "string", cli: { flags: "--access-point-url <url>", description: "Access point URL (default https://acp3.<domain of aid>)" } },
  caFile: { kind: "string", cli: { flags: "--ca-file <file>", description: "PEM of a private CA to trust (a local network's ca.crt)" } },
  stateDir: { kind: "string", cli: { flags: "--state-dir <dir>", description: "Where identities and group state live (default the host's state dir)" } },
  owner: { kind: "string", cli: { flags: "--owner <aid>", description: "Your own aid: always allowed, never held to a share" } },
  join: { kind: "string-list", cli: { flags: "--join <links>", description: "Invite links to join (comma-separated)" } },
  groups: { kind: "string-list", cli: { flags: "--groups <ids>", description: "Group ids to answer in (joined links are added)" } },
  unencryptedKey: { kind: "boolean", cli: { flags: "--unencrypted-key", description: "Store a new key without a password (else ACP_SEED_PASSWORD encrypts it)" } },
} as const;

export type AcpGroupSetupInput = {
  name?: string;
  aid?: string;
  accessPointUrl?: string;
  caFile?: string;
  stateDir?: string;
  owner?: string;
  join?: string[];
  groups?: string[];
  unencryptedKey?: boolean;
};

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

function sectionOf(cfg: unknown): Plain {
  const channels = isPlain(cfg) ? cfg.channels : undefined;
  const s = isPlain(channels) ? channels[ACP_GROUP_CHANNEL_ID] : undefined;
  return isPlain(s) ? s : {};
}

/** What is wrong with the flags before anything is created, or null. */
export function validateAcpGroupSetup(input: AcpGroupSetupInput, cfg: unknown, accountId: string): string | null {
  const existing = sectionOf(cfg).identities;
  const known = isPlain(existing) && isPlain(existing[accountId]) ? (existing[accountId] as Plain).aid : undefined;
  if (!input.aid && typeof known !== "string") return "expected --aid <aid> (the agent's id on the ACP network)";
  if ((input.groups?.length ?? 0) + (input.join?.length ?? 0) === 0 && !isPlain(sectionOf(cfg).groups)) return "expected --join <link> or --groups <ids>: the groups to answer in";
  return null;
}

/** The channel section with this account's identity, network and groups merged in (validated). */
export function applyAcpGroupSetup<Cfg>(p: { cfg: Cfg; accountId: string; input: AcpGroupSetupInput }): Cfg {
  const section = sectionOf(p.cfg);
  const identities = isPlain(section.identities) ? section.identities : {};
  const previous = isPlain(identities[p.accountId]) ? (identities[p.accountId] as Plain) : {};
  const identity: Plain = {
    ...previous,
    ...(p.input.aid ? { aid: p.input.aid } : {}),
    ...(p.input.name ? { name: p.input.name } : {}),
    ...(p.input.owner ? { owner: p.input.owner } : {}),
    ...(p.input.accessPointUrl ? { accessPointUrl: p.input.accessPointUrl } : {}),
  };
  const groups: Plain = { ...(isPlain(section.groups) ? section.groups : {}) };
  for (const g of p.input.groups ?? []) groups[g] ??= {};
  const network: Plain = { ...(isPlain(section.network) ? section.network : {}), ...(p.input.caFile ? { caFile: p.input.caFile } : {}) };
  const next: Plain = {
    ...section,
    ...(p.input.stateDir ? { stateDir: p.input.stateDir } : {}),
    ...(Object.keys(network).length > 0 ? { network } : {}),
    identities: { ...identities, [p.accountId]: identity },
    groups,
  };
  // Never write a section our own loader would refuse: the error names the path.
  parseChannelConfig(next, { prefix: `channels.${ACP_GROUP_CHANNEL_ID}` });
  const cfg = p.cfg as Plain;
  return { ...cfg, channels: { ...(isPlain(cfg.channels) ? cfg.channels : {}), [ACP_GROUP_CHANNEL_ID]: next } } as Cfg;
}

/**
 * Before the config is written: the identity exists (created, or its certificate renewed, with
 * the same key) and every `--join` link is joined. Joined groups are added to `groups`.
 */
export async function prepareAcpGroupSetup(p: { cfg: unknown; accountId: string; input: AcpGroupSetupInput; defaultStateDir: string; env?: NodeJS.ProcessEnv; logger: Logger }): Promise<AcpGroupSetupInput> {
  const env = p.env ?? process.env;
  const section = sectionOf(p.cfg);
  const stateDir = p.input.stateDir ?? (typeof section.stateDir === "string" ? section.stateDir : p.defaultStateDir);
  // The section as it will be written, so the identity signs in exactly as the runtime will.
  const draft = applyAcpGroupSetup({ cfg: p.cfg, accountId: p.accountId, input: { ...p.input, stateDir, groups: p.input.groups ?? [] } });
  const config = parseChannelConfig(sectionOf(draft));
  const identity = config.identities[p.accountId]!;
  const seedPassword = resolveSeedPassword(config.network, env);
  const tls = { ...(config.network.caFile ? { caFile: config.network.caFile } : {}), ...(config.network.insecureTls ? { insecureTls: true } : {}) };
  const accessPointUrl = accessPointUrlFor(identity);
  await ensureIdentity({ aid: identity.aid, stateDir, accessPointUrl, seedPassword, noPassphrase: p.input.unencryptedKey === true, tls });
  const groups = [...(p.input.groups ?? [])];
  for (const link of p.input.join ?? []) {
    // The password as resolved from the env given here: the join opens the key with it, not with
    // whatever this process's own environment holds.
    const network = seedPassword !== undefined ? { ...config.network, seedPassword } : config.network;
    const { status, target } = await joinGroupByLink({ config: { ...config, stateDir, network }, identityId: p.accountId, link, logger: p.logger });
    p.logger.log("info", "setup.joined", { aid: identity.aid, group: target.groupId, status });
    if (status === "joined" || status === "member") groups.push(target.groupId);
    else throw new Error(`${identity.aid} asked to join ${target.groupId}: ${status} (add it with --groups once the group's owner accepts)`);
  }
  return { ...p.input, stateDir, groups: [...new Set(groups)] };
}
