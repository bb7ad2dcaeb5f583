// The public ACP channel for OpenClaw ("evol", on the official SDK acp-ts) keeps its settings in
// the OpenClaw config under `channels.evol` (older installs: `channels.acp`): one identity
// (`agentName`, `domain`, `ownerAid`, `allowFrom`, `agentMdPath`, `profile`, `seedPassword`) or
// several (`identities.<accountId>` with `agentId`/`agentName` and the same fields, the top level
// as their fallback), direct-message session limits (`session.*`), group pacing
// (`session.group*`, `groupSocial.*`). This turns such a section into `channels.acp-group` and
// says, key by key, what went where and what has no equivalent. Pure: no files, no network.

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x.trim() !== "").map((x) => x.trim()) : []);
const int = (v: unknown, min: number, max: number): number | undefined => (typeof v === "number" && Number.isInteger(v) && v >= min && v <= max ? v : undefined);

export interface EvolAccount {
  /** The evol account id (`identities` key; `default` for the single identity). */
  accountId: string;
  /** Our identity key: the account id, or the agent name of a single identity. */
  identityId: string;
  aid: string;
  /** The seed password evol opens this identity's key with, when its config names one. */
  seedPassword: string | undefined;
}

export interface EvolConversion {
  /** Where the section was found. */
  source: "channels.evol" | "channels.acp";
  /** The channel is on in that config (its section enabled and its plugin entry not disabled). */
  running: boolean;
  accounts: EvolAccount[];
  /** The `channels.acp-group` object (identities, humans, groups["*"]); the caller adds groups, access points and validates. */
  config: { identities: Record<string, Record<string, unknown>>; humans: string[]; groups: Record<string, Record<string, unknown>> };
  /** `evol key → our key: value`, one line each. */
  carried: string[];
  /** Keys with no equivalent here, one line each with why. */
  noEquivalent: string[];
  /** What the config holds outside the channel section that needs a hand (bindings). */
  toDo: string[];
}

/** The evol section of an OpenClaw config, and where it is. */
export function findEvolSection(openclaw: unknown): { source: EvolConversion["source"]; section: Record<string, unknown> } | undefined {
  const channels = isPlain(openclaw) && isPlain(openclaw.channels) ? openclaw.channels : undefined;
  if (isPlain(channels?.evol)) return { source: "channels.evol", section: channels.evol };
  if (isPlain(channels?.acp)) return { source: "channels.acp", section: channels.acp };
  return undefined;
}

/** Is the evol channel on in this config: its section `enabled: true` and its plugin entry not turned off. */
export function evolRunning(openclaw: unknown): boolean {
  const found = findEvolSection(openclaw);
  if (!found || found.section.enabled !== true) return false;
  const entries = isPlain(openclaw) && isPlain(openclaw.plugins) && isPlain(openclaw.plugins.entries) ? openclaw.plugins.entries : {};
  const plugin = entries[found.source === "channels.evol" ? "evol" : "acp"];
  return !(isPlain(plugin) && plugin.enabled === false);
}

/** Where evol runs `aid` in this config (its section, when the channel is on and one of its accounts is that aid). */
export function evolRunsAid(openclaw: unknown, aid: string): EvolConversion["source"] | undefined {
  if (!evolRunning(openclaw)) return undefined;
  const found = findEvolSection(openclaw)!;
  return evolAccounts(found.section).some((a) => a.aid.toLowerCase() === aid.toLowerCase()) ? found.source : undefined;
}

function ownersOf(v: unknown): string[] {
  const list = Array.isArray(v) ? strings(v) : (str(v)?.split(",") ?? []);
  return list.map((s) => s.trim()).filter(Boolean);
}

/** The accounts evol runs from this section, as its own account resolution reads them. */
export function evolAccounts(section: Record<string, unknown>): EvolAccount[] {
  const topDomain = str(section.domain) ?? "agentcp.io";
  if (isPlain(section.identities) && Object.keys(section.identities).length > 0) {
    return Object.entries(section.identities).flatMap(([accountId, entry]) => {
      if (!isPlain(entry)) return [];
      const name = str(entry.agentId) ?? str(entry.agentName);
      if (!name) return [];
      return [{ accountId, identityId: accountId, aid: `${name}.${str(entry.domain) ?? topDomain}`, seedPassword: str(entry.seedPassword) ?? str(section.seedPassword) }];
    });
  }
  const name = str(section.agentName);
  return name ? [{ accountId: "default", identityId: name, aid: `${name}.${topDomain}`, seedPassword: str(section.seedPassword) }] : [];
}

