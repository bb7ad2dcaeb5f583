// Option parsing shared by every command: one usage error type, strict parsing, checked numbers,
// and the command table the help is printed from.
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { LogLevel } from "../types.ts";

/** Bad usage: the CLI prints one line plus a hint (`run 'acp-group <command> --help'`) and exits 2. */
export class UsageError extends Error {
  readonly code = "USAGE";
}

/** A command that cannot go on, for a reason its message says in full: printed as it is, exit 1. */
export class CommandError extends Error {}

export type Io = {
  out: (s: string) => void;
  /** Writes a piece of a long output without ending the line (absent: the command builds the line for `out`). */
  write?: (s: string) => void;
  err: (s: string) => void;
  /** Replaces the previous status line ("" clears it); only present when stderr is a terminal. */
  progress?: (line: string) => void;
};

/**
 * One command of `acp-group`. The general help lists `usage` under the command's name;
 * `acp-group <name> --help` prints `usage` and `help`. Commands are added by adding a row.
 */
export interface CommandSpec {
  name: string;
  /** One line: what the command does. */
  summary: string;
  /** Every option, wrapped by hand at ~100 columns, without the leading `acp-group <name>`. */
  usage: string;
  /** The longer description printed by `<name> --help`. */
  help: string;
  run(args: string[], io: Io): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Node's parser refuses `--duration-ms -5` as "ambiguous"; a value starting with `-` that is not
 * itself one of the command's options (`-5`, `-hi`) is joined to its string option
 * (`--duration-ms=-5`), so the command's own check answers with its message.
 */
function joinDashValues(args: readonly string[], options: Options): string[] {
  const isOption = (a: string) => a === "--" || a === "-h" || /^--([^=]+)/.exec(a)?.[1] === "help" || (/^--([^=]+)/.exec(a)?.[1] ?? "") in options;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    const name = a.startsWith("--") && !a.includes("=") ? a.slice(2) : undefined;
    if (name && options[name]?.type === "string" && next !== undefined && next !== "--" && isOption(next)) {
      throw new UsageError(`expected a value after \`--${name}\`, got the option \`${next}\``);
    }
    if (name && options[name]?.type === "string" && next !== undefined && next.startsWith("-") && !isOption(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else {
      out.push(a);
    }
  }
  return out;
}

export function parse<T extends Options>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: joinDashValues(args, options), options: { ...options, help: { type: "boolean" } }, allowPositionals, strict: true });
  } catch (err) {
    // Node's messages run over several lines with advice about `--`; the first line says it.
    throw new UsageError((err as Error).message.split("\n")[0]!);
  }
}

export function intOption(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < min) throw new UsageError(`expected \`--${name}\` to be an integer ≥ ${min}, got \`${value}\``);
  return n;
}

/** `--log-level`: debug, info, warn (the default) or error. */
export function logLevelOption(value: string | undefined): LogLevel {
  const level = (value ?? "warn") as LogLevel;
  if (!["debug", "info", "warn", "error"].includes(level)) throw new UsageError(`expected \`--log-level\` to be debug, info, warn or error, got \`${level}\``);
  return level;
}

/** A comma-separated option as a list of non-empty trimmed items. */
export const list = (v: string | undefined): string[] => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : []);

/** The general help: every command with every option. */
export function renderUsage(commands: readonly CommandSpec[]): string {
  // One column for the names, as wide as the longest (a usage line sits under its summary).
  const width = Math.max(...commands.map((c) => c.name.length));
  const rows = commands.map((c) => {
    const usage = c.usage.split("\n").map((l) => `${" ".repeat(width + 3)}${l}`).join("\n");
    return `  ${c.name.padEnd(width)} ${c.summary}\n${usage}`;
  });
  return `Usage: acp-group <command> [options]\n\nCommands:\n${rows.join("\n")}\n\nRun 'acp-group <command> --help' for details.`;
}

export function renderCommandHelp(c: CommandSpec): string {
  const usage = c.usage.split("\n").map((l, i) => (i === 0 ? `Usage: acp-group ${c.name} ${l}` : `       ${" ".repeat(c.name.length + 11)}${l.trimStart()}`));
  return `${usage.join("\n")}\n\n${c.summary}\n\n${c.help}`;
}
