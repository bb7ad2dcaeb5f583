// Child processes for the packaging tests: npm, npx and node, run to completion with a time limit.
// `node` is the Node binary the command runs on; it goes first on PATH so that npm, npx and the
// installed `acp-group` shebang (`#!/usr/bin/env node`) all use it.
import { dirname, delimiter } from "node:path";
import { runChild, type ChildRun } from "../../scripts/run-child.ts";

export type Run = ChildRun;

export function run(params: { cmd: string; args: string[]; cwd: string; node?: string; timeoutMs: number }): Promise<Run> {
  const node = params.node ?? process.execPath;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}`,
    // Whatever vitest or an npm script set, the child decides its own colour and npm settings.
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
  return runChild(params.cmd, params.args, { cwd: params.cwd, env, timeoutMs: params.timeoutMs });
}

/** Throws with the command's output unless it exited 0. */
export function ok(what: string, r: Run): Run {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r;
}

/** The lowest major version a `>=N`, `>=N.M` or `>=N.M.P` range allows; anything else is an error. */
export function nodeFloor(range: string): number {
  const m = /^>=\s*(\d+)(?:\.\d+){0,2}$/.exec(range.trim());
  if (!m) throw new Error(`engines.node "${range}": expected a ">=N" range`);
  return Number(m[1]);
}
