// Child of room-replies-memory.test.ts (run with --expose-gc): `N` gives a room tally of a log
// walked from its file (`spill`, LINES lines) N replies given by id — 49 in 50 to other agents'
// messages, every 50th to a log line — then joins them with the lines and reads each line's
// answering agents and first answer, as the room's figures do. Prints { baseMb, liveMb, answered,
// first }: the heap and typed arrays still live after a full GC before the replies, the largest
// after the replies and at the end of each walk of the lines, the lines answered, and the sum of
// their first answers' times.
import { RoomTally } from "../../src/replay/room-tally.ts";
import { liveMb as live } from "../support/live-memory.ts";

const n = Number(process.argv[2]);
const LINES = 20_000;
const AGENTS = 3;
function* lines(): Generator<{ id: string }> {
  for (let i = 0; i < LINES; i++) yield { id: `m${i}` };
}
let liveMb = 0;
const walked = {
  [Symbol.iterator]: function* () {
    yield* lines();
    liveMb = Math.max(liveMb, live());
  },
};
const tally = new RoomTally(LINES, AGENTS, true);
const baseMb = live();
for (let k = 0; k < n; k++) {
  const agent = k % AGENTS;
  // Sent out of order: a permutation of the replies' times.
  const ts = 1_767_600_000_000 + ((k * 7919) % n) * 10;
  tally.reply(agent, ts, [k % 50 === 0 ? `m${(k / 50) % LINES}` : `a${agent}:reply-${k}`]);
}
liveMb = live();
tally.joinIds(walked);
let answered = 0;
let first = 0;
let i = 0;
for (const _ of walked) {
  if (tally.answeredBy(i) > 0) {
    answered++;
    first += tally.firstAnswer(i)! - 1_767_600_000_000;
  }
  i++;
}
tally.remove();
const round = (x: number) => Math.round(x * 10) / 10;
process.stdout.write(JSON.stringify({ baseMb: round(baseMb), liveMb: round(liveMb), answered, first }));
