// Child of log-source.test.ts (run with --expose-gc): opens the log given as a source (with
// `skipBad` when the second argument is `--skip-bad`), walks it once, and prints { lines, inOrder, liveMb } — the largest heap still live after a full GC,
// sampled after opening and every 20,000 lines of the walk.
import { openLogSource } from "../../src/replay/log-source.ts";

const gc = (globalThis as { gc?: () => void }).gc!;
let liveMb = 0;
const sample = () => {
  gc();
  liveMb = Math.max(liveMb, process.memoryUsage().heapUsed / 1024 / 1024);
};
const src = openLogSource(process.argv[2]!, { skipBad: process.argv[3] === "--skip-bad" });
sample();
let lines = 0;
let last = -Infinity;
let inOrder = true;
for (const l of src.lines()) {
  if (l.ts < last) inOrder = false;
  last = l.ts;
  if (++lines % 20_000 === 0) sample();
}
sample();
(src as { close?: () => void }).close?.();
process.stdout.write(JSON.stringify({ lines, inOrder, liveMb: Math.round(liveMb * 10) / 10 }));
