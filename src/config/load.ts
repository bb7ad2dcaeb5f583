import { readFileSync } from "node:fs";
import { z } from "zod";
import {
  channelConfigSchema,
  groupOverridesSchema,
  groupSettingsSchema,
  type ChannelConfig,
  type GroupOverrides,
  type GroupSettings,
  type IdentityConfig,
} from "./schema.ts";

/** Bad configuration. `message` names every offending path, e.g. `groups.g1.bufferGateMs: …`. */
export class ConfigError extends Error {
  readonly code = "CONFIG_INVALID";
  readonly issues: readonly string[];
  constructor(issues: readonly string[], source?: string) {
    super(`${source ? `${source}: ` : ""}invalid configuration\n  ${issues.join("\n  ")}`);
    this.name = "ConfigError";
    this.issues = issues;
  }
}

type Issue = z.core.$ZodIssue;

/** The value at `path` inside `input`, for quoting it back in an error. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur = input;
  for (const key of path) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function show(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    const json = JSON.stringify(value);
    return json.length <= 40 ? json : `an array of ${value.length}`;
  }
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    const json = JSON.stringify(value);
    return json.length <= 40 ? json : `${json.slice(0, 37)}…"`;
  }
  return String(value);
}

const TYPE_NAMES: Record<string, string> = { int: "an integer", number: "a number", string: "a string", boolean: "true or false", object: "an object", array: "an array", record: "an object" };

function bound(issue: Extract<Issue, { code: "too_small" | "too_big" }>, value: unknown): string {
  const small = issue.code === "too_small";
  const limit = small ? issue.minimum : issue.maximum;
  const inclusive = issue.inclusive !== false;
  const op = small ? (inclusive ? "≥" : ">") : inclusive ? "≤" : "<";
  if (issue.origin === "string" && typeof value === "string") return `expected ${small ? "at least" : "at most"} ${limit} character(s), got ${value.length}`;
  if (issue.origin === "array" && Array.isArray(value)) return `expected ${small ? "at least" : "at most"} ${limit} item(s), got ${value.length}`;
  return `expected ${op} ${limit}, got ${show(value)}`;
}

// zod's own wording ("Too small: expected number to be >=0") names neither the value nor the fix;
// a config error should read `groups.g1.bufferGateMs: expected ≥ 0, got -3`.
function explain(issue: Issue, value: unknown): string {
  switch (issue.code) {
    case "unrecognized_keys":
      return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `\`${k}\``).join(", ")}`;
    case "too_small":
    case "too_big":
      return bound(issue, value);
    case "invalid_type": {
      const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
      if (value === undefined) return `required: expected ${expected}`;
      return `expected ${expected}, got ${show(value)}`;
    }
    case "invalid_key": {
      const sub = issue.issues[0];
      return `invalid key ${show(value)}${sub ? ` (${explain(sub, value)})` : ""}`;
    }
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${show(value)}`;
    default:
      return value === undefined || (typeof value === "object" && !Array.isArray(value)) ? issue.message : `${issue.message}, got ${show(value)}`;
  }
}

function describeIssues(error: z.ZodError, prefix: string, input: unknown): string[] {
  return error.issues.map((issue) => {
    // A bad record key is reported at its record, quoting the key itself.
    const at = issue.code === "invalid_key" ? issue.path.slice(0, -1) : issue.path;
    const value = issue.code === "invalid_key" ? issue.path.at(-1) : valueAt(input, issue.path);
    const path = [prefix, ...at.map(String)].filter(Boolean).join(".");
    return `${path || "(root)"}: ${explain(issue, value)}`;
  });
}

/** Validates a raw object into a typed config with defaults filled in. */
export function parseChannelConfig(raw: unknown, opts: { prefix?: string; source?: string } = {}): ChannelConfig {
  const input = raw ?? {};
  const result = channelConfigSchema.safeParse(input);
  if (!result.success) throw new ConfigError(describeIssues(result.error, opts.prefix ?? "", input), opts.source);
  const issues = [...crossFieldIssues(result.data, opts.prefix ?? ""), ...memberAndProfileIssues(result.data, opts.prefix ?? "")];
  if (issues.length > 0) throw new ConfigError(issues, opts.source);
  return result.data;
}

