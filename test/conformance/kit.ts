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

/** The script named its work dir (`<prefix>: work dir DIR`), and no process names it any more, and it is gone. */
export function expectNothingLeft(output: string, prefix: string): void {
  const work = new RegExp(`^${prefix.replace(/[.]/g, "\\.")}: work dir (\\S+) `, "m").exec(output)?.[1];
  expect(work, `the script names its work dir\n${output}`).toBeDefined();
  const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  expect(ps.stdout.split("\n").filter((l) => l.includes(work!))).toEqual([]);
  expect(existsSync(work!)).toBe(false);
}
