// `replay --suite` and `replay --html` walk the log from its file: what they hold live does not
// grow with the log. Each runs in a child process (stream-heap-child.ts, --expose-gc) over a
// 12 MB log of the bundled lines (52,000 lines, annotated), sampling the live heap after a full GC
// at each progress line. The replay's own state (windows, counters, compiled code) warms up by
// about 5 MB whatever the log's length; held whole, the parsed lines alone add about 17 MB (the
// suite) and 25 MB (the page: the lines and the page's text), as they did before both streamed.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir, type TempDir } from "./helpers.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/irc-dev/", import.meta.url));
const CHILD = fileURLToPath(new URL("./stream-heap-child.ts", import.meta.url));
const LOG_BYTES = 12 * 1024 * 1024;
/** What the live heap may grow past the loaded modules' while a 12 MB log is replayed. */
const MAX_GROWTH_MB = 8;

let dir: TempDir;
let log: string;
beforeAll(() => {
  dir = tempDir();
  // The bundled lines in turn, each with a fresh id and a time a second after the last.
  const source = readdirSync(FIXTURES)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .flatMap((f) => readFileSync(join(FIXTURES, f), "utf8").split("\n").filter((l) => l.trim() !== ""))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const out: string[] = [];
  for (let n = 0, bytes = 0; bytes < LOG_BYTES; n++) {
    const text = JSON.stringify({ ...source[n % source.length]!, id: `g${n}`, ts: 1_767_600_000_000 + n * 1000 });
    out.push(text);
    bytes += text.length + 1;
  }
  log = join(dir.path, "big.jsonl");
  writeFileSync(log, `${out.join("\n")}\n`);
});
afterAll(() => dir.remove());

function child(args: string[]): { code: number; baseMb: number; liveMb: number; samples: number } {
  const r = JSON.parse(execFileSync(process.execPath, ["--expose-gc", CHILD, ...args], { encoding: "utf8", env: { ...process.env, TMPDIR: dir.path } })) as { code: number; baseMb: number; liveMb: number; samples: number };
  console.log(`stream memory ${args[0]}: ${JSON.stringify(r)}`);
  return r;
}

describe("replay memory does not grow with the log", () => {
  it("--suite: the live heap grows by less than 8 MB over a 12 MB log (the lines are walked, not held)", () => {
    expect(statSync(log).size).toBeGreaterThanOrEqual(LOG_BYTES);
    const r = child(["suite", dir.path]);
    expect(r.code).toBe(0);
    expect(r.samples).toBeGreaterThan(0);
    expect(r.liveMb - r.baseMb).toBeLessThan(MAX_GROWTH_MB);
    // Nothing left behind in the temp folder but the log.
    expect(readdirSync(dir.path).sort()).toEqual(["big.jsonl"]);
  }, 120_000);

  it("--html: the live heap grows by less than 8 MB through the replay and the page (the page is written, not held)", () => {
    const page = join(dir.path, "page.html");
    const r = child(["html", log, "ubottu", page]);
    expect(r.code).toBe(0);
    expect(r.liveMb - r.baseMb).toBeLessThan(MAX_GROWTH_MB);
    // Progress every 5,000 lines: the replay's 52,000, then the page's.
    expect(r.samples).toBeGreaterThanOrEqual(20);
    // The page shows every line: it is larger than what was held.
    expect(statSync(page).size).toBeGreaterThan(LOG_BYTES / 2);
    expect(readFileSync(page, "utf8")).toMatch(/<\/html>\n$/);
    expect(readdirSync(dir.path).sort()).toEqual(["big.jsonl", "page.html"]);
  }, 120_000);
});