// Rules between fields hold for the merged settings, so they are checked for every (identity,
// group) the config can produce — at load time, not when a group first starts.
function crossFieldIssues(config: ChannelConfig, prefix: string): string[] {
  const issues = new Set<string>();
  const identities = Object.entries(config.identities);
  const targets: Array<[string, IdentityConfig] | [undefined, undefined]> = identities.length > 0 ? identities : [[undefined, undefined]];
  for (const [key, identity] of targets) {
    const groupIds = new Set(["*", ...Object.keys(config.groups), ...Object.keys(identity?.groups ?? {})]);
    for (const groupId of groupIds) {
      const s = settingsOf(config, identity, groupId);
      for (const issue of mergedIssues(s, config, key, groupId, prefix)) issues.add(issue);
    }
  }
  return [...issues];
}

// Member types and profiles: a sender cannot be configured both human and agent, and a profile
// file is published as is, so generated-profile fields beside it would be silently ignored.
function memberAndProfileIssues(config: ChannelConfig, prefix: string): string[] {
  const at = (path: string) => [prefix, path].filter(Boolean).join(".");
  const issues: string[] = [];
  const humans = new Set(config.humans.map((h) => h.toLowerCase()));
  config.agents.forEach((a, i) => {
    if (humans.has(a.toLowerCase())) issues.push(`${at(`agents.${i}`)}: \`${a}\` is also listed in humans`);
  });
  // Each listed agent's first index, built once: no scan of the list per identity.
  const agentIndex = new Map<string, number>();
  config.agents.forEach((a, i) => {
    if (!agentIndex.has(a.toLowerCase())) agentIndex.set(a.toLowerCase(), i);
  });
  for (const [key, identity] of Object.entries(config.identities)) {
    const owner = identity.owner?.toLowerCase();
    const i = owner === undefined ? -1 : (agentIndex.get(owner) ?? -1);
    if (i >= 0) issues.push(`${at(`agents.${i}`)}: \`${config.agents[i]}\` is the owner of identities.${key}, and an owner is always human`);
    const profile = identity.profile;
    if (profile?.file !== undefined && (profile.description !== undefined || profile.tags !== undefined)) {
      issues.push(`${at(`identities.${key}.profile`)}: \`file\` cannot be combined with \`description\` or \`tags\` (the file is published as is)`);
    }
  }
  return issues;
}

const GATE_FIELDS = ["bufferGateMs", "bufferGateMaxWaitMs"] as const;

function mergedIssues(s: GroupSettings, config: ChannelConfig, identityKey: string | undefined, groupId: string, prefix = ""): string[] {
  if (s.bufferGateMaxWaitMs < s.bufferGateMs) {
    const where = [prefix, layerSetting(config, identityKey, groupId, GATE_FIELDS)].filter(Boolean).join(".");
    return [`${where}.bufferGateMaxWaitMs: expected ≥ bufferGateMs (${s.bufferGateMs}), got ${s.bufferGateMaxWaitMs}`];
  }
  return [];
}

/** The most specific layer that sets one of `fields` for this (identity, group): the place to fix. */
function layerSetting(config: ChannelConfig, identityKey: string | undefined, groupId: string, fields: readonly string[]): string {
  const identity = identityKey !== undefined ? config.identities[identityKey] : undefined;
  const layers: Array<[string, GroupOverrides | undefined]> = [
    [`identities.${identityKey}.groups.${groupId}`, identity?.groups[groupId]],
    [`identities.${identityKey}.groups.*`, identity?.groups["*"]],
    [`groups.${groupId}`, config.groups[groupId]],
    ["groups.*", config.groups["*"]],
  ];
  const hit = layers.find(([, layer]) => layer && fields.some((f) => (layer as Plain)[f] !== undefined));
  return hit?.[0] ?? `groups.${groupId}`;
}

/** Reads a JSON config file. Errors name the file and the path inside it. */
export function loadConfigFile(file: string): ChannelConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError([`cannot read file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`], file);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError([`not valid JSON: ${(err as Error).message}`], file);
  }
  return parseChannelConfig(raw, { source: file });
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

function mergeInto(target: Plain, patch: Plain): Plain {
  const out: Plain = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const cur = out[key];
    out[key] = isPlain(cur) && isPlain(value) ? mergeInto(cur, value) : value;
  }
  return out;
}

/**
 * Effective settings of one (identity, group): defaults ← groups["*"] ← groups[id] ←
 * identity.groups["*"] ← identity.groups[id].
 */
