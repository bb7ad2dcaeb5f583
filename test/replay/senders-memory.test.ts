// A replay's memory per distinct sender: a log where every line has a sender of its own (issue 30,
// point 6). Each size runs in a child (senders-heap-child.ts, --expose-gc). The log's senders are
// the source's (log-source.ts keeps them); the replay should add no more than one table of them —
// with a copy per reader (the group client's people, the look-alike names' tables), 30,000 more
// senders kept about 11 MB more live; with one, about 3 MB.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir, type TempDir } from "./helpers.ts";

const CHILD = fileURLToPath(new URL("./senders-heap-child.ts", import.meta.url));
/** What 30,000 more distinct senders may add to what the replay holds live (heap and typed arrays). */
const MAX_GROWTH_MB = 5;

let dir: TempDir;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.remove());

function child(senders: number): { baseMb: number; liveMb: number } {
  const r = JSON.parse(execFileSync(process.execPath, ["--expose-gc", CHILD, String(senders)], { encoding: "utf8", env: { ...process.env, TMPDIR: dir.path } })) as { baseMb: number; liveMb: number };
  console.log(`distinct senders ${senders}: ${JSON.stringify(r)}`);
  return r;
}

describe("a replay's memory per distinct sender", () => {
  it(`40,000 lines from 40,000 senders keep at most ${MAX_GROWTH_MB} MB more live than 10,000 from 10,000 (beyond the source's list)`, () => {
    const small = child(10_000);
    const large = child(40_000);
    expect(large.liveMb - large.baseMb - (small.liveMb - small.baseMb)).toBeLessThanOrEqual(MAX_GROWTH_MB);
  }, 120_000);
});
