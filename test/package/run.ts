// Child processes for the packaging tests: npm, npx and node, run to completion with a time limit.
// `node` is the Node binary the command runs on; it goes first on PATH so that npm, npx and the
// installed `acp-group` shebang (`#!/usr/bin/env node`) all use it.
import { spawn } from "node:child_process";
import { dirname, delimiter } from "node:path";

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

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
  return new Promise((resolve, reject) => {
    const child = spawn(params.cmd, params.args, { cwd: params.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${params.cmd} ${params.args.join(" ")} did not finish within ${params.timeoutMs} ms\n${stdout}\n${stderr}`));
    }, params.timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
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