export function resolveGroupSettings(config: ChannelConfig, identity: IdentityConfig | undefined, groupId: string): GroupSettings {
  const s = settingsOf(config, identity, groupId);
  const issues = mergedIssues(s, config, identity ? identityKeyOf(config, identity) : undefined, groupId);
  if (issues.length > 0) throw new ConfigError(issues);
  return s;
}

/** Per `identities` record: each identity's key, built once (a thousand identities, no scan per lookup). */
const identityKeys = new WeakMap<Record<string, IdentityConfig>, Map<IdentityConfig, string>>();

/** The key `identity` has under `config.identities` (undefined when it is not there). */
function identityKeyOf(config: ChannelConfig, identity: IdentityConfig): string | undefined {
  let index = identityKeys.get(config.identities);
  // Built on first use, again only when an identity was added to the record since.
  if (!index?.has(identity)) {
    index = new Map(Object.entries(config.identities).map(([key, v]) => [v, key]));
    identityKeys.set(config.identities, index);
  }
  return index.get(identity);
}

/**
 * Per `groups` record and group: the settings of an identity with no layer of its own there (or
 * an empty one, `lobby: {}`, that only names the group) —
 * a fleet's usual identity — merged and validated once, not once per identity. Settings are
 * read-only once resolved (nothing writes to a config after it was parsed).
 */
const sharedSettings = new WeakMap<Record<string, GroupOverrides>, Map<string, GroupSettings>>();

function settingsOf(config: ChannelConfig, identity: IdentityConfig | undefined, groupId: string): GroupSettings {
  if (hasSettings(identity?.groups["*"]) || hasSettings(identity?.groups[groupId])) return mergeSettings(config, identity, groupId);
  let byGroup = sharedSettings.get(config.groups);
  if (!byGroup) sharedSettings.set(config.groups, (byGroup = new Map()));
  let s = byGroup.get(groupId);
  if (!s) byGroup.set(groupId, (s = mergeSettings(config, undefined, groupId)));
  return s;
}

/** A layer that sets something (`lobby: {}` only names the group: it merges as nothing). */
const hasSettings = (layer: GroupOverrides | undefined): boolean => layer !== undefined && Object.values(layer).some((v) => v !== undefined);

function mergeSettings(config: ChannelConfig, identity: IdentityConfig | undefined, groupId: string): GroupSettings {
  const layers: Array<GroupOverrides | undefined> = [
    config.groups["*"],
    config.groups[groupId],
    identity?.groups["*"],
    identity?.groups[groupId],
  ];
  let merged: Plain = groupSettingsSchema.parse({}) as unknown as Plain;
  for (const layer of layers) if (layer) merged = mergeInto(merged, layer as Plain);
  const result = groupSettingsSchema.safeParse(merged);
  // Each layer was validated on its own, so only a bug can make the merge invalid.
  if (!result.success) throw new ConfigError(describeIssues(result.error, `groups.${groupId}`, merged));
  return result.data;
}

/** The groups an identity takes part in: every named (non-"*") group key that is not disabled. */
export function listGroupsForIdentity(config: ChannelConfig, identity: IdentityConfig): string[] {
  return [...resolveIdentityGroups(config, identity).keys()];
}

/** The identity's enabled groups (sorted) with their effective settings: each resolved once. */
export function resolveIdentityGroups(config: ChannelConfig, identity: IdentityConfig): Map<string, GroupSettings> {
  const ids = new Set<string>();
  for (const key of Object.keys(config.groups)) if (key !== "*") ids.add(key);
  for (const key of Object.keys(identity.groups)) if (key !== "*") ids.add(key);
  const out = new Map<string, GroupSettings>();
  for (const groupId of [...ids].sort()) {
    const settings = resolveGroupSettings(config, identity, groupId);
    if (settings.enabled) out.set(groupId, settings);
  }
  return out;
}

/** Checks a single override object (for tools that edit one group's settings). */
export function parseGroupOverrides(raw: unknown, groupId: string): GroupOverrides {
  const result = groupOverridesSchema.safeParse(raw ?? {});
  if (!result.success) throw new ConfigError(describeIssues(result.error, `groups.${groupId}`, raw ?? {}));
  return result.data as GroupOverrides;
}

export const DEFAULT_GROUP_SETTINGS: GroupSettings = groupSettingsSchema.parse({});
