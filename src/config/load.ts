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

function describeIssues(error: z.ZodError, prefix: string): string[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
    if (issue.code === "unrecognized_keys") {
      return `${path || "(root)"}: unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `\`${k}\``).join(", ")}`;
    }
    return `${path || "(root)"}: ${issue.message}`;
  });
}

/** Validates a raw object into a typed config with defaults filled in. */
export function parseChannelConfig(raw: unknown, opts: { prefix?: string; source?: string } = {}): ChannelConfig {
  const result = channelConfigSchema.safeParse(raw ?? {});
  if (!result.success) throw new ConfigError(describeIssues(result.error, opts.prefix ?? ""), opts.source);
  return result.data;
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
  const layers: Array<GroupOverrides | undefined> = [
    config.groups["*"],
    config.groups[groupId],
    identity?.groups["*"],
    identity?.groups[groupId],
  ];
  let merged: Plain = groupSettingsSchema.parse({}) as unknown as Plain;
  for (const layer of layers) if (layer) merged = mergeInto(merged, layer as Plain);
  const result = groupSettingsSchema.safeParse(merged);
  if (!result.success) throw new ConfigError(describeIssues(result.error, `groups.${groupId}`));
  const s = result.data;
  if (s.bufferGateMaxWaitMs < s.bufferGateMs) {
    throw new ConfigError([
      `groups.${groupId}.bufferGateMaxWaitMs: expected ≥ bufferGateMs (${s.bufferGateMs}), got ${s.bufferGateMaxWaitMs}`,
    ]);
  }
  return s;
}

/** The groups an identity takes part in: every named (non-"*") group key that is not disabled. */
export function listGroupsForIdentity(config: ChannelConfig, identity: IdentityConfig): string[] {
  const ids = new Set<string>();
  for (const key of Object.keys(config.groups)) if (key !== "*") ids.add(key);
  for (const key of Object.keys(identity.groups)) if (key !== "*") ids.add(key);
  return [...ids].filter((g) => resolveGroupSettings(config, identity, g).enabled).sort();
}

/** Checks a single override object (for tools that edit one group's settings). */
export function parseGroupOverrides(raw: unknown, groupId: string): GroupOverrides {
  const result = groupOverridesSchema.safeParse(raw ?? {});
  if (!result.success) throw new ConfigError(describeIssues(result.error, `groups.${groupId}`));
  return result.data as GroupOverrides;
}

export const DEFAULT_GROUP_SETTINGS: GroupSettings = groupSettingsSchema.parse({});
