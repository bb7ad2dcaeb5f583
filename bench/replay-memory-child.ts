// One run of `npm run bench -- replay-memory`, in a process of its own so its peak memory is the
// replay's: `node bench/replay-memory-child.ts CHECKOUT ARGS…` runs `acp-group ARGS…` from the
// checkout CHECKOUT (this one, or another to compare), restarted first as that checkout's command
// restarts itself (src/cli/node-args.ts), with stdout thrown away by the parent, then
// prints { code, peakMb, ms } as JSON on stderr's last line.
// `BENCH_REPLAY_SAMPLE=FILE` (passed on by the bench): also appends to FILE a line naming the run,
// then at each new RSS high and every 10 s (looked at no more often than every 50 ms, on the
// replay's reads and writes of files) the time, RSS, RssAnon, ArrayBuffers, V8's heap spaces and
// the replay's own frames of the stack: where a peak is reached, and which part of memory grew
// (bench/replay-memory-sampler.ts).
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { sampleOnFileCalls } from "./replay-memory-sampler.ts";

const [checkout, ...args] = process.argv.slice(2) as [string, ...string[]];
// First, as the command does (src/cli/bin.ts): the checkout's own restart for the command, where
// it has one (replay and inspect: one malloc arena).
const nodeArgs = join(checkout, "src/cli/node-args.ts");
if (existsSync(nodeArgs)) ((await import(pathToFileURL(nodeArgs).href)) as { relaunchWithNodeArgs?: (command?: string) => void }).relaunchWithNodeArgs?.(args[0]);
if (process.env.BENCH_REPLAY_SAMPLE) sampleOnFileCalls(process.env.BENCH_REPLAY_SAMPLE, `${args.join(" ")} (${checkout})`);
const started = performance.now();
const { main } = (await import(pathToFileURL(join(checkout, "src/cli/index.ts")).href)) as { main: (argv: string[]) => Promise<number> };
const code = await main(args);
process.stderr.write(`\n${JSON.stringify({ code, peakMb: process.resourceUsage().maxRSS / 1024, ms: Math.round(performance.now() - started) })}\n`);
