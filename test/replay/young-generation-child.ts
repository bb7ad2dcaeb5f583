// Child of young-generation.test.ts (plain `node`, no heap flags): grows V8's young generation first
// when asked (`grown`: a window of live objects churned until the young generation is at its
// largest), then walks the log given, keeping the last 2,000 lines alive as the group client's window
// does, and prints the young generation's size before the walk and its least and largest past the
// walk's first 20,000 lines (the young generation's size is V8's `new_space`).
import { getHeapSpaceStatistics } from "node:v8";
import { openLogSource } from "../../src/replay/log-source.ts";

const youngBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.space_size;

const [file, mode] = process.argv.slice(2) as [string, string];
if (mode === "grown") {
  let keep: object[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    keep.push({ i, s: `x${i}` });
    if (keep.length > 200_000) keep = [];
  }
}
const before = youngBytes();
const src = openLogSource(file);
const window: unknown[] = [];
let least = Infinity;
let most = 0;
let lines = 0;
for (const l of src.lines()) {
  window.push(l);
  if (window.length > 2000) window.shift();
  if (++lines >= 20_000 && lines % 1000 === 0) {
    const y = youngBytes();
    least = Math.min(least, y);
    most = Math.max(most, y);
  }
}
src.close();
process.stdout.write(JSON.stringify({ lines, before, least, most, after: youngBytes() }));
