// Every command README.md and docs/*.md tell a reader to run names what exists: each
// `acp-group <command>` (as `npx acp-group`, `npm run acp-group --`, `node bin/acp-group.mjs`) is a
// row of the CLI's command table and each `--option` it passes is in that command's help; each
// `npm start -- …` option is one of `start`'s; each `npm run <script>` is a script of package.json
// and each `npm run bench -- <name>` a benchmark. Read from the `sh` code blocks and from inline
// code that starts like a command. (The commands themselves were run by hand; this test keeps the
// pages from naming what the code no longer has.)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderCommandHelp } from "../../src/cli/args.ts";
import { COMMANDS } from "../../src/cli/index.ts";
import { docFiles, REPO } from "../../scripts/docs/blocks.ts";

const read = (file: string) => readFileSync(join(REPO, file), "utf8");

interface Command {
  file: string;
  line: string;
  words: string[];
}

/** Splits a shell line into words: quotes kept together, `#` comments and `&&` chains split off. */
function shellWords(line: string): string[][] {
  const words: string[] = [];
  const chains: string[][] = [words];
  let current = words;
  for (const m of line.matchAll(/"[^"]*"|'[^']*'|(\S+)/g)) {
    const w = m[0];
    if (w.startsWith("#")) break;
    if (w === "&&" || w === "|" || w === ";") {
      current = [];
      chains.push(current);
      continue;
    }
    current.push(w.replace(/^["']|["']$/g, ""));
  }
  return chains.filter((c) => c.length > 0);
}

/** Every command line of a page: `sh` blocks (continuation lines joined) and inline code that starts like a command. */
function commandsOf(file: string): Command[] {
  const text = read(file);
  const out: Command[] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.replace(/\\\n\s*/g, " ").split("\n")) {
      for (const words of shellWords(line)) out.push({ file, line, words });
    }
  }
  const prose = text.replace(/```[\s\S]*?```/g, "");
  for (const m of prose.matchAll(/`((?:npx )?acp-group [^`]+|npm run [^`]+|npm start -- [^`]+)`/g)) {
    for (const words of shellWords(m[1]!)) out.push({ file, line: m[1]!, words });
  }
  return out;
}

/** The `acp-group` command and its arguments, when the words run it. */
function acpGroupArgs(words: readonly string[]): string[] | undefined {
  const w = words[0] === "npx" ? words.slice(1) : words;
  if (w[0] === "acp-group") return w.slice(1);
  if (w[0] === "node" && w[1] === "bin/acp-group.mjs") return w.slice(2);
  if (w[0] === "npm" && w[1] === "run" && w[2] === "acp-group" && w[3] === "--") return w.slice(4);
  if (w[0] === "npm" && w[1] === "start" && w[2] === "--") return ["start", ...w.slice(3)];
  return undefined;
}

const options = (args: readonly string[]) => args.filter((a) => /^--[a-z]/.test(a)).map((a) => a.replace(/=.*$/, ""));

describe("commands in README.md and docs/", () => {
  const commands = docFiles().flatMap(commandsOf);
  const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
  const benches = [...read("bench/run.ts").matchAll(/want\("([a-z-]+)"\)/g)].map((m) => m[1]!);

  it("are found (the scan is not vacuous)", () => {
    expect(commands.filter((c) => acpGroupArgs(c.words)).length).toBeGreaterThan(20);
    expect(commands.filter((c) => c.file === "README.md" && acpGroupArgs(c.words)).length).toBeGreaterThan(5);
  });

  it("every `acp-group <command>` is a command of the CLI, with options its help names", () => {
    const problems: string[] = [];
    for (const c of commands) {
      const args = acpGroupArgs(c.words);
      if (!args) continue;
      const [name, ...rest] = args;
      if (name === "--help" || name === "--version" || name === "help") continue;
      // A placeholder such as `<command>` stands for any of them.
      if (name === undefined || name.startsWith("<")) continue;
      const spec = COMMANDS.find((s) => s.name === name);
      if (!spec) {
        problems.push(`${c.file}: \`${c.line}\`: no command \`${name}\``);
        continue;
      }
      const help = renderCommandHelp(spec);
      for (const o of options(rest)) {
        if (o !== "--help" && o !== "--debug" && !new RegExp(`${o}(?![a-z-])`).test(help)) problems.push(`${c.file}: \`${c.line}\`: \`${name}\` has no option ${o}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("every `npm run <script>` is a script of package.json, every `npm run bench -- <name>` a benchmark", () => {
    const problems: string[] = [];
    for (const c of commands) {
      const [npm, run, script, dashes, ...rest] = c.words;
      if (npm !== "npm" || run !== "run" || script === undefined) continue;
      if (!(script in scripts)) problems.push(`${c.file}: \`${c.line}\`: no script \`${script}\``);
      if (script === "bench" && dashes === "--") {
        // The benchmark names come first; after the first option come a benchmark's own options and their values (`fleet --n 100`).
        const firstOption = rest.findIndex((r) => r.startsWith("-"));
        const names = firstOption < 0 ? rest : rest.slice(0, firstOption);
        for (const b of names) for (const name of b.split("|")) if (!benches.includes(name)) problems.push(`${c.file}: \`${c.line}\`: no benchmark \`${name}\``);
      }
      if (script === "docs" && dashes === "--") for (const o of rest) if (o !== "--check") problems.push(`${c.file}: \`${c.line}\`: npm run docs takes only --check`);
    }
    expect(benches.length).toBeGreaterThan(5);
    expect(problems).toEqual([]);
  });
});
