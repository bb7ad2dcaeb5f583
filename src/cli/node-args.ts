// Node's own arguments for the long-running commands (`run`, `start`, `server`): V8's helper
// threads sized to the machine. Node starts four of them whatever the cores; each major garbage
// collection marks the heap on all four at once (concurrent marking), and on a 2-core machine the
// event loop then waits for a core — 50–80 ms of waiting inside the 100–140 ms stalls measured
// while a thousand identities start in one `run`. Such a command therefore restarts itself once,
// at launch, in the same process (process.execve: same pid, stdio, signals and environment), with
// `--v8-pool-size` one below the cores (1 to Node's own 4). Nothing is restarted where the size
// is Node's default anyway (5 cores or more), where the operator gave `--v8-pool-size` (on the
// command line or in NODE_OPTIONS: theirs stands), or where the platform cannot (Windows; a Node
// without process.execve): those run as started.
//
// `run` and `start`, which host identities, also get a young generation of at most
// YOUNG_SEMI_SPACE_MB per semi-space (Node's own grows to 32 MB here): each mark-compact moves
// every live young object to the old generation in its pause on the event loop, and while a
// thousand identities start most young objects live on. Measured at 1,000 identities × 5 groups on
// 2 cores: mark-compacts of 37–45 ms (up to 58) in the longest start-up stalls with Node's size,
// at most 19–26 ms with 16 MB, start-up as fast, 70 MB less RSS. Unless the operator gave a size
// of their own (`--max-semi-space-size`, `--semi-space-growth-factor`, `--max-heap-size`).
//
// `replay` and `inspect`, which walk a log a line at a time, restart with one malloc arena
// (`MALLOC_ARENA_MAX=1`, glibc's, on Linux) unless the operator set a number: glibc gives each
// thread that allocates (V8's helpers, libuv's pool) an arena of its own, which kept 9–13 MB of a
// replay's peak RSS that nothing used (a 10 MB log: 137–139 → 124–125 MB; 100 MB: 141–143 → 128 MB;
// the time the same).
import { availableParallelism } from "node:os";

/** The commands that live long and may host many identities. */
export const LONG_RUNNING_COMMANDS: ReadonlySet<string> = new Set(["run", "start", "server"]);
/** Node's own default for `--v8-pool-size`. */
export const NODE_DEFAULT_V8_POOL_SIZE = 4;
/** The commands that host identities. */
export const IDENTITY_COMMANDS: ReadonlySet<string> = new Set(["run", "start"]);
/** The largest semi-space of the young generation for those, in MB. */
export const YOUNG_SEMI_SPACE_MB = 16;

/** The commands that walk a log a line at a time. */
export const LOG_COMMANDS: ReadonlySet<string> = new Set(["replay", "inspect"]);

/** V8 helper threads for `cores` cores: one below the cores, at least 1, at most Node's default. */
export function v8PoolSizeFor(cores: number): number {
  return Math.max(1, Math.min(NODE_DEFAULT_V8_POOL_SIZE, Math.floor(cores) - 1));
}

const gives = (name: string) => (arg: string) => arg === name || arg.startsWith(`${name}=`);
const givesPoolSize = gives("--v8-pool-size");
const givesYoungSize = (arg: string) => ["--max-semi-space-size", "--semi-space-growth-factor", "--max-heap-size"].some((name) => gives(name)(arg));

/**
 * What to restart `node` with (the arguments after the executable: Node's options, the script and
 * its arguments) for `command`, or undefined to go on as started.
 */
export function relaunchArgs(p: {
  command: string | undefined;
  /** process.argv: the executable, the script, then the command's arguments. */
  argv: readonly string[];
  execArgv: readonly string[];
  nodeOptions: string | undefined;
  cores: number;
}): string[] | undefined {
  if (p.command === undefined || !LONG_RUNNING_COMMANDS.has(p.command)) return undefined;
  const given = [...p.execArgv, ...(p.nodeOptions ?? "").split(/\s+/)];
  const size = v8PoolSizeFor(p.cores);
  const add = [
    ...(given.some(givesPoolSize) || size === NODE_DEFAULT_V8_POOL_SIZE ? [] : [`--v8-pool-size=${size}`]),
    ...(IDENTITY_COMMANDS.has(p.command) && !given.some(givesYoungSize) ? [`--max-semi-space-size=${YOUNG_SEMI_SPACE_MB}`] : []),
  ];
  if (add.length === 0) return undefined;
  return [...add, ...p.execArgv, ...p.argv.slice(1)];
}

/** What to add to the environment when restarting for `command`, or undefined: nothing to add. */
export function relaunchEnv(p: { command: string | undefined; env: NodeJS.ProcessEnv; platform: NodeJS.Platform }): Record<string, string> | undefined {
  if (p.command === undefined || !LOG_COMMANDS.has(p.command) || p.platform !== "linux") return undefined;
  if (p.env["MALLOC_ARENA_MAX"] !== undefined) return undefined;
  return { MALLOC_ARENA_MAX: "1" };
}

type Execve = (file: string, args: readonly string[], env: NodeJS.ProcessEnv) => never;

/**
 * Restarts this process with {@link relaunchArgs} and {@link relaunchEnv} for `command` (default: the first argument,
 * as `acp-group <command>` has it) where it applies; returns only when it did not restart. Call
 * it first, before anything is read, written or started.
 */
export function relaunchWithNodeArgs(command: string | undefined = process.argv[2]): void {
  const args = relaunchArgs({ command, argv: process.argv, execArgv: process.execArgv, nodeOptions: process.env.NODE_OPTIONS, cores: availableParallelism() });
  const env = relaunchEnv({ command, env: process.env, platform: process.platform });
  const execve = (process as { execve?: Execve }).execve;
  if ((args === undefined && env === undefined) || typeof execve !== "function") return;
  try {
    execve.call(process, process.execPath, [process.execPath, ...(args ?? [...process.execArgv, ...process.argv.slice(1)])], { ...process.env, ...env });
  } catch {
    // Not on this platform, or refused: the command runs with Node's defaults.
  }
}
