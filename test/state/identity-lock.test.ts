// One identity, one process: the lock file per identity, between real processes on this machine.
// A child process takes the lock through the module itself; this process is refused while the
// child lives, and takes the lock over once the child is killed (SIGKILL: no chance to clean up).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { acquireIdentityLock, IdentityInUseError, lockFile } from "../../src/state/identity-lock.ts";

const MODULE = resolve(import.meta.dirname, "../../src/state/identity-lock.ts");
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), "acp-lock-"));
  dirs.push(d);
  return d;
};

/** A child process that takes the lock of `aid` and holds it until killed; resolves once it holds it. */
async function holdInChild(dir: string, aid: string): Promise<ChildProcess> {
  const code = `const { acquireIdentityLock } = await import(${JSON.stringify(MODULE)}); acquireIdentityLock({ stateDir: ${JSON.stringify(dir)}, aid: ${JSON.stringify(aid)}, command: "acp-group run --config other.json" }); console.log("held"); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  await new Promise<void>((res, rej) => {
    child.stdout!.on("data", (b: Buffer) => b.toString().includes("held") && res());
    child.once("exit", (c) => rej(new Error(`child exited ${c}`)));
  });
  return child;
}

describe("identity lock", () => {
  it("a second process is refused while the first runs, naming it; after the first dies (SIGKILL) the lock is taken over", async () => {
    const dir = stateDir();
    const child = await holdInChild(dir, "Dave.acp.local");
    let refused: unknown;
    try {
      acquireIdentityLock({ stateDir: dir, aid: "dave.acp.local" });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(IdentityInUseError);
    const e = refused as IdentityInUseError;
    expect(e.code).toBe("IDENTITY_IN_USE");
    expect(e.holder).toMatchObject({ pid: child.pid, host: hostname(), command: "acp-group run --config other.json" });
    expect(e.message).toMatch(new RegExp(`^dave\\.acp\\.local is already running in another process \\(pid ${child.pid}: acp-group run --config other\\.json, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); one identity runs in one process — stop that one first \\(if it is gone, delete .*dave\\.acp\\.local\\.lock\\)$`));

    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    // The dead process's file is still there: stale, taken over.
    expect(existsSync(lockFile(dir, "dave.acp.local"))).toBe(true);
    const lock = acquireIdentityLock({ stateDir: dir, aid: "dave.acp.local" });
    expect(JSON.parse(readFileSync(lock.file, "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(statSync(lock.file).mode & 0o777).toBe(0o600);
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
  });

  it("the same process may take it again (a restart in place); the file goes with the last release; other identities are apart", () => {
    const dir = stateDir();
    const a = acquireIdentityLock({ stateDir: dir, aid: "erin.acp.local" });
    const b = acquireIdentityLock({ stateDir: dir, aid: "erin.acp.local" });
    const other = acquireIdentityLock({ stateDir: dir, aid: "frank.acp.local" });
    a.release();
    a.release(); // twice is once
    expect(existsSync(b.file)).toBe(true);
    b.release();
    expect(existsSync(b.file)).toBe(false);
    expect(existsSync(other.file)).toBe(true);
    other.release();
  });

  it("an unreadable lock file (a crash mid-write elsewhere) is stale, not a reason to refuse", () => {
    const dir = stateDir();
    acquireIdentityLock({ stateDir: dir, aid: "gina.acp.local" }).release();
    writeFileSync(lockFile(dir, "gina.acp.local"), "");
    const lock = acquireIdentityLock({ stateDir: dir, aid: "gina.acp.local" });
    expect(JSON.parse(readFileSync(lock.file, "utf8")).pid).toBe(process.pid);
    lock.release();
  });

  it("a lock held on another host is never taken over (its process cannot be checked from here)", () => {
    const dir = stateDir();
    acquireIdentityLock({ stateDir: dir, aid: "hal.acp.local" }).release();
    writeFileSync(lockFile(dir, "hal.acp.local"), JSON.stringify({ pid: 1, host: "elsewhere.example", command: "acp-group run", since: "2026-01-01T00:00:00.000Z" }));
    expect(() => acquireIdentityLock({ stateDir: dir, aid: "hal.acp.local", isAlive: () => false })).toThrow(/pid 1 on elsewhere\.example/);
  });
});
