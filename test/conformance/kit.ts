// What the conformance tests share: where the official SDK's kit is (../shared/conformance beside
// the clone, as in CI, or $ACP_CONFORMANCE_DIR), the loud note when it is not there (the test is
// then skipped and says so in its title: nothing was checked), running one of
// scripts/conformance/*.sh, and the check that nothing it started outlives it.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
export const KIT = process.env.ACP_CONFORMANCE_DIR ?? join(REPO, "..", "shared", "conformance");
/** The title of a test skipped for want of the kit. */
export const NOT_CHECKED = "SKIPPED — NOT CHECKED: the conformance kit ../shared/conformance is absent";

/** Whether every file of the kit a test needs is there; when not, says so in capitals on stderr with what was not checked. */
export function kitPresent(files: readonly string[], notChecked: readonly string[]): boolean {
  const present = files.every((f) => existsSync(join(KIT, f)));
  if (!present) {
    const lines = [`CONFORMANCE SKIPPED: the official SDK kit is not (whole) at ${KIT}.`, ...notChecked, "Put the kit at ../shared/conformance (or set ACP_CONFORMANCE_DIR) and run npm test again."];
    process.stderr.write(`\n${"=".repeat(78)}\n${lines.map((l) => `  ${l}\n`).join("")}${"=".repeat(78)}\n\n`);
  }
  return present;
}

/** Runs scripts/conformance/<script> on this checkout's Node with the kit; its exit status and all it printed. */
export function runConformanceScript(script: string): { status: number | null; stdout: string; output: string } {
  const run = spawnSync("bash", [join(REPO, "scripts/conformance", script)], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 280_000,
    env: { ...process.env, NODE: process.execPath, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ACP_CONFORMANCE_DIR: KIT },
  });
  return { status: run.status, stdout: run.stdout, output: `${run.stdout}\n${run.stderr}` };
}

/** The script named its work dir (`<prefix>: work dir DIR`, once per attempt), and no process names any of them any more, and they are gone. */
export function expectNothingLeft(output: string, prefix: string): void {
  const works = [...output.matchAll(new RegExp(`^${prefix.replace(/[.]/g, "\\.")}: work dir (\\S+) `, "gm"))].map((m) => m[1]!);
  expect(works.length, `the script names its work dir\n${output}`).toBeGreaterThan(0);
  const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  for (const work of works) {
    expect(ps.stdout.split("\n").filter((l) => l.includes(work))).toEqual([]);
    expect(existsSync(work)).toBe(false);
  }
}

/**
 * What an SDK process prints when the SDK cannot read back the key it has just written: its key
 * library (jsrsasign) writes about one EC key in seventy as an encrypted PKCS#8 it cannot decrypt
 * itself (Node's crypto reads the same file), so that SDK identity cannot sign in. A defect of the
 * witness, not of this project.
 */
export const SDK_KEY_DEFECT = "私钥解密失败";

/**
 * Runs `attempt` (a whole scenario from a fresh start) up to `tries` times while it fails and
 * `output()` shows the SDK's key defect, saying so loudly on stderr each time; `reset` undoes the
 * failed attempt first (stops its processes, removes its dirs). Any other failure, or the defect
 * on the last try, is thrown as it is.
 */
export async function retryOnSdkKeyDefect(attempt: (n: number) => Promise<void>, output: () => string, reset: () => Promise<void> | void, tries = 3): Promise<void> {
  for (let n = 1; ; n++) {
    try {
      await attempt(n);
      return;
    } catch (err) {
      if (n >= tries || !output().includes(SDK_KEY_DEFECT)) throw err;
      process.stderr.write(`\nWITNESS DEFECT (attempt ${n} of ${tries}): an SDK process could not read back the key the SDK had just written (${SDK_KEY_DEFECT}, its jsrsasign defect; not ours). Running the scenario again with fresh identities.\n\n`);
      await reset();
    }
  }
}
