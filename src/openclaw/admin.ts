// What the OpenClaw host asks a channel about itself, outside of running it: doctor findings,
// security warnings, the per-group tool policy, the directory (groups and members) and the
// account's status snapshot. Host-agnostic and synchronous where it can be: it reads the config,
// the identity folders and the saved group state, never the network (src/openclaw/doctor.ts
// and the status probe in src/plugin.ts do that). Every finding carries the command that fixes it.
import { X509Certificate } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseChannelConfig, resolveGroupSettings } from "../config/load.ts";
import type { ChannelConfig, IdentityConfig } from "../types.ts";
import { accessPointUrlFor } from "../network/access-point.ts";
import { checkCertificateExpiry, identityPaths, loadIdentity } from "../network/identity-store.ts";
import { NetworkError } from "../network/errors.ts";
import { encodeSafeName } from "../state/safe-name.ts";
import { resolveSeedPassword } from "../config/secret-ref.ts";
import { ACP_GROUP_CHANNEL_ID, parseAcpGroupTarget } from "./host-calls.ts";

const PATH = `channels.${ACP_GROUP_CHANNEL_ID}`;

/** The tool policy shape the host applies to a group turn (its ToolPolicySchema). */
export type AcpGroupToolPolicy = { allow?: string[]; alsoAllow?: string[]; deny?: string[] };

/** Where anyone may talk, the agent gets no tools unless the group says otherwise. */
export const OPEN_GROUP_TOOL_POLICY: Readonly<AcpGroupToolPolicy> = Object.freeze({ deny: ["*"] });

export type IdentityHealth = {
  accountId: string;
  aid: string;
  accessPointUrl: string;
  /**
   * `ok`: the key opens and matches the certificate. `unchecked`: its password is a reference only
   * the OpenClaw gateway resolves (exec, store), so only the certificate was read.
   */
  key: "ok" | "missing" | "locked" | "rejected" | "unchecked";
  keyDetail?: string;
  certificate?: { reason: "valid" | "expired" | "expiring-soon" | "not-yet-valid"; daysLeft: number; validTo: string };
};

/** The identity's key and certificate as the runtime would load them, without signing in. */
export function checkIdentityHealth(p: { accountId: string; identity: IdentityConfig; config: ChannelConfig; stateDir: string; env?: NodeJS.ProcessEnv; now: number }): IdentityHealth {
  const { identity: c } = p;
  const base = { accountId: p.accountId, aid: c.aid, accessPointUrl: accessPointUrlFor(c) };
  const ref = p.config.network.seedPassword;
  if (typeof ref === "object" && (ref.source === "exec" || ref.source === "store")) {
    // Outside the gateway (`openclaw doctor`) nobody can resolve it: judge the certificate alone.
    const paths = identityPaths({ aid: c.aid, ...(c.identityDir !== undefined ? { identityDir: c.identityDir } : { stateDir: p.stateDir }) });
    const keyFile = c.keyFile ?? paths.key;
    const certFile = c.certFile ?? paths.cert;
    const gone = [keyFile, certFile].find((f) => !existsSync(f));
    if (gone) return { ...base, key: "missing", keyDetail: `${gone} is missing` };
    const pem = readFileSync(certFile, "utf8");
    const expiry = checkCertificateExpiry({ certPem: pem, now: p.now });
    return { ...base, key: "unchecked", keyDetail: `the password is a \`${ref.source}\` reference the gateway resolves`, certificate: { reason: expiry.reason, daysLeft: expiry.daysLeft, validTo: new X509Certificate(pem).validToDate.toISOString() } };
  }
  let certPem: string;
  try {
    const seedPassword = resolveSeedPassword(p.config.network, p.env ?? process.env);
    certPem = loadIdentity({
      aid: c.aid,
      stateDir: p.stateDir,
      ...(c.identityDir !== undefined ? { identityDir: c.identityDir } : {}),
      ...(c.keyFile !== undefined ? { keyFile: c.keyFile } : {}),
      ...(c.certFile !== undefined ? { certFile: c.certFile } : {}),
      seedPassword,
    }).certPem;
  } catch (err) {
    const code = err instanceof NetworkError ? err.code : undefined;
    const key = code === "IDENTITY_NOT_FOUND" ? "missing" : code === "IDENTITY_LOCKED" ? "locked" : "rejected";
    return { ...base, key, keyDetail: err instanceof Error ? err.message : String(err) };
  }
  const expiry = checkCertificateExpiry({ certPem, now: p.now });
  return { ...base, key: "ok", certificate: { reason: expiry.reason, daysLeft: expiry.daysLeft, validTo: new X509Certificate(certPem).validToDate.toISOString() } };
}

