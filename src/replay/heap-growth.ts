// Why a long replay's memory would grow with its log though it holds nothing of it: V8 sizes its
// heap by what it has seen. Each line's message lives through the group client's window, so every
// scavenge carries some bytes over, and V8 doubles the young generation whenever the bytes carried
// over since it last grew exceed its size — over a long log, up to its maximum (2 × 64 MB here);
// and the old generation is collected only once it has grown by a factor V8 picks from its own
// speed (up to 4×), so the messages that did outlive a scavenge pile up as garbage in between. A
// replay is a batch job over data that dies young: while a log is walked from its file, the young
// generation keeps the size it has (growth factor 1) and the old generation is collected once it
// has grown by 30 %; both go back to V8's defaults once the last walking source is closed. Left
// alone when the process was started with heap flags of its own. Still needed once nothing per
// line is kept: a 100 MB log's replay peaks at 313 MB RSS without it, 195 MB with it (a room of three
// 413 / 220 MB; 2026-11-27).
import { setFlagsFromString } from "node:v8";

/** V8's defaults, restored once no log is walked. */
const DEFAULTS = ["--semi-space-growth-factor=2", "--heap-growing-percent=0"];
const WALKING = ["--semi-space-growth-factor=1", "--heap-growing-percent=30"];

const ownFlags = /--(max-|min-)?semi-space-(size|growth-factor)|--heap-growing-percent|--max-old-space-size|--max-heap-size/.test(
  `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`,
);

let holders = 0;

const set = (flags: readonly string[]) => {
  for (const f of flags) setFlagsFromString(f);
};

/** Holds the replay's heap growth while a log file is walked; the returned function lets it go (once). */
export function holdHeapGrowth(): () => void {
  if (ownFlags) return () => {};
  if (holders++ === 0) set(WALKING);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--holders === 0) set(DEFAULTS);
  };
}
