// Child of senders-memory.test.ts (run with --expose-gc): replays (silent, one persona) a log of
// N lines, each from a sender of its own, made line by line as each walk asks for it, and prints
// { baseMb, liveMb }: the heap and typed arrays still live after a full GC once the names exist
// (the child's own), and the largest every 5,000 lines of the walks.
import { replayLog } from "../../src/replay/replay.ts";
import type { LogLine } from "../../src/replay/log.ts";
import type { LineSource } from "../../src/replay/log-source.ts";
import { settingsWith } from "../monitor/helpers.ts";
import { liveMb as live } from "../support/live-memory.ts";

const n = Number(process.argv[2]);
const FIRST_TS = 1_767_600_000_000;
const senders = Array.from({ length: n }, (_, i) => `u${i}`);
let liveMb = 0;
function* lines(): Generator<LogLine> {
  for (let i = 0; i < n; i++) {
    yield { id: `g${i}`, ts: FIRST_TS + i * 1000, sender: senders[i]!, content: `has anyone seen the build ${i % 50} fail today`, line: i + 1, directedTo: [] };
    if (i % 5000 === 4999) liveMb = Math.max(liveMb, live());
  }
}
const source: LineSource = { count: n, firstTs: FIRST_TS, skipped: [], skippedCount: 0, inMemory: false, lines, close: () => {} };
const baseMb = live();
await replayLog(source, { persona: "ubottu", settings: settingsWith({}) });
liveMb = Math.max(liveMb, live());
const round = (x: number) => Math.round(x * 10) / 10;
process.stdout.write(JSON.stringify({ baseMb: round(baseMb), liveMb: round(liveMb) }));