type Parsed = { config: ChannelConfig; error?: undefined } | { config?: undefined; error: string[] };

function parseSection(cfg: unknown): Parsed | undefined {
  const channels = isPlain(cfg) ? cfg.channels : undefined;
  const section = isPlain(channels) ? channels[ACP_GROUP_CHANNEL_ID] : undefined;
  if (section === undefined) return undefined;
  try {
    return { config: parseChannelConfig(section, { prefix: PATH }) };
  } catch (err) {
    return { error: (err as { issues?: string[] }).issues ?? [String(err)] };
  }
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `acp-group id …` with the flags that point it at this identity's folder and access point. */
function idCommand(sub: "create" | "renew", h: Pick<IdentityHealth, "aid" | "accessPointUrl">, stateDir: string, config: ChannelConfig): string {
  const ca = config.network.caFile ? ` --ca-file ${config.network.caFile}` : "";
  return `acp-group id ${sub} ${h.aid} --state-dir ${stateDir} --ap-url ${h.accessPointUrl}${ca}`;
}

/**
 * `openclaw doctor`: one line per problem, each with the fix. Certificates expired, expiring within
 * 30 days or not yet valid; keys missing, locked or not matching; `insecureTls` on; configured
 * groups this identity has never been in (no saved state).
 */
export function collectAcpGroupDoctorWarnings(p: { cfg: unknown; stateDir: string; env?: NodeJS.ProcessEnv; now: number }): string[] {
  const parsed = parseSection(p.cfg);
  if (parsed === undefined) return [];
  if (parsed.error) return parsed.error.map((issue) => `- ${issue} (fix the config, then \`openclaw config validate\`)`);
  const { config } = parsed;
  const stateDir = config.stateDir ?? p.stateDir;
  const out: string[] = [];
  if (config.network.insecureTls) {
    out.push(`- ${PATH}.network.insecureTls is on: TLS certificates are not verified. Trust the network's CA instead: \`openclaw config set ${PATH}.network.insecureTls false\` and set ${PATH}.network.caFile.`);
  }
  for (const [accountId, identity] of Object.entries(config.identities)) {
    if (!identity.enabled) continue;
    const h = checkIdentityHealth({ accountId, identity, config, stateDir, ...(p.env ? { env: p.env } : {}), now: p.now });
    const where = `${PATH}.identities.${accountId} (${h.aid})`;
    if (h.key === "missing") out.push(`- ${where}: no key and certificate in ${identityPaths({ aid: h.aid, stateDir }).dir}. Create them: \`${idCommand("create", h, stateDir, config)}\``);
    else if (h.key === "locked") out.push(`- ${where}: the key does not open (${h.keyDetail}). Set ACP_SEED_PASSWORD or ${PATH}.network.seedPassword to the password it was created with.`);
    else if (h.key === "rejected") out.push(`- ${where}: ${h.keyDetail}. Import the matching pair: \`acp-group id import --key FILE --cert FILE --state-dir ${stateDir}\``);
    const cert = h.certificate;
    if (cert?.reason === "expired") out.push(`- ${where}: the certificate expired on ${cert.validTo}; the network refuses it. Renew it (same key): \`${idCommand("renew", h, stateDir, config)}\``);
    else if (cert?.reason === "expiring-soon") out.push(`- ${where}: the certificate expires on ${cert.validTo} (${cert.daysLeft} days). Renew it (same key): \`${idCommand("renew", h, stateDir, config)}\``);
    else if (cert?.reason === "not-yet-valid") out.push(`- ${where}: the certificate is not valid before its start date; check this machine's clock (\`date -u\`).`);
    for (const groupId of configuredGroups(config, identity)) {
      // Read-only: a group the identity has been in has its saved state (src/state/file-store.ts).
      if (!existsSync(join(stateDir, encodeSafeName(accountId), `${encodeSafeName(groupId)}.group.json`))) out.push(`- ${where}: group ${groupId} is configured but the identity has not been in it yet. Join it: \`acp-group join <invite link> --identity ${h.aid} --state-dir ${stateDir}\``);
    }
  }
  return out;
}

/** Group ids named in the config for this identity (the `*` defaults excluded). */
function configuredGroups(config: ChannelConfig, identity: IdentityConfig): string[] {
  return [...new Set([...Object.keys(config.groups), ...Object.keys(identity.groups)])].filter((g) => g !== "*");
}

/**
 * Security warnings (`openclaw security audit`, `channels status`): groups where anyone may talk
 * and the agent would have tools, `insecureTls`, identities without an owner.
 */
export function collectAcpGroupSecurityWarnings(p: { cfg: unknown; accountId: string }): string[] {
  const parsed = parseSection(p.cfg);
  if (!parsed?.config) return [];
  const { config } = parsed;
  const identity = config.identities[p.accountId];
  if (!identity) return [];
  const out: string[] = [];
  const where = `${PATH}.identities.${p.accountId}`;
  if (!identity.owner) out.push(`${where}: no owner set — nobody is exempt from allowFrom/denyFrom and the per-sender share; set ${where}.owner to your own aid.`);
  if (config.network.insecureTls) out.push(`${PATH}.network.insecureTls is on: TLS certificates are not verified (never use it on the real network).`);
  out.push(...directMessageWarnings(p.cfg, identity, where));
  for (const groupId of ["*", ...configuredGroups(config, identity)]) {
    const s = resolveGroupSettings(config, identity, groupId);
    if (s.allowFrom.length > 0 || s.tools === undefined) continue;
    const allows = s.tools.allow ?? s.tools.alsoAllow ?? [];
    if (allows.length > 0 && !(s.tools.deny ?? []).includes("*")) {
      out.push(`${PATH}.groups.${groupId}: open group (no allowFrom) whose tools allow ${allows.join(", ")} — anyone who joins by link can make the agent use them; set allowFrom or remove tools.`);
    }
  }
  return out;
}

/** Direct messages: an open policy, and a pairing that would hand the host's command ownership to a stranger. */
function directMessageWarnings(cfg: unknown, identity: IdentityConfig, where: string): string[] {
  const policy = identity.dmPolicy ?? "pairing";
  const out: string[] = [];
  if (policy === "open") out.push(`${where}.dmPolicy is open: anyone on the network may message the agent directly (each within their share of the budget); use pairing or allowlist.`);
  const commands = typeof cfg === "object" && cfg !== null ? (cfg as { commands?: { ownerAllowFrom?: unknown } }).commands : undefined;
  const owners = Array.isArray(commands?.ownerAllowFrom) ? commands.ownerAllowFrom.filter((e) => String(e).trim() !== "" && !String(e).endsWith("*")) : [];
  if (policy === "pairing" && owners.length === 0) {
    const fix = identity.owner ? `openclaw config set commands.ownerAllowFrom '["${ACP_GROUP_CHANNEL_ID}:${identity.owner}"]'` : "set commands.ownerAllowFrom to your own sender id";
    out.push(`commands.ownerAllowFrom is empty: the first sender approved with \`openclaw pairing approve ${ACP_GROUP_CHANNEL_ID}\` becomes the host's command owner; ${fix}.`);
  }
  return out;
}

/**
 * `groups.resolveToolPolicy`: the group's own `tools` when set; else, where anyone may talk (no
 * `allowFrom`), no tools at all; a closed group (allowFrom set) keeps the host's own policy.
 */
export function resolveAcpGroupToolPolicy(p: { cfg: unknown; accountId?: string | null; groupId?: string | null }): AcpGroupToolPolicy | undefined {
  const parsed = parseSection(p.cfg);
  // A broken config must not open the tools: the safe default.
  if (!parsed?.config) return { ...OPEN_GROUP_TOOL_POLICY };
  const { config } = parsed;
  const identity = (p.accountId ? config.identities[p.accountId] : undefined) ?? Object.values(config.identities)[0];
  let s;
  try {
    s = resolveGroupSettings(config, identity, p.groupId ?? "*");
  } catch {
    return { ...OPEN_GROUP_TOOL_POLICY };
  }
  if (s.tools !== undefined) return { ...s.tools };
  return s.allowFrom.length === 0 ? { ...OPEN_GROUP_TOOL_POLICY } : undefined;
}

/** Directory entry shape the host lists for the `message` tool and `openclaw directory`. */
export type AcpGroupDirectoryEntry = { kind: "user" | "group"; id: string; name?: string; raw?: unknown };

const matches = (query: string | null | undefined, ...fields: Array<string | undefined>): boolean => {
  const q = query?.trim().toLowerCase();
  return !q || fields.some((f) => f?.toLowerCase().includes(q));
};

/** `directory.listGroups`: the identity's configured groups (and those it runs), as `group:<id>` targets. */
export function listAcpGroupGroups(p: { cfg: unknown; accountId?: string | null; running?: readonly string[]; query?: string | null; limit?: number | null }): AcpGroupDirectoryEntry[] {
  const parsed = parseSection(p.cfg);
  if (!parsed?.config) return [];
  const { config } = parsed;
  const identity = (p.accountId ? config.identities[p.accountId] : undefined) ?? Object.values(config.identities)[0];
  if (!identity) return [];
  const ids = [...new Set([...configuredGroups(config, identity), ...(p.running ?? [])])];
  const out: AcpGroupDirectoryEntry[] = [];
  for (const id of ids) {
    let subject: string | undefined;
    try {
      subject = resolveGroupSettings(config, identity, id).subject;
    } catch {
      subject = undefined;
    }
    if (matches(p.query, id, subject)) out.push({ kind: "group", id: `group:${id}`, ...(subject ? { name: subject } : {}) });
  }
  return p.limit ? out.slice(0, p.limit) : out;
}

/**
 * `directory.listPeers`: members this identity knows, with their type — the owner, `humans`,
 * `agents`, and (while running) the members the group services and agent.md files named.
 */
export function listAcpGroupPeers(p: {
  cfg: unknown;
  accountId?: string | null;
  known?: ReadonlyArray<{ aid: string; type: string }>;
  query?: string | null;
  limit?: number | null;
}): AcpGroupDirectoryEntry[] {
  const parsed = parseSection(p.cfg);
  if (!parsed?.config) return [];
  const { config } = parsed;
  const identity = (p.accountId ? config.identities[p.accountId] : undefined) ?? Object.values(config.identities)[0];
  const byAid = new Map<string, string>();
  for (const k of p.known ?? []) byAid.set(k.aid.toLowerCase(), k.type);
  for (const a of config.agents) byAid.set(a.toLowerCase(), "agent");
  for (const h of config.humans) byAid.set(h.toLowerCase(), "human");
  if (identity?.owner) byAid.set(identity.owner.toLowerCase(), "human, owner");
  if (identity) byAid.delete(identity.aid.toLowerCase());
  const out = [...byAid]
    .filter(([aid]) => matches(p.query, aid))
    .map(([aid, type]): AcpGroupDirectoryEntry => ({ kind: "user", id: aid, name: `${aid} (${type})`, raw: { type } }));
  return p.limit ? out.slice(0, p.limit) : out;
}

/**
 * `messaging.targetResolver.looksLikeId`: an explicit `group:` / `user:` target or an agent id is
 * used as given; anything else (a group's subject, a bare word) is looked up in the directory.
 */
export function looksLikeAcpGroupTargetId(raw: string): boolean {
  const target = parseAcpGroupTarget(raw);
  if (!target) return false;
  const rest = raw.trim().replace(new RegExp(`^${ACP_GROUP_CHANNEL_ID}:`, "i"), "");
  return target.kind === "direct" || /^(group|user|dm|direct):/i.test(rest);
}

/** `messaging.inferTargetChatType`: an agent id is a direct chat; the host decides the rest. */
export function inferAcpGroupTargetChatType(to: string): "direct" | undefined {
  return parseAcpGroupTarget(to)?.kind === "direct" ? "direct" : undefined;
}

/** `messaging.normalizeTarget`: a group → `group:<group>`, an agent id (`acp-group:<aid>`, `user:<aid>`) → `user:<aid>`. */
export function normalizeAcpGroupTarget(raw: string): string | undefined {
  const target = parseAcpGroupTarget(raw);
  if (!target) return undefined;
  return target.kind === "group" ? `group:${target.groupId}` : `user:${target.peer}`;
}
