// Child of room-questions-memory.test.ts (run with --expose-gc): `N` measures the room's figures
// (measureRoom, as a log walked from its file: `spill`) over a log of N annotated open questions,
// each replied to by another person, made line by line as each walk asks for it (nothing of the
// log is held), and prints { baseMb, liveMb, open, orphaned }: the heap and typed arrays still live
// after a full GC before the figures, and the largest at the end of each walk of the lines.
import type { LogLine } from "../../src/replay/log.ts";
import { measureRoom } from "../../src/replay/room.ts";
import { liveMb as live, notingLive, printFigures } from "../support/live-memory.ts";

const n = Number(process.argv[2]);
// Line 2k: ann's question k; line 2k+1: bob's reply to it (every third one is ann's own follow-up instead).
function* lines(): Generator<LogLine> {
  for (let k = 0; k < n; k++) {
    const ts = 1_767_600_000_000 + k * 2000;
    yield { id: `q${k}`, ts, sender: "ann", content: `anyone know why build ${k} fails?`, line: 2 * k + 1, directedTo: [] };
    yield { id: `r${k}`, ts: ts + 1000, sender: k % 3 === 0 ? "ann" : "bob", content: "try a clean build", line: 2 * k + 2, replyTo: [`q${k}`], directedTo: ["ann"] };
  }
}
const noted = notingLive(lines);
const baseMb = live();
const room = measureRoom({ lines: noted.walked, count: 2 * n, spill: true, isAgentLine: () => false, agentNames: [{ persona: "dee", aid: "dee" }], sent: [], mentioned: () => false });
printFigures({ baseMb, liveMb: noted.peakMb(), open: room.orphans.open, orphaned: room.orphans.orphaned });
