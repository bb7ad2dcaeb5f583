// While a log is walked from its file, V8's young generation has one size, YOUNG_BYTES, whatever
// size loading the program (or anything before the walk) left it at: the peak of a replay then does
// not swing with it from run to run (16 or 32 MB of young generation before this held). Each case
// runs in a plain child process (young-generation-child.ts) over a log of 60,000 lines.
import { execFileSync } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { YOUNG_BYTES } from "../../src/replay/heap-growth.ts";
import { tempDir, type TempDir } from "./helpers.ts";

const CHILD = fileURLToPath(new URL("./young-generation-child.ts", import.meta.url));
let dir: TempDir;
let log: string;
beforeAll(() => {
  dir = tempDir();
  log = join(dir.path, "log.jsonl");
  const fd = openSync(log, "w");
  const pad = "lorem ipsum dolor sit amet ".repeat(4);
  for (let i = 0; i < 60_000; i += 1000) {
    const out: string[] = [];
    for (let k = i; k < i + 1000; k++) out.push(JSON.stringify({ id: `m${k}`, ts: 1_700_000_000_000 + k * 1000, sender: `s${k % 7}`, content: `line ${k} ${pad}` }));
    writeSync(fd, `${out.join("\n")}\n`);
  }
  closeSync(fd);
});
afterAll(() => dir.remove());

function walk(mode: string): { lines: number; before: number; least: number; most: number } {
  const r = JSON.parse(execFileSync(process.execPath, [CHILD, log, mode], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } })) as { lines: number; before: number; least: number; most: number };
  console.log(`young generation (${mode}): ${JSON.stringify(r)}`);
  return r;
}

describe("the young generation while a log is walked", () => {
  it(`is ${YOUNG_BYTES / 1024 / 1024} MB when the walk starts with it grown to its largest`, () => {
    const r = walk("grown");
    expect(r.lines).toBe(60_000);
    // The case is real: the young generation was larger than that before the walk.
    expect(r.before).toBeGreaterThan(YOUNG_BYTES);
    expect(r.least).toBe(YOUNG_BYTES);
    expect(r.most).toBe(YOUNG_BYTES);
  }, 60_000);

  it(`is ${YOUNG_BYTES / 1024 / 1024} MB when the walk starts with it as loading left it`, () => {
    const r = walk("as-loaded");
    expect(r.lines).toBe(60_000);
    expect(r.least).toBe(YOUNG_BYTES);
    expect(r.most).toBe(YOUNG_BYTES);
  }, 60_000);
});
