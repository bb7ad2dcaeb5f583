// `npm run bench -- replay-memory`: peak memory of `replay` against the log's size. Logs of ordinary
// lines are generated in a temp folder from the bundled IRC logs (their lines in turn, each with a
// fresh id and a time one second after the last): about 10, 100 and 500 MB (`BENCH_REPLAY_MB=10,100`
// to choose). Each replay runs in a child process (bench/replay-memory-child.ts) as the CLI runs it,
// single persona with `--json` and a room of three with the text report, output thrown away; prints
// the peak RSS, its ratio to the log and the time (`BENCH_REPLAY_RUNS=single` or `room` for one);
// `shuffled` replays (single, `--json`) the same log with each pair of lines swapped, out of time
// order everywhere; `inspect` shows the prompt at the log's 100th second; `suite` runs `replay --suite`
// on a folder holding the log (`--personas 1`); `html` writes the `--html` page of the single replay;
// `repeated` replays (single, `--json --skip-bad`) a log of the same size made of a log of half the
// size written twice, every id on two lines (and out of time order where the copy starts);
// `senders` replays (single, `--json`) the log with a sender of its own on every line (`u0`, `u1`, …),
// and `senders-room` the same log with a room of three.
// After the sizes, each run's peak RSS growth against the log's growth, and the largest log's peak
// as a multiple of the smallest's (flat is 1×).
// `BENCH_REPLAY_BEFORE=DIR` also runs the checkout DIR (e.g. an older commit's worktree) on the
// same logs, up to `BENCH_REPLAY_BEFORE_MB` (100). The files are removed at the end.
// `BENCH_REPLAY_SAMPLE=FILE` samples every run's memory into FILE (bench/replay-memory-child.ts);
// the sampler's own work adds a few MB to the peaks, so a sampled run's figures are not the bench's.
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, symlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MB = 1024 * 1024;
const CHILD = fileURLToPath(new URL("./replay-memory-child.ts", import.meta.url));
const HERE = fileURLToPath(new URL("..", import.meta.url));
const DEV = join(HERE, "test/fixtures/irc-dev");
/** The generated logs' first time: a line a second from there. */
const FIRST_TS = 1_767_600_000_000;

/** Writes ordinary lines from the bundled logs until the file holds `mb` MB; returns its size and line count. */
function writeLog(file: string, mb: number, how: { swapPairs?: boolean; ownSenders?: boolean } = {}): { bytes: number; lines: number } {
  const source = readdirSync(DEV)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .flatMap((f) => readFileSync(join(DEV, f), "utf8").split("\n").filter((l) => l.trim() !== ""))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const fd = openSync(file, "w");
  let bytes = 0;
  let lines = 0;
  let pending: string[] = [];
  let size = 0;
  while (bytes + size < mb * MB) {
    const n = how.swapPairs ? lines ^ 1 : lines;
    const o = source[n % source.length]!;
    const text = `${JSON.stringify({ ...o, ...(how.ownSenders ? { sender: `u${n}` } : {}), id: `g${n}`, ts: FIRST_TS + n * 1000 })}\n`;
    pending.push(text);
    size += Buffer.byteLength(text);
    lines++;
    if (size > MB) {
      writeSync(fd, pending.join(""));
      bytes += size;
      pending = [];
      size = 0;
    }
  }
  writeSync(fd, pending.join(""));
  closeSync(fd);
  return { bytes: statSync(file).size, lines };
}

/** A log of `mb` MB: one of half the size, then the same lines again (a log concatenated with itself). */
function writeTwice(file: string, mb: number): void {
  const half = `${file}.half`;
  writeLog(half, mb / 2);
  const fd = openSync(file, "w");
  try {
    for (let k = 0; k < 2; k++) {
      const from = openSync(half, "r");
      try {
        const buf = Buffer.allocUnsafe(MB);
        for (let n; (n = readSync(from, buf, 0, buf.length, null)) > 0; ) writeSync(fd, buf, 0, n);
      } finally {
        closeSync(from);
      }
    }
  } finally {
    closeSync(fd);
    rmSync(half, { force: true });
  }
}

function run(checkout: string, args: string[]): { code: number; peakMb: number; ms: number } {
  const r = spawnSync(process.execPath, [CHILD, checkout, ...args], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", maxBuffer: 64 * MB });
  const last = r.stderr.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last) as { code: number; peakMb: number; ms: number };
  } catch {
    throw new Error(`replay child failed (${r.status ?? r.signal}): ${r.stderr.slice(-500)}`);
  }
}

