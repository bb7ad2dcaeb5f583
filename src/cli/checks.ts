// Checks every command makes the same way: which configured group, which identity, whose log lines.
import { DEFAULT_GROUP_SETTINGS, listGroupsForIdentity, loadConfigFile, resolveGroupSettings } from "../config/load.ts";
import { UsageError, type Io } from "./args.ts";
import { LogParseError, readLog, type LogLine, type ParsedLog } from "../replay/log.ts";
import { openLogSource, type LineSource } from "../replay/log-source.ts";
import type { ChannelConfig, GroupSettings, IdentityConfig } from "../types.ts";

/** Groups an identity takes part in (all configured groups when there is no identity). */
export function configuredGroups(config: ChannelConfig, identity: IdentityConfig | undefined): string[] {
  if (identity) return listGroupsForIdentity(config, identity);
  return Object.keys(config.groups).filter((g) => g !== "*").sort();
}

/** `--group` must name a configured group: the same error in start, replay and inspect. */
export function requireGroup(groupId: string, have: readonly string[], configFile: string | undefined): void {
  if (have.includes(groupId)) return;
  if (configFile === undefined) throw new UsageError(`\`--group ${groupId}\` picks a configured group: give \`--config FILE\` too`);
  throw new UsageError(`no group \`${groupId}\` in ${configFile} (have: ${have.join(", ") || "none"})`);
}

/** The configuration's enabled identities; none is an error, as in `start`. */
export function requireIdentities(config: ChannelConfig, configFile: string): string[] {
  const ids = Object.entries(config.identities).filter(([, i]) => i.enabled).map(([id]) => id);
  if (ids.length === 0) throw new UsageError(`${configFile}: no enabled identity under \`identities\``);
  return ids;
}

export function loadOptionalConfig(file: string | undefined): ChannelConfig | undefined {
  return file ? loadConfigFile(file) : undefined;
}

export function settingsFor(config: ChannelConfig | undefined, identity: IdentityConfig | undefined, groupId: string): GroupSettings {
  return config ? resolveGroupSettings(config, identity, groupId) : DEFAULT_GROUP_SETTINGS;
}

/**
 * A persona that never speaks in the log and is never named in it is most often a typo: say so
 * on stderr, then carry on (one that is only addressed is a fair thing to replay).
 */
export function warnSilentPersona(lines: Iterable<LogLine>, names: readonly string[], io: Io): void {
  const keys = names.map((n) => n.toLowerCase());
  for (const l of lines) if (keys.includes(l.sender.toLowerCase()) || keys.some((k) => l.content.toLowerCase().includes(k))) return;
  io.err(`acp-group: warning: \`${names[0]}\` never speaks in the log and is never named in it (check \`--persona\`)`);
}

/** Reads and parses a log a line at a time; a bad line's error names the file as well as the line. */
export function readLogFile(file: string, skipBad: boolean): ParsedLog {
  return namingFile(file, () => readLog(file, { skipBad }));
}

/** Opens a log to be walked from its file (checked whole first); errors as {@link readLogFile}'s. */
export function openLogFile(file: string, skipBad: boolean): LineSource {
  return namingFile(file, () => openLogSource(file, { skipBad }));
}

function namingFile<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof LogParseError) throw new LogParseError(err.line, err.reason, file);
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== undefined) throw new Error(`cannot read ${file}: ${code}`);
    throw err;
  }
}
