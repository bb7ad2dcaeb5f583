// A room of agents over a folder of logs: three fresh agents of ours with the `helpful` stand-in
// (it answers every question it sees) replay each log together; per log and pooled, how many open
// questions got two or more answers, the longest agent chain and agent messages per person
// message. With a `personas.json` beside the logs, single-agent reach of each log's top personas
// (`--responder mention`) too, so a room rule that costs reach shows up here.
//   npm run bench -- room                      the logs in test/fixtures/irc-dev
//   ROOM_LOGS=DIR npm run bench -- room        every *.jsonl in DIR
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_GROUP_SETTINGS } from "../src/config/load.ts";
import { parseLog } from "../src/replay/log.ts";
import { runReplay } from "../src/replay/replay.ts";
import { orphanText, runRoomReplay } from "../src/replay/room.ts";

const DEFAULT_DIR = fileURLToPath(new URL("../test/fixtures/irc-dev/", import.meta.url));
const AGENTS = ["room-agent-a", "room-agent-b", "room-agent-c"];

type Fmt = (n: number, digits?: number) => string;

export async function benchRoom(fmt: Fmt): Promise<void> {
  const dir = process.env["ROOM_LOGS"] ?? DEFAULT_DIR;
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
  const personas = readPersonas(join(dir, "personas.json"));
  const pool = { person: 0, agent: 0, open: 0, answered: 0, many: 0, chain: 0, gold: 0, reached: 0 };
  const orphanPool = { open: 0, orphaned: 0, once: 0, none: 0, many: 0, personToo: 0 };
  for (const f of files) {
    const { lines } = parseLog(readFileSync(join(dir, f), "utf8"));
    const t0 = performance.now();
    const room = await runRoomReplay(
      lines,
      AGENTS.map((persona, i) => ({ persona, settings: DEFAULT_GROUP_SETTINGS, responder: "helpful", seed: 1 + i })),
    );
    const ms = performance.now() - t0;
    const r = room.room;
    const answered = r.answeredBy.one + r.answeredBy.twoOrMore;
    pool.person += r.personMessages;
    pool.agent += r.agentMessages;
    pool.open += r.openQuestions;
    pool.answered += answered;
    pool.many += r.answeredBy.twoOrMore;
    pool.chain = Math.max(pool.chain, r.longestAgentChain);
    const o = r.orphans;
    orphanPool.open += o.open;
    orphanPool.orphaned += o.orphaned;
    orphanPool.once += o.orphanedOnceInTime;
    orphanPool.none += o.orphanedAnsweredBy.none;
    orphanPool.many += o.orphanedAnsweredBy.twoOrMore;
    orphanPool.personToo += o.personAnsweredAlsoByAgent;
    console.log(
      `room ${basename(f, ".jsonl")}: ${r.openQuestions} open questions, answered by 0/1/2+ agents ${r.answeredBy.none}/${r.answeredBy.one}/${r.answeredBy.twoOrMore} ` +
        `(${fmt(100 * r.multiAnswerRate)}% of answered got 2+), longest agent chain ${r.longestAgentChain}, ` +
        `${fmt(r.agentPerPerson, 3)} agent messages per person message (${r.agentMessages}/${r.personMessages}) · ${fmt(ms)} ms`,
    );
    console.log(`  ${orphanText(o)}`);
    for (const nick of personas.get(basename(f, ".jsonl")) ?? []) {
      const a = (await runReplay(lines, { persona: nick, settings: DEFAULT_GROUP_SETTINGS, responder: "mention" })).addressed;
      if (!a) continue;
      pool.gold += a.gold;
      pool.reached += a.reached;
      console.log(`  reach ${nick} (alone, --responder mention): ${a.reached}/${a.gold} (${fmt(100 * a.reachRate)}%)`);
    }
  }
  console.log(
    `room, ${files.length} logs pooled: ${pool.many}/${pool.answered} answered open questions got 2+ answers ` +
      `(${fmt(pool.answered ? (100 * pool.many) / pool.answered : 0, 1)}%, target ≤ 10%), longest agent chain ${pool.chain} (target ≤ 2), ` +
      `${fmt(pool.agent / Math.max(1, pool.person), 3)} agent messages per person message (target ≤ 0.05); ${pool.open} open questions` +
      (pool.gold ? `; single-agent reach ${pool.reached}/${pool.gold} (${fmt((100 * pool.reached) / pool.gold, 1)}%)` : ""),
  );
  console.log(
    `room, ${files.length} logs pooled: ${orphanPool.orphaned} of ${orphanPool.open} annotated open questions orphaned; ` +
      `${orphanPool.once} answered once within 3 min (${fmt(orphanPool.orphaned ? (100 * orphanPool.once) / orphanPool.orphaned : 0, 1)}%, target ≥ 60%), ` +
      `by no agent ${orphanPool.none}, by 2+ ${orphanPool.many}; person-answered ones an agent answered too ${orphanPool.personToo}`,
  );
}

/** Each log's three most addressed people, from a `personas.json` beside the logs (if any). */
function readPersonas(file: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!existsSync(file)) return out;
  const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, { personas?: Array<{ nick: string; addressedByAnnotation?: number }> }>;
  for (const [log, entry] of Object.entries(data)) {
    const top = [...(entry.personas ?? [])].sort((a, b) => (b.addressedByAnnotation ?? 0) - (a.addressedByAnnotation ?? 0)).slice(0, 3);
    out.set(log, top.map((p) => p.nick));
  }
  return out;
}
