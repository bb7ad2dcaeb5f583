import { readFileSync } from "node:fs";
import { parseLog } from "./src/replay/log.ts";
import { runReplay, personaMatcher } from "./src/replay/replay.ts";
import { suitePersonas } from "./src/replay/suite.ts";
import { isDirectedAt } from "./src/replay/addressed.ts";
import { DEFAULT_GROUP_SETTINGS } from "./src/config/load.ts";
const dir = "test/fixtures/irc-dev";
const personas = JSON.parse(readFileSync(`${dir}/personas.json`, "utf8"));
const byReason = new Map<string, number>();
const verbose = process.argv[2];
for (const log of Object.keys(personas)) {
  const { lines } = parseLog(readFileSync(`${dir}/${log}.jsonl`, "utf8"));
  const nicks = suitePersonas(lines, (personas[log]?.personas ?? []).filter((p: any) => !p.bot).map((p: any) => p.nick), 3);
  for (const persona of nicks) {
    const r = await runReplay(lines, { persona, responder: "mention", settings: DEFAULT_GROUP_SETTINGS } as any);
    const isP = personaMatcher(persona);
    const byId = new Map(r.messages.map((m: any) => [m.id, m]));
    let prevOurs = -1;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      if (isP(l.sender)) { prevOurs = i; continue; }
      if (isDirectedAt(l, persona) !== true) continue;
      const m: any = byId.get(l.id);
      if (m?.isMention || m?.engaged) continue;
      const reason = (m?.why ?? "plain").split(":")[0];
      byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
      if (verbose && reason === verbose) console.log(`${log} ${persona} [${i - prevOurs} after ours] ${l.sender}: ${l.content.slice(0, 100)}`);
    }
  }
}
console.log([...byReason].sort((a, b) => b[1] - a[1]));
