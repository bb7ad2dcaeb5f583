// A long-running command restarts itself once at launch with V8's helper threads sized to the
// machine, and `run` and `start` with a young generation of at most 16 MB a semi-space
// (src/cli/node-args.ts), and `replay` and `inspect` with one malloc arena: which commands, which
// sizes, when the operator's own setting stands; then the real command in a child process, seen
// from inside by a preloaded module that writes down each start (pid, Node's arguments, MALLOC_ARENA_MAX).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { relaunchArgs, relaunchEnv, v8PoolSizeFor, YOUNG_SEMI_SPACE_MB } from "../../src/cli/node-args.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin", "acp-group.mjs");
const work = mkdtempSync(join(tmpdir(), "acp-node-args-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const argv = (...rest: string[]) => ["/usr/bin/node", "/opt/acp/bin/acp-group.mjs", ...rest];

describe("relaunchArgs", () => {
  it("sizes V8's pool one below the cores, 1 to Node's 4", () => {
    expect([1, 2, 3, 4, 5, 8, 64].map(v8PoolSizeFor)).toEqual([1, 1, 2, 3, 4, 4, 4]);
  });

  it("restarts run, start and server with the pool size first (run and start then the young generation's size), then Node's options, the script and its arguments", () => {
    expect(YOUNG_SEMI_SPACE_MB).toBe(16);
    expect(relaunchArgs({ command: "run", argv: argv("run", "--config", "fleet.json"), execArgv: ["--expose-gc"], nodeOptions: undefined, cores: 2 })).toEqual([
      "--v8-pool-size=1",
      "--max-semi-space-size=16",
      "--expose-gc",
      "/opt/acp/bin/acp-group.mjs",
      "run",
      "--config",
      "fleet.json",
    ]);
    expect(relaunchArgs({ command: "server", argv: argv("server", "--tls"), execArgv: [], nodeOptions: "", cores: 4 })).toEqual(["--v8-pool-size=3", "/opt/acp/bin/acp-group.mjs", "server", "--tls"]);
    expect(relaunchArgs({ command: "start", argv: argv("start"), execArgv: [], nodeOptions: undefined, cores: 3 })).toEqual(["--v8-pool-size=2", "--max-semi-space-size=16", "/opt/acp/bin/acp-group.mjs", "start"]);
    // Where the pool size is Node's default, or the operator's: the young generation's size alone.
    expect(relaunchArgs({ command: "run", argv: argv("run"), execArgv: [], nodeOptions: undefined, cores: 8 })).toEqual(["--max-semi-space-size=16", "/opt/acp/bin/acp-group.mjs", "run"]);
    expect(relaunchArgs({ command: "start", argv: argv("start"), execArgv: ["--v8-pool-size=3"], nodeOptions: undefined, cores: 2 })).toEqual(["--max-semi-space-size=16", "--v8-pool-size=3", "/opt/acp/bin/acp-group.mjs", "start"]);
  });

  it("leaves short commands, machines where the size is Node's default, and the operator's own sizes alone", () => {
    const own = "--max-semi-space-size=8";
    expect(relaunchArgs({ command: "id", argv: argv("id", "create"), execArgv: [], nodeOptions: undefined, cores: 2 })).toBeUndefined();
    expect(relaunchArgs({ command: undefined, argv: argv(), execArgv: [], nodeOptions: undefined, cores: 2 })).toBeUndefined();
    expect(relaunchArgs({ command: "server", argv: argv("server"), execArgv: [], nodeOptions: undefined, cores: 5 })).toBeUndefined();
    expect(relaunchArgs({ command: "run", argv: argv("run"), execArgv: [own], nodeOptions: undefined, cores: 5 })).toBeUndefined();
    expect(relaunchArgs({ command: "run", argv: argv("run"), execArgv: ["--v8-pool-size=3", own], nodeOptions: undefined, cores: 2 })).toBeUndefined();
    expect(relaunchArgs({ command: "run", argv: argv("run"), execArgv: ["--v8-pool-size", "3", "--semi-space-growth-factor=1"], nodeOptions: undefined, cores: 2 })).toBeUndefined();
    expect(relaunchArgs({ command: "run", argv: argv("run"), execArgv: [], nodeOptions: "--max-old-space-size=512  --v8-pool-size=2 --max-heap-size=900", cores: 2 })).toBeUndefined();
    // The young generation's size is for the commands that host identities.
    expect(relaunchArgs({ command: "server", argv: argv("server"), execArgv: [], nodeOptions: undefined, cores: 2 })).toEqual(["--v8-pool-size=1", "/opt/acp/bin/acp-group.mjs", "server"]);
    // A look-alike option is not the pool size, nor the young generation's.
    expect(relaunchArgs({ command: "run", argv: argv("run"), execArgv: ["--v8-pool-size-x=3", "--max-semi-space-sizes=1"], nodeOptions: undefined, cores: 2 })?.slice(0, 2)).toEqual(["--v8-pool-size=1", "--max-semi-space-size=16"]);
  });
});

describe("the command as launched", () => {
  /** Each start of the process as the preload saw it: pid and Node's arguments. */
  function launch(args: string[], nodeOptions = "", extraEnv: Record<string, string> = {}): { status: number | null; starts: Array<{ pid: number; execArgv: string[]; arenas: string | null }>; stdout: string; stderr: string } {
    const log = join(work, `starts-${Math.random().toString(36).slice(2)}.jsonl`);
    const preload = join(work, "preload.mjs");
    writeFileSync(preload, `import { appendFileSync } from "node:fs"; appendFileSync(${JSON.stringify(log)}, JSON.stringify({ pid: process.pid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX ?? null }) + "\\n");\n`);
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: `--import=${preload} ${nodeOptions}`.trim() };
    delete env["MALLOC_ARENA_MAX"];
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...env, ...extraEnv } });
    const starts = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { pid: number; execArgv: string[]; arenas: string | null });
    return { status: r.status, starts, stdout: r.stdout, stderr: r.stderr };
  }
  const size = v8PoolSizeFor(availableParallelism());
  const canRestart = typeof (process as { execve?: unknown }).execve === "function" && process.platform !== "win32";

  it("`run` starts once more, in the same process, with the pool sized to this machine (none where Node's default of 4 is it) and a young generation of 16 MB", () => {
    const r = launch(["run", "--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage: acp-group run");
    // Not a word about the restart (process.execve is marked experimental in Node).
    expect(r.stderr).toBe("");
    if (canRestart) {
      expect(r.starts).toHaveLength(2);
      expect(r.starts[1]!.pid).toBe(r.starts[0]!.pid);
      const expected = [...(size < 4 ? [`--v8-pool-size=${size}`] : []), "--max-semi-space-size=16"];
      expect(r.starts[1]!.execArgv.slice(0, expected.length)).toEqual(expected);
    } else {
      expect(r.starts).toHaveLength(1);
    }
  }, 60_000);

  it("a short command, or sizes the operator gave in NODE_OPTIONS, starts once", () => {
    expect(launch(["--version"]).starts).toHaveLength(1);
    const own = launch(["run", "--help"], "--v8-pool-size=2 --max-semi-space-size=8");
    expect(own.status).toBe(0);
    expect(own.starts).toHaveLength(1);
  }, 60_000);

  it("`replay` and `inspect` start once more, in the same process, with one malloc arena (glibc's), unless MALLOC_ARENA_MAX is set", () => {
    for (const command of ["replay", "inspect"]) {
      const r = launch([command, "--help"]);
      expect(r.status).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.starts[0]!.arenas).toBeNull();
      if (canRestart && process.platform === "linux") {
        expect(r.starts).toHaveLength(2);
        expect(r.starts[1]!.pid).toBe(r.starts[0]!.pid);
        expect(r.starts[1]!.arenas).toBe("1");
        // Node's arguments as they were: no V8 sizes for these commands.
        expect(r.starts[1]!.execArgv).toEqual(r.starts[0]!.execArgv);
      } else expect(r.starts).toHaveLength(1);
    }
    const own = launch(["replay", "--help"], "", { MALLOC_ARENA_MAX: "4" });
    expect(own.status).toBe(0);
    expect(own.starts.map((s) => s.arenas)).toEqual(["4"]);
    // Other commands are left as started.
    expect(launch(["id", "--help"]).starts.map((s) => s.arenas)).toEqual([null]);
  }, 60_000);
});

describe("relaunchEnv", () => {
  it("gives the log-walking commands one malloc arena on Linux, unless the operator set a number", () => {
    expect(relaunchEnv({ command: "replay", env: {}, platform: "linux" })).toEqual({ MALLOC_ARENA_MAX: "1" });
    expect(relaunchEnv({ command: "inspect", env: { PATH: "/bin" }, platform: "linux" })).toEqual({ MALLOC_ARENA_MAX: "1" });
    expect(relaunchEnv({ command: "replay", env: { MALLOC_ARENA_MAX: "8" }, platform: "linux" })).toBeUndefined();
    expect(relaunchEnv({ command: "replay", env: {}, platform: "darwin" })).toBeUndefined();
    for (const command of ["run", "start", "server", "chat", undefined]) expect(relaunchEnv({ command, env: {}, platform: "linux" })).toBeUndefined();
  });
});
