// The asynchronous atomic write: many files of one folder written at once (their directory
// fsyncs shared) all land whole, and no temp file is left. Real files.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/state/atomic-file.ts";

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "acp-atomic-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("100 files of one folder written at once, then each rewritten: every file holds its last content", async () => {
    const sub = join(dir, "alice");
    await Promise.all(Array.from({ length: 100 }, (_, i) => writeFileAtomic(join(sub, `g${i}.json`), JSON.stringify({ i, v: 1 }))));
    await Promise.all(Array.from({ length: 100 }, (_, i) => writeFileAtomic(join(sub, `g${i}.json`), JSON.stringify({ i, v: 2 }))));
    const files = readdirSync(sub).sort();
    expect(files).toHaveLength(100);
    expect(files.filter((f) => f.includes(".tmp-"))).toEqual([]);
    for (let i = 0; i < 100; i++) expect(JSON.parse(readFileSync(join(sub, `g${i}.json`), "utf8"))).toEqual({ i, v: 2 });
  });

  it("makes the folder again when it was removed after the first write", async () => {
    const sub = join(dir, "bob");
    await writeFileAtomic(join(sub, "g.json"), "1");
    rmSync(sub, { recursive: true });
    await writeFileAtomic(join(sub, "g.json"), "2");
    expect(readFileSync(join(sub, "g.json"), "utf8")).toBe("2");
  });
});
