// Generated blocks of README.md and docs/*.md. A block sits between two markers:
//   <!-- BEGIN GENERATED: <name> (npm run docs) -->
//   …
//   <!-- END GENERATED: <name> -->
// and its text is what the generator of that name prints today. Deterministic blocks (the config
// reference, the CLI's help, replay output of the bundled logs, the log-event index) are checked by
// test/docs/generated.test.ts; live blocks (a demo transcript, the local network's banner: ports,
// times and invite codes differ on every run) are rewritten by `npm run docs` only.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderCommandHelp, renderUsage, type Io } from "../../src/cli/args.ts";
import { COMMANDS, main } from "../../src/cli/index.ts";
import { renderConfigReference } from "./config-reference.ts";
import { renderLogEventIndex } from "./log-events.ts";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** The files that may hold generated blocks: README.md and every page of docs/. */
export function docFiles(): string[] {
  const pages = readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...pages];
}

const BLOCK = /<!-- BEGIN GENERATED: ([a-z0-9:-]+) \(npm run docs\) -->\n([\s\S]*?)<!-- END GENERATED: \1 -->/g;

export interface Block {
  file: string;
  name: string;
  /** The text between the markers, as committed. */
  text: string;
}

export function blocksOf(file: string, content = readFileSync(join(REPO, file), "utf8")): Block[] {
  return [...content.matchAll(BLOCK)].map((m) => ({ file, name: m[1]!, text: m[2]! }));
}

/** Replaces the text of every block `render` answers for (undefined leaves a block as it is). */
export async function rewrite(content: string, render: (name: string) => Promise<string | undefined>): Promise<string> {
  const parts: string[] = [];
  let last = 0;
  for (const m of content.matchAll(BLOCK)) {
    const next = await render(m[1]!);
    parts.push(content.slice(last, m.index), next === undefined ? m[0] : `<!-- BEGIN GENERATED: ${m[1]} (npm run docs) -->\n${next}<!-- END GENERATED: ${m[1]} -->`);
    last = m.index + m[0].length;
  }
  parts.push(content.slice(last));
  return parts.join("");
}

/** What `acp-group <argv>` prints on stdout, run in this process (replays are on a simulated clock). */
export async function cli(argv: string[]): Promise<string> {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s) };
  const code = await main(argv, io);
  if (code !== 0) throw new Error(`acp-group ${argv.join(" ")} exited ${code}: ${err.join("\n")}`);
  return out.join("\n");
}

const fence = (text: string, lang = "text") => `\`\`\`${lang}\n${text.trimEnd()}\n\`\`\`\n`;
/** A command and what it printed, as a reader would see it in a terminal. */
const session = (argv: string[], output: string) => fence(`$ npx acp-group ${argv.map(quote).join(" ")}\n${output}`);
const quote = (a: string) => (/^[\w./:=,@-]+$/.test(a) ? a : `"${a}"`);

const UBUNTU = "test/fixtures/irc-dev/ubuntu-2010-08-17.jsonl";

/** The lines of a replay's text report from the totals on (the dispatch list above them is long). */
function totals(report: string): string {
  const lines = report.split("\n");
  const at = lines.findIndex((l) => /^\d+ messages, /.test(l));
  if (at < 0) throw new Error("replay: no totals line in the text report");
  return lines.slice(at).join("\n");
}

/** A sample of a replay's dispatch lines: the first of each trigger and outcome, in order. */
function sampleDispatches(report: string, n: number): string {
  const seen = new Set<string>();
  const picked: string[] = [];
  for (const line of report.split("\n")) {
    const m = /dispatch (\w+)\s.*→ (sent|skipped \(([\w-]+)\))/.exec(line);
    if (!m) continue;
    const kind = `${m[1]} ${m[3] ?? m[2]}`;
    if (seen.has(kind)) continue;
    seen.add(kind);
    picked.push(line.length > 160 ? `${line.slice(0, 157)}...` : line);
    if (picked.length >= n) break;
  }
  return picked.join("\n");
}

/**
 * Deterministic generators: the same text on every machine and every run, so a test can hold the
 * committed blocks to them. Names with a `:` take what follows as their argument.
 */
export const DETERMINISTIC: Record<string, (arg: string) => Promise<string>> = {
  "config-reference": async () => `${renderConfigReference()}\n`,
  "cli-usage": async () => fence(renderUsage(COMMANDS)),
  "cli-help": async (name) => {
    const spec = COMMANDS.find((c) => c.name === name);
    if (!spec) throw new Error(`cli-help:${name}: no such command`);
    // The help names the default config by its absolute path; the page shows it from the package root (same on every machine).
    return fence(renderCommandHelp(spec).split(REPO).join(""));
  },
  "replay-example": async () => {
    const argv = ["replay", UBUNTU, "--persona", "jacob_", "--alias", "jacob", "--responder", "mention"];
    const report = await cli(argv);
    return session(argv, `${sampleDispatches(report, 6)}\n…\n\n${totals(report)}`);
  },
  "replay-json": async () => {
    const argv = ["replay", UBUNTU, "--persona", "jacob_", "--alias", "jacob", "--responder", "mention", "--json"];
    const report = JSON.parse(await cli(argv)) as Record<string, unknown> & { messages: Array<{ why: unknown }>; dispatches: Array<{ trigger: string }>; drops: unknown[] };
    // One element of each list (a line that carries a reason, a mention dispatch), every field as the command prints it.
    const sample: Record<string, unknown> = {
      ...report,
      messages: report.messages.filter((m) => m.why !== null).slice(0, 1),
      dispatches: report.dispatches.filter((d) => d.trigger === "mention").slice(0, 1),
      drops: report.drops.slice(0, 1),
      ...(Array.isArray(report.payers) ? { payers: report.payers.slice(0, 2) } : {}),
    };
    const lines = Object.entries(sample).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    return fence(`$ npx acp-group ${argv.join(" ")}   # one element of each list shown\n{\n${lines.join(",\n")}\n}`);
  },
  "replay-room": async () => {
    const argv = ["replay", UBUNTU, "--persona", "ann", "--persona", "ben", "--persona", "cat", "--responder", "helpful"];
    const report = await cli(argv);
    return session(argv, `…\n${report.slice(report.indexOf("room: ")).trimEnd()}`);
  },
  "replay-suite": async () => {
    const argv = ["replay", "--suite", "test/fixtures/irc-dev"];
    return session(argv, await cli(argv));
  },
  "log-events": async () => `${renderLogEventIndex()}\n`,
};

const parseName = (block: string) => block.split(/:(.*)/s) as [string, string?];

/** Whether a block (`name` or `name:arg`) has a deterministic generator. */
export const isDeterministic = (block: string): boolean => parseName(block)[0] in DETERMINISTIC;

/** Runs the block's deterministic generator; undefined when the block is not one. */
export async function renderDeterministic(block: string): Promise<string | undefined> {
  const [name, arg = ""] = parseName(block);
  const gen = DETERMINISTIC[name];
  return gen ? gen(arg) : undefined;
}
