// Logs for the report tests: the bundled #ubuntu day, and a 20,000-line log built from it.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseLog, type LogLine } from "../../src/replay/log.ts";
import { runReplay, type ReplayReport } from "../../src/replay/replay.ts";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";

export const FIXTURE = fileURLToPath(new URL("../fixtures/irc-dev/ubuntu-2010-08-17.jsonl", import.meta.url));
export const EVIL = "</script><script>alert(1)</script>";

export function fixtureLines(): LogLine[] {
  return parseLog(readFileSync(FIXTURE, "utf8")).lines;
}

/**
 * `count` lines from copies of the fixture laid over the same day, each copy shifted by 37 s
 * and its ids made unique: a denser day, as a busy channel would be. One line carries `EVIL`
 * as its text and one sender is named with it.
 */
export function bigLog(count: number): LogLine[] {
  const base = fixtureLines();
  const out: LogLine[] = [];
  for (let copy = 0; out.length < count; copy++) {
    for (const l of base) {
      if (out.length >= count) break;
      out.push({ ...l, id: `${l.id}#${copy}`, ts: l.ts + copy * 37_000, line: out.length + 1 });
    }
  }
  out[10] = { ...out[10]!, content: `jacob: ${EVIL}` };
  out[11] = { ...out[11]!, sender: EVIL };
  return out.sort((a, b) => a.ts - b.ts);
}

export function replayFor(lines: readonly LogLine[]): Promise<ReplayReport> {
  return runReplay(lines, { persona: "jacob_", aliases: ["jacob"], settings: DEFAULT_GROUP_SETTINGS, responder: "mention", replyText: `sure ${EVIL}` });
}
