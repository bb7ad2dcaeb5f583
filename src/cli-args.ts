// Option parsing shared by every command: one usage error type, strict parsing, checked numbers.
import { parseArgs, type ParseArgsConfig } from "node:util";

/** Bad usage: the CLI prints one line plus a hint and exits 2. */
export class UsageError extends Error {
  readonly code = "USAGE";
}

export function parse<T extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: "boolean" } }, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function intOption(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`expected \`--${name}\` to be an integer ≥ ${min}, got \`${value}\``);
  return n;
}

/** A comma-separated option as a list of non-empty trimmed items. */
export const list = (v: string | undefined): string[] => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : []);
