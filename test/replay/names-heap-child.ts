// Child of names-memory.test.ts (run with --expose-gc): counts the names of a log of N lines where
// each line is directed at a name of its own (`suite`: the suite's choice of personas), made line
// by line as the count walks them, and prints { baseMb, liveMb }: what is live after a full GC
// before, and the largest every 5,000 lines.
import type { LogLine } from "../../src/replay/log.ts";
import { suitePersonas } from "../../src/replay/suite.ts";
import { liveMb as live } from "../support/live-memory.ts";

const n = Number(process.argv[2]);
let liveMb = 0;
function* lines(): Generator<LogLine> {
  for (let i = 0; i < n; i++) {
    yield { id: `g${i}`, ts: i * 1000, sender: "ann", content: `n${i}: hello`, line: i + 1, directedTo: [`n${i}`] };
    if (i % 5000 === 4999) liveMb = Math.max(liveMb, live());
  }
}
const baseMb = live();
const personas = suitePersonas(lines(), undefined, 3, { total: n, spill: true });
if (personas.length !== 0) throw new Error(`no name came 10 times, yet: ${personas.join(", ")}`);
liveMb = Math.max(liveMb, live());
const round = (x: number) => Math.round(x * 10) / 10;
process.stdout.write(JSON.stringify({ baseMb: round(baseMb), liveMb: round(liveMb) }));
