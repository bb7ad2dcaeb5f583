// One run of `npm run bench -- replay-memory`, in a process of its own so its peak memory is the
// replay's: `node bench/replay-memory-child.ts CHECKOUT ARGS…` runs `acp-group ARGS…` from the
// checkout CHECKOUT (this one, or another to compare) with stdout thrown away by the parent, then
// prints { code, peakMb, ms } as JSON on stderr's last line.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [checkout, ...args] = process.argv.slice(2) as [string, ...string[]];
const started = performance.now();
const { main } = (await import(pathToFileURL(join(checkout, "src/cli/index.ts")).href)) as { main: (argv: string[]) => Promise<number> };
const code = await main(args);
process.stderr.write(`\n${JSON.stringify({ code, peakMb: process.resourceUsage().maxRSS / 1024, ms: Math.round(performance.now() - started) })}\n`);
