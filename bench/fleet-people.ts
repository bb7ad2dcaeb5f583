// The people of `npm run bench -- fleet`, in their own process so their work is not the fleet's:
// each person signs in with the key the server certified for it and follows every tenth group. On
// "traffic" they post `rate` messages a second between them into random groups, every fifth one
// naming one of the group's agents; a mention is answered when that agent's reply quoting its tag
// arrives. "report" sends the latencies (ms, by when the mention was posted), the unanswered, and
// the mentions the network refused to take (the person's own connection down): never delivered,
// so no agent could answer them — counted apart from the unanswered.
import { createGroupConnection, type GroupConnection } from "../src/transport/connection.ts";
import { connectAgent, loadIdentity, type NetworkAgent } from "../src/network/index.ts";

interface Setup {
  accessPointUrl: string;
  caFile: string;
  /** Where the server keeps the people's keys (`<server state>/local-network`). */
  keyDir: string;
  people: string[];
  /** Group → the aids of its agents. */
  groups: Record<string, string[]>;
}

// A failure here is the bench's to report, never a silent exit.
process.on("unhandledRejection", (err) => console.error("people:", err));
const setup = JSON.parse(process.env.FLEET_PEOPLE ?? "{}") as Setup;
const groupIds = Object.keys(setup.groups);
const tls = { caFile: setup.caFile };
const pending = new Map<string, { at: number; group: string; agent: string }>();
const refused: number[] = [];
const answered: Array<{ postedAt: number; ms: number }> = [];
let seq = 0;

// Each person follows and posts into every tenth group (person i: groups i, i + 10, …): a
// thousand groups' history is not pulled ten times over before the traffic starts.
const people: Array<{ agent: NetworkAgent; conn: GroupConnection; groups: string[] }> = [];
for (const [i, aid] of setup.people.entries()) {
  const own = groupIds.filter((_, g) => g % setup.people.length === i);
  if (own.length === 0) continue;
  const agent = connectAgent({ identity: loadIdentity({ aid, stateDir: setup.keyDir }), accessPointUrl: setup.accessPointUrl, tls, backoff: { baseMs: 250, maxMs: 2000 } });
  const conn = createGroupConnection({
    channel: agent.channel(`group.${aid.slice(aid.indexOf(".") + 1)}`),
    aid,
    groups: own,
    getCursor: () => 0,
    onMessages: (groupId, messages) => {
      for (const m of messages) {
        const tag = /\bm(\d+)x\b/.exec(m.content)?.[0];
        const p = tag ? pending.get(tag) : undefined;
        if (p && p.group === groupId && m.sender === p.agent) {
          pending.delete(tag!);
          answered.push({ postedAt: p.at, ms: Date.now() - p.at });
        }
      }
    },
    reconnect: { baseMs: 250, maxMs: 2000, jitter: 0.5 },
  });
  people.push({ agent, conn, groups: own });
}
await Promise.all(people.map((p) => p.conn.start()));

let traffic: ReturnType<typeof setInterval> | undefined;
const post = () => {
  const n = seq++;
  const person = people[n % people.length]!;
  const group = person.groups[Math.floor(Math.random() * person.groups.length)]!;
  const agents = setup.groups[group]!;
  let text = `the build on branch ${n % 7} is green again n${n}y`;
  if (n % 5 === 0 && agents.length > 0) {
    const agent = agents[Math.floor(Math.random() * agents.length)]!;
    const tag = `m${n}x`;
    pending.set(tag, { at: Date.now(), group, agent });
    text = `${agent.slice(0, agent.indexOf("."))} please look at ${tag}`;
  }
  // A post refused while the network (or the person's connection) is down was never delivered:
  // counted as refused, not as a mention the agent left unanswered.
  const tag = /\bm\d+x\b/.exec(text)?.[0];
  person.conn.sendMessage({ groupId: group, content: text }).catch(() => {
    const p = tag === undefined ? undefined : pending.get(tag);
    if (p === undefined) return;
    pending.delete(tag!);
    refused.push(p.at);
  });
};

process.on("message", (msg: { cmd: string; rate?: number }) => {
  if (msg.cmd === "traffic") {
    if (traffic) clearInterval(traffic);
    traffic = setInterval(post, Math.round(1000 / (msg.rate ?? 5)));
  } else if (msg.cmd === "quiet") {
    if (traffic) clearInterval(traffic);
    traffic = undefined;
  } else if (msg.cmd === "report") {
    process.send!({ answered: answered.splice(0), unanswered: [...pending.values()].map((p) => p.at), refused: refused.splice(0) });
    pending.clear();
  } else if (msg.cmd === "stop") {
    if (traffic) clearInterval(traffic);
    void Promise.all(people.map(async (p) => (await p.conn.close(), await p.agent.close()))).then(() => process.exit(0));
  }
});
process.send!({ ready: true });
