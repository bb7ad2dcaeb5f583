// The OpenClaw user config as the command line reads it: `--openclaw-config FILE`, else
// OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json (JSON5, as OpenClaw writes it). Only read.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import JSON5 from "json5";
import { evolAccounts, evolRunning, findEvolSection } from "../config/evol-config.ts";
import { CommandError } from "./args.ts";

export function openClawConfigPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return env.OPENCLAW_CONFIG_PATH || join(home, ".openclaw", "openclaw.json");
}

/** The parsed config; undefined when the file is not there. A file that does not parse is an error naming it. */
export function readOpenClawConfig(file: string): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return JSON5.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new CommandError(`${file}: not a readable OpenClaw config (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** `~/x` → `<home>/x`, as evol's paths are written. */
export const expandHome = (path: string, home: string = homedir()): string => (path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path);

/**
 * Refuses to run an identity that the evol channel runs too, by the OpenClaw config of this
 * machine: one identity in two channels answers every line twice and the two fight over its
 * sessions. Says which identity, where, and the command that turns evol off.
 */
export function refuseIfEvolRuns(aids: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  const file = openClawConfigPath(env);
  let config: unknown;
  try {
    config = readOpenClawConfig(file);
  } catch {
    return; // a config OpenClaw itself could not read runs nothing
  }
  if (!evolRunning(config)) return;
  const found = findEvolSection(config)!;
  const ours = new Set(aids.map((a) => a.toLowerCase()));
  const both = evolAccounts(found.section).filter((a) => ours.has(a.aid.toLowerCase()));
  if (both.length === 0) return;
  throw new CommandError(
    `${both.map((a) => a.aid).join(", ")} also run${both.length === 1 ? "s" : ""} in the evol channel (${found.source} is enabled in ${file}): one identity must not run in two channels at once. ` +
      `Turn evol off first: \`openclaw config set ${found.source}.enabled false\` (and restart the gateway)`,
  );
}
