// The memory tests' children: a test file runs its child (a script beside it that measures what
// is live after a full GC and prints JSON) in a process of its own with --expose-gc, its temp
// files in a folder the test makes and removes. Registers the folder's hooks: call at the top of
// a test file.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";

export interface MemoryChild<R> {
  /** Runs the child with `args` and returns what it printed (logged under `label`). */
  run(...args: Array<string | number>): R;
  /** The temp folder given to the child as TMPDIR (valid inside the tests). */
  readonly tmp: string;
}

export function memoryChild<R>(child: URL, label: string): MemoryChild<R> {
  const script = fileURLToPath(child);
  let tmp: string | undefined;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), "acp-memory-test-"));
  });
  afterAll(() => {
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });
  return {
    run(...args) {
      const out = execFileSync(process.execPath, ["--expose-gc", script, ...args.map(String)], { encoding: "utf8", env: { ...process.env, TMPDIR: tmp! } });
      const r = JSON.parse(out) as R;
      console.log(`${label} ${args.join(" ")}: ${JSON.stringify(r)}`);
      return r;
    },
    get tmp() {
      return tmp!;
    },
  };
}
