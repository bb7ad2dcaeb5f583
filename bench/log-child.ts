// One measurement of `npm run bench -- logs`, in a process of its own so its peak memory is the
// reading's: `node bench/log-child.ts stream|whole FILE` reads the log as `replay` does now
// (readLog: a line at a time) or as it did before (the whole file, then parseLog), and prints
// { lines, error, baseMb, peakMb, keptMb } as JSON. Peak is the process's maximum RSS; kept is the
// heap still used by the parsed log after a collection.
import { readFileSync } from "node:fs";
import { parseLog, readLog } from "../src/replay/log.ts";

const [mode, file] = process.argv.slice(2) as ["stream" | "whole", string];
const baseMb = process.memoryUsage().rss / 1024 / 1024;
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const baseHeapMb = process.memoryUsage().heapUsed / 1024 / 1024;
let lines = 0;
let error: string | undefined;
let kept: unknown;
try {
  kept = mode === "stream" ? readLog(file) : parseLog(readFileSync(file, "utf8"));
  lines = (kept as { lines: unknown[] }).lines.length;
} catch (err) {
  error = err instanceof Error ? err.message : String(err);
}
const peakMb = process.resourceUsage().maxRSS / 1024;
gc?.();
// What the replay goes on holding: the parsed log, measured after a collection.
const keptMb = process.memoryUsage().heapUsed / 1024 / 1024 - baseHeapMb;
console.log(JSON.stringify({ lines, error, baseMb, peakMb, keptMb, held: kept !== undefined }));
