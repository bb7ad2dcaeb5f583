// Where the report's chart puts things: the time scale, the lanes stacked from the top, and one
// row per busy sender. Pure but for counting the senders (in temp files for a log walked from its
// file): the same lines always give the same layout.
import { countKeys } from "../replay/key-counts.ts";

/** Senders with a row of their own; the rest share the last row. */
export const SENDER_ROWS = 24;
export const LANE = { axis: 24, vitality: 16, budget: 44, dispatches: 36, sent: 18, addressed: 18, sender: 12 } as const;
const GAP = 6;

export const round = (n: number) => Math.round(n * 10) / 10;

/** The chart's geometry as the page script reads it from the page data. */
export interface Layout {
  left: number;
  width: number;
  height: number;
  /** y of each row (sender rows first, then "others"). */
  rowY: number[];
  lanes: Record<string, number>;
}

export interface TimeScale {
  t0: number;
  t1: number;
  width: number;
  /** x of a timestamp, in pixels from the chart's left edge. */
  x: (ts: number) => number;
}

/** From the first line to the last line or dispatch, whichever is later. */
export function timeScale(p: { firstTs: number | undefined; lastTs: number | undefined; count: number; lastDispatchAt: number | undefined }): TimeScale {
  const t0 = p.firstTs ?? 0;
  const t1 = Math.max(t0 + 1, p.lastTs ?? 0, p.lastDispatchAt ?? 0);
  const minutes = (t1 - t0) / 60_000;
  // 4 px a minute, or half a pixel a message on a busy day, scrolled sideways past the window.
  const width = Math.round(Math.min(24_000, Math.max(1_000, minutes * 4, p.count / 2)));
  return { t0, t1, width, x: (ts: number) => round(((ts - t0) / (t1 - t0)) * width) };
}

export interface SenderRows {
  /** How many distinct senders. */
  distinct: number;
  /** The persona as it appears among the senders, if it speaks. */
  own: string | undefined;
  /** Senders with a row of their own, the persona first. */
  rowSenders: string[];
  /** Whether the rest share an "others" row. */
  others: boolean;
  /** Row of each sender in `rowSenders`; absent means the "others" row. */
  rowOf: Map<string, number>;
}

/**
 * Senders by how much they say (most lines first, ties by name): the persona always gets a row, the
 * most active others the rest of the {@link SENDER_ROWS}. `lines`: each line's sender (`total`
 * of them), counted on disk when `spill` (key-counts.ts) — a log may have a new sender on every line.
 */
export function rankSenders(lines: Iterable<string>, p: { total: number; spill: boolean; isPersona: (sender: string) => boolean }): SenderRows {
  // The persona's own spellings (a handful) are counted apart: it has a row however little it says.
  const ownCounts = new Map<string, number>();
  function* senders(): Generator<string> {
    for (const s of lines) {
      if (p.isPersona(s)) ownCounts.set(s, (ownCounts.get(s) ?? 0) + 1);
      yield s;
    }
  }
  const { distinct, top } = countKeys(senders(), { top: SENDER_ROWS + 1, total: p.total, spill: p.spill });
  let own: string | undefined;
  let ownCount = 0;
  for (const [s, c] of ownCounts) if (c > ownCount || (c === ownCount && own !== undefined && s < own)) [own, ownCount] = [s, c];
  const rowSenders = [...(own !== undefined ? [own] : []), ...top.map(([s]) => s).filter((s) => s !== own)].slice(0, SENDER_ROWS);
  return {
    distinct,
    own,
    rowSenders,
    others: distinct > rowSenders.length,
    rowOf: new Map(rowSenders.map((s, i) => [s, i])),
  };
}

/** The lanes from the top (the addressed lane only for an annotated log), then the sender rows. */
export function stackLanes(width: number, annotated: boolean, senders: SenderRows): Layout {
  const lanes: Record<string, number> = {};
  let y = 0;
  for (const [name, h] of Object.entries(LANE)) {
    if (name === "sender" || (name === "addressed" && !annotated)) continue;
    lanes[name] = y;
    y += h + GAP;
  }
  const rowY = [...senders.rowSenders, ...(senders.others ? ["others"] : [])].map((_, i) => y + LANE.sender / 2 + i * LANE.sender);
  const height = y + rowY.length * LANE.sender + GAP;
  return { left: 0, width, height, rowY, lanes };
}