export function benchReplayMemory(fmt: (n: number, digits?: number) => string): void {
  const sizes = (process.env.BENCH_REPLAY_MB ?? "10,100,500").split(",").map(Number);
  const kinds = (process.env.BENCH_REPLAY_RUNS ?? "single,room").split(",");
  // The old replay holds ~8× the log: past this size it is left out (BENCH_REPLAY_BEFORE_MB).
  const beforeUpTo = Number(process.env.BENCH_REPLAY_BEFORE_MB ?? 100);
  const checkouts: Array<[string, string]> = [["now", HERE]];
  if (process.env.BENCH_REPLAY_BEFORE) checkouts.push(["before", process.env.BENCH_REPLAY_BEFORE]);
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-replay-"));
  // Per run and checkout: the log's size and the peak RSS at each size, for the growth line.
  const peaks = new Map<string, Array<{ logMb: number; peakMb: number }>>();
  try {
    for (const mb of sizes) {
      const file = join(dir, `log-${mb}.jsonl`);
      const shuffled = join(dir, `shuffled-${mb}.jsonl`);
      const { bytes, lines } = writeLog(file, mb);
      if (kinds.includes("shuffled")) writeLog(shuffled, mb, { swapPairs: true });
      const senders = join(dir, `senders-${mb}.jsonl`);
      if (kinds.includes("senders") || kinds.includes("senders-room")) writeLog(senders, mb, { ownSenders: true });
      const repeated = join(dir, `repeated-${mb}.jsonl`);
      if (kinds.includes("repeated")) writeTwice(repeated, mb);
      // The suite replays every log of a folder: this one alone.
      const suiteDir = join(dir, `suite-${mb}`);
      const page = join(dir, `page-${mb}.html`);
      if (kinds.includes("suite")) {
        mkdirSync(suiteDir);
        symlinkSync(file, join(suiteDir, "log.jsonl"));
      }
      const runs: Array<[string, string, string[]]> = [
        ["single", "single --json", ["replay", file, "--persona", "ubottu", "--json"]],
        ["room", "room of 3, text", ["replay", file, "--persona", "room-agent-a", "--persona", "room-agent-b", "--persona", "room-agent-c", "--responder", "helpful"]],
        ["shuffled", "out of order, single --json", ["replay", shuffled, "--persona", "ubottu", "--json"]],
        // The prompt at the log's 100th second: the file is checked whole, replayed only up to there.
        ["inspect", "inspect --at 100 s", ["inspect", "--log", file, "--at", String(FIRST_TS + 100_000), "--persona", "ubottu"]],
        ["suite", "suite, 1 persona", ["replay", "--suite", suiteDir, "--personas", "1"]],
        ["html", "single --html", ["replay", file, "--persona", "ubottu", "--html", page]],
        ["repeated", "every id twice, single --json --skip-bad", ["replay", repeated, "--persona", "ubottu", "--json", "--skip-bad"]],
        ["senders", "a new sender every line, single --json", ["replay", senders, "--persona", "ubottu", "--json"]],
        ["senders-room", "a new sender every line, room of 3, text", ["replay", senders, "--persona", "room-agent-a", "--persona", "room-agent-b", "--persona", "room-agent-c", "--responder", "helpful"]],
      ];
      for (const [key, label, args] of runs) {
        if (!kinds.includes(key)) continue;
        for (const [which, checkout] of checkouts) {
          if (which === "before" && mb > beforeUpTo) continue;
          const r = run(checkout, args);
          const at = `${label} (${which})`;
          peaks.set(at, [...(peaks.get(at) ?? []), { logMb: bytes / MB, peakMb: r.peakMb }]);
          console.log(
            `replay-memory: ${fmt(bytes / MB)} MB, ${fmt(lines)} lines, ${label} (${which}): peak rss ${fmt(r.peakMb)} MB ` +
              `(${fmt(r.peakMb / (bytes / MB), 2)}× the log), ${fmt(r.ms / 1000, 1)} s${r.code !== 0 ? `, exit ${r.code}` : ""}`,
          );
        }
      }
      rmSync(file, { force: true });
      rmSync(shuffled, { force: true });
      rmSync(repeated, { force: true });
      rmSync(senders, { force: true });
      rmSync(suiteDir, { recursive: true, force: true });
      rmSync(page, { force: true });
    }
    // Flat is what a streamed replay should be: the peak grows by a small fraction of the log's growth.
    for (const [at, points] of peaks) {
      if (points.length < 2) continue;
      const first = points[0]!;
      const last = points.at(-1)!;
      console.log(
        `replay-memory: ${at}, ${fmt(first.logMb)} → ${fmt(last.logMb)} MB log: peak rss ${fmt(first.peakMb)} → ${fmt(last.peakMb)} MB ` +
          `(+${fmt(last.peakMb - first.peakMb)} MB, ${fmt((last.peakMb - first.peakMb) / (last.logMb - first.logMb), 2)} MB per MB of log; ` +
          `${fmt(last.peakMb / first.peakMb, 2)}× the ${fmt(first.logMb)} MB log's peak)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
