// A temp folder of the test's own as the system's temp folder (TMPDIR, which os.tmpdir() reads on
// every call) for each test of a file: a check on what a test leaves behind in the temp folder then
// sees only that test's folders, not those another test file or process makes meanwhile (test files
// run in parallel, and a replay on the same machine makes `acp-replay-…` folders of its own).
import { readdirSync } from "node:fs";
import { afterEach, beforeEach } from "vitest";
import { tempDir } from "./runtime-harness.ts";

/** Sets TMPDIR around each test; returns the names the current test's temp folder holds that start with `prefix`. */
export function usePrivateTmpdir(name: string): (prefix: string) => Set<string> {
  let tmp: { dir: string; remove(): void } | undefined;
  let saved: string | undefined;
  beforeEach(() => {
    tmp = tempDir(name);
    saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp.dir;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    tmp?.remove();
    tmp = undefined;
  });
  return (prefix) => {
    if (tmp === undefined) throw new Error("usePrivateTmpdir: called outside a test");
    return new Set(readdirSync(tmp.dir).filter((f) => f.startsWith(prefix)));
  };
}
