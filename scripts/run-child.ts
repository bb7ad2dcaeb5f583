// One child process run to completion with a time limit, its output collected: shared by the
// packaging tests (npm, npx, node) and the real-host scripts (the openclaw CLI).
import { spawn } from "node:child_process";

export interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Rejects when it cannot start or outlives `timeoutMs` (then it is killed); else resolves with its exit. */
export function runChild(cmd: string, args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [...args], { ...(options.cwd ? { cwd: options.cwd } : {}), env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${cmd} ${args.join(" ")} did not finish within ${options.timeoutMs} ms\n${stdout}\n${stderr}`));
    }, options.timeoutMs);
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
