// The index of every structured log event in src/ for docs/operations.md: its name, the levels it
// is logged at and the modules that log it, read from the `.log(level, "name"` calls (the same scan
// as test/log-events.test.ts). The page's hand-written table explains the events operators watch.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src", import.meta.url));
// `.log("warn", "name"`, `.log(level, "name"`, `.log(cond ? "info" : "warn", "name"`, and a name built as `"prefix-" + reason`.
const CALL = /\.log\(\s*("(?:debug|info|warn|error)"|[A-Za-z_.]+|[^,()]*\?[^,()]*:[^,()]*),\s*"([^"]+)"(\s*\+)?/g;
const LEVELS = ["debug", "info", "warn", "error"];

export interface LogEvent {
  name: string;
  /** Levels named in the calls, in severity order; "varies" when a call passes a variable. */
  levels: string[];
  files: string[];
}

export function logEvents(): LogEvent[] {
  const byName = new Map<string, { levels: Set<string>; files: Set<string> }>();
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
  for (const file of files.sort()) {
    const text = readFileSync(join(SRC, file), "utf8");
    for (const m of text.matchAll(CALL)) {
      const name = m[3] ? `${m[2]}*` : m[2]!;
      const entry = byName.get(name) ?? { levels: new Set(), files: new Set() };
      const named = [...m[1]!.matchAll(/"(debug|info|warn|error)"/g)].map((l) => l[1]!);
      for (const l of named.length > 0 ? named : ["varies"]) entry.levels.add(l);
      entry.files.add(file.split("\\").join("/"));
      byName.set(name, entry);
    }
  }
  return [...byName.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, e]) => ({ name, levels: [...e.levels].sort((a, b) => LEVELS.indexOf(a) - LEVELS.indexOf(b)), files: [...e.files] }));
}

export function renderLogEventIndex(): string {
  const rows = logEvents().map((e) => `| \`${e.name}\` | ${e.levels.join(", ")} | ${e.files.map((f) => `\`${f}\``).join(", ")} |`);
  return ["| event | level | logged in (`src/`) |", "| --- | --- | --- |", ...rows].join("\n");
}
