// Child of room-senders-memory.test.ts (run with --expose-gc): `N` measures the room's figures
// (measureRoom, as a log walked from its file: `spill`) over a log of N lines, each from a sender
// of its own (`u<n>`, every other one an aid `u<n>.acp.io`), made line by line as each walk asks
// for it (nothing of the log is held); every fourth line is a question put to the line before's
// sender by name, every eighth one to a name nobody has. Prints { baseMb, liveMb, open }: the heap
// and typed arrays still live after a full GC before the figures, and the largest at the end of
// each walk of the lines.
import type { LogLine } from "../../src/replay/log.ts";
import { measureRoom } from "../../src/replay/room.ts";
import { liveMb as live, notingLive, printFigures } from "../support/live-memory.ts";

const n = Number(process.argv[2]);
const sender = (i: number) => (i % 2 === 0 ? `u${i}` : `u${i}.acp.io`);
function content(i: number): string {
  if (i % 8 === 0) return `nobody${i} why does build ${i} fail?`;
  if (i % 4 === 0) return `u${i - 1} why does build ${i} fail?`;
  return `the build ${i} works here`;
}
function* lines(): Generator<LogLine> {
  for (let i = 0; i < n; i++) yield { id: `g${i}`, ts: 1_767_600_000_000 + i * 1000, sender: sender(i), content: content(i), line: i + 1, directedTo: [] };
}
const noted = notingLive(lines);
const baseMb = live();
const room = measureRoom({ lines: noted.walked, count: n, spill: true, isAgentLine: () => false, agentNames: [{ persona: "dee", aid: "dee.acp.io" }], sent: [], mentioned: () => false });
printFigures({ baseMb, liveMb: noted.peakMb(), open: room.openQuestions });
