// Child of stream-memory.test.ts (run with --expose-gc): `suite DIR` runs `replay --suite DIR`,
// `html LOG PERSONA PAGE` runs `replay LOG --persona PERSONA --html PAGE`, each through the CLI's
// `main` with a progress line, and prints { baseMb, liveMb, samples }: the heap still live after a
// full GC once the modules are loaded, and the largest sampled at each progress line (the suite:
// before each log and persona; a single replay: every 5,000 lines of the replay, then of the page).
import { main } from "../../src/cli/index.ts";

const gc = (globalThis as { gc?: () => void }).gc!;
const live = () => {
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};
const [mode, ...rest] = process.argv.slice(2) as [string, ...string[]];
const args = mode === "suite" ? ["replay", "--suite", rest[0]!, "--personas", "1"] : ["replay", rest[0]!, "--persona", rest[1]!, "--html", rest[2]!];
const baseMb = live();
let liveMb = baseMb;
let samples = 0;
const code = await main(args, {
  out: () => {},
  err: (s) => process.stderr.write(`${s}\n`),
  progress: (line) => {
    if (line === "") return;
    samples++;
    liveMb = Math.max(liveMb, live());
  },
});
const round = (x: number) => Math.round(x * 10) / 10;
process.stdout.write(JSON.stringify({ code, baseMb: round(baseMb), liveMb: round(liveMb), samples }));