const SESSION_DM_KEYS = ["endMarkers", "consecutiveEmptyThreshold", "sendEndMarkerOnClose", "sendAckOnReceiveEnd", "maxTurns", "maxDurationMs", "idleTimeoutMs", "maxConcurrentSessions", "maxSessionsPerTarget"];
const KNOWN_TOP = new Set(["enabled", "agentAidBindingMode", "agentName", "domain", "seedPassword", "ownerAid", "allowFrom", "agentMdPath", "workspaceDir", "profile", "identities", "session", "groupSocial", "context", "mentionAliases"]);
const KNOWN_ENTRY = new Set(["agentId", "agentName", "domain", "seedPassword", "ownerAid", "allowFrom", "agentMdPath", "workspaceDir", "profile", "mentionAliases"]);

/** Converts the evol section of `openclaw` (an OpenClaw config object); undefined when it has none. */
export function convertEvolConfig(openclaw: unknown, opts: { expandHome?: (path: string) => string } = {}): EvolConversion | undefined {
  const found = findEvolSection(openclaw);
  if (!found) return undefined;
  const { source, section } = found;
  const expand = opts.expandHome ?? ((p: string) => p);
  const carried: string[] = [];
  const noEquivalent: string[] = [];
  const toDo: string[] = [];
  const accounts = evolAccounts(section);
  const humans: string[] = [];
  const identities: Record<string, Record<string, unknown>> = {};
  const globalAliases = isPlain(section.groupSocial) ? strings(section.groupSocial.mentionAliases) : [];
  const entries = isPlain(section.identities) ? section.identities : {};

  for (const account of accounts) {
    const entry = isPlain(entries[account.accountId]) ? (entries[account.accountId] as Record<string, unknown>) : section;
    const at = entry === section ? source : `${source}.identities.${account.accountId}`;
    const pick = (key: string): unknown => (entry[key] !== undefined ? entry[key] : section[key]);
    const where = (key: string) => (entry[key] !== undefined ? `${at}.${key}` : `${source}.${key}`);
    const ours = `identities.${account.identityId}`;
    const identity: Record<string, unknown> = { aid: account.aid };
    carried.push(`${at}.${entry === section ? "agentName" : str(entry.agentId) ? "agentId" : "agentName"} + domain → ${ours}.aid: ${account.aid}`);

    const owners = ownersOf(pick("ownerAid"));
    if (owners.length > 0) {
      identity.owner = owners[0];
      carried.push(`${where("ownerAid")} → ${ours}.owner: ${owners[0]}`);
      for (const extra of owners.slice(1)) {
        if (!humans.includes(extra)) humans.push(extra);
        carried.push(`${where("ownerAid")} (${extra}) → humans: one owner per identity here; the others are known as people`);
      }
    }

    const allow = strings(pick("allowFrom"));
    if (allow.length > 0 && !allow.includes("*")) {
      identity.groups = { "*": { allowFrom: allow.slice(0, 1000) } };
      carried.push(`${where("allowFrom")} → ${ours}.groups.*.allowFrom: ${allow.join(", ")} (who may address the agent in its groups)`);
    } else if (pick("allowFrom") !== undefined) {
      carried.push(`${where("allowFrom")} ${allow.length === 0 ? "[]" : '["*"]'} → (nothing: everyone may address the agent, the default here)`);
    }

    const aliases = [...new Set([...strings(entry.mentionAliases), ...globalAliases].filter((a) => a.length <= 100))].slice(0, 50);
    if (aliases.length > 0) {
      identity.aliases = aliases;
      carried.push(`${entry.mentionAliases !== undefined ? `${at}.mentionAliases` : `${source}.groupSocial.mentionAliases`} → ${ours}.aliases: ${aliases.join(", ")}`);
    }

    const profile = isPlain(pick("profile")) ? (pick("profile") as Record<string, unknown>) : {};
    const displayName = str(profile.displayName);
    if (displayName && displayName.length <= 100) {
      identity.name = displayName;
      carried.push(`${where("profile")}.displayName → ${ours}.name: ${displayName}`);
    }
    const mdPath = str(pick("agentMdPath"));
    const description = str(profile.description);
    const tags = strings(profile.capabilities).filter((t) => t.length <= 40).slice(0, 20);
    if (mdPath) {
      identity.profile = { file: expand(mdPath) };
      carried.push(`${where("agentMdPath")} → ${ours}.profile.file: ${expand(mdPath)} (published after sign-in when it changed, as evol uploads it)`);
      if (description || tags.length > 0) noEquivalent.push(`${where("profile")}.description/capabilities: the agent.md file is published as it is, so these are not added to it`);
    } else if (description || tags.length > 0) {
      identity.profile = { ...(description ? { description: description.slice(0, 500) } : {}), ...(tags.length > 0 ? { tags } : {}) };
      carried.push(`${where("profile")}.description/capabilities → ${ours}.profile.description/tags (the generated agent.md)`);
    }
    if (str(pick("seedPassword"))) {
      carried.push(`${where("seedPassword")} → opens the key on import; not written into the config (it is a secret: ACP_SEED_PASSWORD or network.seedPassword)`);
    }
    if (str(pick("workspaceDir"))) noEquivalent.push(`${where("workspaceDir")}: no equivalent (the agent.md is profile.file or generated from profile and persona)`);
    for (const key of Object.keys(entry === section ? {} : entry)) {
      if (!KNOWN_ENTRY.has(key)) noEquivalent.push(`${at}.${key}: unknown to this importer, not carried`);
    }
    identities[account.identityId] = identity;
  }

  // Group pacing, for every identity (groups["*"]).
  const star: Record<string, unknown> = {};
  const session = isPlain(section.session) ? section.session : {};
  const gate = int(session.groupBufferGateMs, 0, 600_000);
  if (gate !== undefined) {
    star.bufferGateMs = gate;
    carried.push(`${source}.session.groupBufferGateMs → groups.*.bufferGateMs: ${gate}`);
    if (gate > 15_000) star.bufferGateMaxWaitMs = gate;
  }
  const cooldown = int(session.groupDispatchCooldownMs, 0, 3_600_000);
  if (cooldown !== undefined) {
    star.cooldownMs = cooldown;
    carried.push(`${source}.session.groupDispatchCooldownMs → groups.*.cooldownMs: ${cooldown}`);
  }
  if (session.groupMessageIntervalMs !== undefined) {
    noEquivalent.push(`${source}.session.groupMessageIntervalMs: no equivalent (a batch goes to the model after a pause of groups.*.bufferGateMs, and never later than bufferGateMaxWaitMs after its first message)`);
  }
  if (session.groupSessionMsgLimit !== undefined) noEquivalent.push(`${source}.session.groupSessionMsgLimit: no equivalent (one conversation per group, its older turns summarised past llm.historyTokenLimit)`);
  for (const key of SESSION_DM_KEYS) {
    if (session[key] !== undefined) noEquivalent.push(`${source}.session.${key}: no equivalent (a limit of evol's direct-message sessions; this channel answers in groups)`);
  }
  const social = isPlain(section.groupSocial) ? section.groupSocial : {};
  if (social.enabled !== undefined) noEquivalent.push(`${source}.groupSocial.enabled: no equivalent (vitality, mentions and reply length are always on here)`);
  const mentionGap = int(social.mentionMinIntervalMs, 0, 3_600_000);
  if (mentionGap !== undefined) {
    star.mentionMinIntervalMs = mentionGap;
    carried.push(`${source}.groupSocial.mentionMinIntervalMs → groups.*.mentionMinIntervalMs: ${mentionGap}`);
  }
  const maxChars = int(social.maxCharsPerMessage, 20, 10_000);
  if (maxChars !== undefined) {
    star.replyPolicy = { maxCharsPerMessage: maxChars };
    carried.push(`${source}.groupSocial.maxCharsPerMessage → groups.*.replyPolicy.maxCharsPerMessage: ${maxChars}`);
  }
  const vitality = int(social.vitalityWindowMs, 0, 3_600_000);
  if (vitality !== undefined) {
    star.vitalityWindowMs = vitality;
    carried.push(`${source}.groupSocial.vitalityWindowMs → groups.*.vitalityWindowMs: ${vitality}`);
  }
  if (social.maxJoinedGroups !== undefined) noEquivalent.push(`${source}.groupSocial.maxJoinedGroups: no equivalent (the agent answers in the groups its config lists)`);
  if (section.agentAidBindingMode !== undefined) noEquivalent.push(`${source}.agentAidBindingMode: no equivalent (here one identity is one account, always)`);
  if (section.context !== undefined) noEquivalent.push(`${source}.context: no equivalent (evol's context files and acp_context tool)`);
  for (const key of Object.keys(section)) {
    if (!KNOWN_TOP.has(key)) noEquivalent.push(`${source}.${key}: unknown to this importer, not carried`);
  }

  const channel = source === "channels.evol" ? "evol" : "acp";
  const bindings = isPlain(openclaw) && Array.isArray(openclaw.bindings) ? openclaw.bindings : [];
  for (const b of bindings) {
    if (!isPlain(b) || !isPlain(b.match) || b.match.channel !== channel) continue;
    const accountId = str(b.match.accountId) ?? "default";
    const to = accounts.find((a) => a.accountId === accountId)?.identityId ?? accountId;
    toDo.push(`bindings: ${str(b.agentId) ?? "(an agent)"} ← ${channel}/${accountId}: add the same for acp-group, { "agentId": "${str(b.agentId) ?? ""}", "match": { "channel": "acp-group", "accountId": "${to}" } }`);
  }

  return {
    source,
    running: evolRunning(openclaw),
    accounts,
    config: { identities, humans, groups: Object.keys(star).length > 0 ? { "*": star } : {} },
    carried,
    noEquivalent,
    toDo,
  };
}
