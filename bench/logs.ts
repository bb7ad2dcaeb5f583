// `npm run bench -- logs`: memory of reading a chat log for `replay`, against the log's size. Logs
// are generated in a temp folder: one line of 300 MB (refused past the line limit), and logs of
// 100 k, 300 k and 1 M ordinary lines. Each read runs in a child process (bench/log-child.ts) as
// `replay` reads now (a line at a time) and as it did before (the whole file, split, parsed);
// prints the peak RSS above the process's start. Bounded: the files are removed at the end.
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MB = 1024 * 1024;
const CHILD = fileURLToPath(new URL("./log-child.ts", import.meta.url));

/** Writes `count` pieces from `piece(i)` to `file` through one fd, in 1 MB writes. */
function writeLog(file: string, count: number, piece: (i: number) => string): number {
  const fd = openSync(file, "w");
  let pending: string[] = [];
  let size = 0;
  const flush = () => {
    writeSync(fd, pending.join(""));
    pending = [];
    size = 0;
  };
  for (let i = 0; i < count; i++) {
    const p = piece(i);
    pending.push(p);
    size += p.length;
    if (size > MB) flush();
  }
  flush();
  closeSync(fd);
  return statSync(file).size;
}

function measure(mode: "stream" | "whole", file: string): { lines: number; error?: string; baseMb: number; peakMb: number; keptMb: number } {
  const out = execFileSync(process.execPath, ["--expose-gc", CHILD, mode, file], { encoding: "utf8", maxBuffer: 16 * MB });
  return JSON.parse(out) as { lines: number; error?: string; baseMb: number; peakMb: number; keptMb: number };
}

export function benchLogs(fmt: (n: number, digits?: number) => string): void {
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-logs-"));
  try {
    const oneLine = join(dir, "one-line.jsonl");
    const x = "x".repeat(MB);
    const size = writeLog(oneLine, 302, (i) => (i === 0 ? '{"id":"1","ts":1,"sender":"bob","content":"' : i === 301 ? '"}\n' : x));
    for (const mode of ["stream", "whole"] as const) {
      const r = measure(mode, oneLine);
      console.log(
        `logs: one line of ${fmt(size / MB)} MB, ${mode === "stream" ? "a line at a time (now)" : "whole file (before)"}: peak rss +${fmt(r.peakMb - r.baseMb)} MB (${fmt((r.peakMb - r.baseMb) / (size / MB), 2)}× the log)${r.error ? `; ${r.error.slice(0, 60)}…` : `; ${fmt(r.lines)} line(s) read`}`,
      );
    }
    for (const count of [100_000, 300_000, 1_000_000]) {
      const file = join(dir, `lines-${count}.jsonl`);
      const bytes = writeLog(file, count, (i) => `${JSON.stringify({ id: String(i), ts: 1_767_600_000_000 + i * 1000, sender: `user${i % 50}`, content: `message ${i}: the build broke again after the merge, can someone look?` })}\n`);
      for (const mode of ["stream", "whole"] as const) {
        const r = measure(mode, file);
        console.log(
          `logs: ${fmt(count)} lines, ${fmt(bytes / MB)} MB, ${mode === "stream" ? "a line at a time (now)" : "whole file (before)"}: peak rss +${fmt(r.peakMb - r.baseMb)} MB (${fmt((r.peakMb - r.baseMb) / (bytes / MB), 2)}× the log), kept after reading: the parsed messages, ${fmt(r.keptMb)} MB (${fmt(r.keptMb / (bytes / MB), 2)}×)`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
