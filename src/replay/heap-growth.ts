// Why a long replay's memory would grow with its log though it holds nothing of it: V8 sizes its
// heap by what it has seen. Each line's message lives through the group client's window, so every
// scavenge carries some bytes over, and V8 doubles the young generation whenever the bytes carried
// over since it last grew exceed its size — over a long log, up to its maximum (2 × 64 MB here);
// and the old generation is collected only once it has grown by a factor V8 picks from its own
// speed (up to 4×), so the messages that did outlive a scavenge pile up as garbage in between. A
// replay is a batch job over data that dies young: while a log is walked from its file, the young
// generation is held at YOUNG_BYTES and the old generation is collected once it has grown by 30 %;
// both go back to V8's defaults once the last walking source is closed. Left alone when the process
// was started with heap flags of its own. Still needed once nothing per line is kept: a 100 MB
// log's replay peaks at 313 MB RSS without it, 195 MB with it (a room of three 413 / 220 MB;
// 2026-11-27).
//
// The young generation's size at the start of a walk is whatever loading the program left (32 MB
// in a checkout, whose TypeScript is stripped as it loads; 16 MB in some runs), and V8 cannot be
// told a size once it is running: a young generation larger than YOUNG_BYTES is emptied back to
// its smallest by a collection that reduces memory, then let grow (doubling) until it reaches
// YOUNG_BYTES, checked every CHECK_EVERY lines walked (`heapGrowthTick`). Measured (100 MB log, one
// persona, --json): 32 MB young, peak RSS 178 MB, 19.2 s CPU; 8 MB: 139 MB, 20.3 s; 16 MB: 148 MB,
// 20.2 s; 2–4 MB: 134–136 MB, 22.1–22.5 s.
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** The young generation's size (V8's `new_space`) while a log is walked. */
export const YOUNG_BYTES = 8 * 1024 * 1024;
/** Lines walked between looks at the young generation while it grows to YOUNG_BYTES. */
const CHECK_EVERY = 128;

/** V8's defaults, restored once no log is walked. */
const DEFAULTS = ["--semi-space-growth-factor=2", "--heap-growing-percent=0"];
const WALKING = ["--semi-space-growth-factor=1", "--heap-growing-percent=30"];
const GROWING = ["--semi-space-growth-factor=2", "--heap-growing-percent=30"];

const ownFlags = /--(max-|min-)?semi-space-(size|growth-factor)|--heap-growing-percent|--max-old-space-size|--max-heap-size/.test(
  `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`,
);

let holders = 0;
let growing = false;
let lines = 0;

const set = (flags: readonly string[]) => {
  for (const f of flags) setFlagsFromString(f);
};

/** The young generation's size now. */
export function youngBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0;
}

type Collect = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;
let collect: Collect | undefined;

/** A full collection that also gives back the young generation (what V8 does under memory pressure). */
function reduceMemory(): void {
  if (!collect) {
    setFlagsFromString("--expose-gc");
    try {
      collect = runInNewContext("gc") as Collect;
    } finally {
      setFlagsFromString("--no-expose-gc");
    }
  }
  collect({ type: "major", execution: "sync", flavor: "last-resort" });
}

/** Stops the young generation's growth once it has reached YOUNG_BYTES. */
function check(): void {
  if (youngBytes() * 2 <= YOUNG_BYTES) return;
  growing = false;
  set(WALKING);
}

/** Called for each line walked: lets the young generation grow to YOUNG_BYTES, no further. */
export function heapGrowthTick(): void {
  if (growing && ++lines % CHECK_EVERY === 0) check();
}

/** Holds the replay's heap growth while a log file is walked; the returned function lets it go (once). */
export function holdHeapGrowth(): () => void {
  if (ownFlags) return () => {};
  if (holders++ === 0) {
    if (youngBytes() > YOUNG_BYTES) reduceMemory();
    growing = true;
    set(GROWING);
    check();
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--holders === 0) {
      growing = false;
      set(DEFAULTS);
    }
  };
}
