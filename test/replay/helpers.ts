// Shared by the replay/inspect/CLI tests: run `main` with captured output, write logs to a temp dir.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/index.ts";

/** 2026-01-05 14:30:00 UTC — the log's server clock. */
export const T0 = Date.UTC(2026, 0, 5, 14, 30, 0);

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function runCli(argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A stack frame as Node prints it ("    at fn (file:1:2)"). */
export const STACK_FRAME = /^\s+at .+[:(]/m;

export interface TempDir {
  path: string;
  /** Writes `lines` (objects become JSON, strings are written as they are) one per line. */
  jsonl(name: string, lines: ReadonlyArray<object | string>): string;
  json(name: string, value: unknown): string;
  text(name: string, text: string): string;
  remove(): void;
}

export function tempDir(): TempDir {
  const path = mkdtempSync(join(tmpdir(), "acp-replay-test-"));
  const text = (name: string, body: string) => {
    const file = join(path, name);
    writeFileSync(file, body);
    return file;
  };
  return {
    path,
    text,
    jsonl: (name, lines) => text(name, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n"),
    json: (name, value) => text(name, JSON.stringify(value)),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

export function line(id: string, ts: number, sender: string, content: string): { id: string; ts: number; sender: string; content: string } {
  return { id, ts, sender, content };
}
