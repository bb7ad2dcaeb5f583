// One line must not silence a room of agents. Three agents of ours in a group (each knowing the
// other two, so the floor is in force), a person asks the room an open question, and an outsider
// who joined with the invite link answers it with junk right after it: a `.` that names the
// question in `metadata.reply_to`, or a line that addresses the asker (`sam: no`). Every question
// is still answered, by exactly one agent. Real sockets and real keys on the local network; the
// model is the scripted `helpful` stand-in (no LLM here), which answers every question it sees.
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import { replyToOf } from "../../src/monitor/floor.ts";
import { startDevNetwork, type DevNetwork } from "../../src/runtime/dev-network.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import type { NetworkAgent } from "../../src/network/index.ts";
import type { GroupMessage } from "../../src/types.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, startRecorded, useRuntimeFixture, waitFor, type AgentName, type RecordedIdentity } from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("room-silencing");
const SAM = "sam.acp.local";
const OUTSIDER = "zed.acp.local";
const DAVE = "dave.acp.local"; // a member the config names (humans)
const NAMES: AgentName[] = ["alice", "bob", "carol"];
const QUICK = { backoff: { baseMs: 20, maxMs: 100 }, stableMs: 0 };
// The send delay spreads the agents over 0–4 s by their floor rank for the question: the first
// one's answer reaches the others long before their own turn.
// An open question is left to people for a grace period, then the agents take it in turn (the
// orphan path, with the floor's answer detection): here 1 s of grace and a 4 s spread.
const ROOM = {
  bufferGateMs: 300,
  bufferGateMaxWaitMs: 1000,
  cooldownMs: 0,
  delay: { enabled: true, fastMs: [0, 4000] as [number, number], normalMs: [0, 4000] as [number, number] },
  budget: GENEROUS_BUDGET,
  orphans: { graceMs: 1000, spreadMs: 4000 },
};

interface Room {
  dev: DevNetwork;
  agents: RecordedIdentity[];
  say(from: "sam" | "outsider" | "dave", content: string, metadata?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

async function openRoom(): Promise<Room> {
  const stateDir = fx.stateDir();
  const members: Record<string, { human?: boolean }> = { [SAM]: { human: true }, [DAVE]: { human: true } };
  for (const n of NAMES) members[AGENTS[n].aid] = {};
  const dev = await startDevNetwork({ stateDir, groups: { [GROUP]: { members, inviteCode: "lobby-code" } }, rateLimit: null });
  fx.server = dev.service;
  const config = parseChannelConfig({
    stateDir,
    humans: [SAM, DAVE],
    agents: NAMES.map((n) => AGENTS[n].aid),
    identities: Object.fromEntries(NAMES.map((n) => [n, { ...AGENTS[n] }])),
    groups: { [GROUP]: ROOM },
  });
  const agents: RecordedIdentity[] = [];
  for (const n of NAMES) {
    const identity = await dev.identity(AGENTS[n].aid);
    const r = fx.track(startRecorded({ config, identityId: n, backend: createScriptedBackend({ mode: "helpful" }), connect: ({ logger }) => dev.connect(identity, logger, QUICK) }));
    await r.ready;
    agents.push(r);
  }
  const people: Array<{ agent: NetworkAgent; conn: GroupConnection }> = [];
  const connect = async (aid: string, join: boolean): Promise<GroupConnection> => {
    const agent = dev.connect(await dev.identity(aid), undefined, QUICK);
    await agent.ready;
    // The outsider is no member of the group's definition: it joins with the invite link, as anyone may.
    if (join) {
      const joiner = createGroupConnection({ channel: agent.channel(dev.service.aid), aid, groups: [], getCursor: () => 0, onMessages: () => {} });
      await joiner.start();
      expect(await joiner.request("use_invite_code", { groupId: GROUP, params: { code: "lobby-code" } })).toMatchObject({ status: "joined" });
      await joiner.close();
    }
    const conn = createGroupConnection({ channel: agent.channel(dev.service.aid), aid, groups: [GROUP], getCursor: () => 0, onMessages: () => {} });
    await conn.start();
    people.push({ agent, conn });
    return conn;
  };
  const sam = await connect(SAM, false);
  const outsider = await connect(OUTSIDER, true);
  const dave = await connect(DAVE, false);
  return {
    dev,
    agents,
    async say(from, content, metadata) {
      const sent = await (from === "sam" ? sam : from === "dave" ? dave : outsider).sendMessage({ groupId: GROUP, content, ...(metadata ? { metadata } : {}) });
      return sent.msgId;
    },
    async close() {
      await Promise.all(agents.map((a) => a.close()));
      for (const p of people) {
        await p.conn.close();
        await p.agent.close();
      }
      await dev.close();
    },
  };
}

/** Every agent has settled a dispatch whose batch held `msgId` (sent or skipped). */
const settledOn = (agents: readonly RecordedIdentity[], msgId: string) => agents.every((a) => a.decisions.some((d) => d.messageIds.includes(msgId)));
/** Every agent has settled its orphan turn for question `msgId`: nobody will answer it later. */
const orphanSettled = (agents: readonly RecordedIdentity[], msgId: string) => agents.every((a) => a.decisions.some((d) => d.trigger === "orphan" && d.messageIds.includes(msgId)));

const answersTo = (history: readonly GroupMessage[], q: string) =>
  history.filter((m) => m.sender !== SAM && m.sender !== OUTSIDER && m.sender !== DAVE && replyToOf(m.metadata) === q).map((m) => m.sender);

describe("an outsider's line does not silence a room of agents", () => {
  it("after every open question, junk with reply_to or a line to the asker: each question is answered by exactly one agent", async () => {
    const room = await openRoom();
    try {
      const questions = [
        "How should I set up backups?",
        "What is a good way to rotate logs?",
        "Which filesystem suits a small NAS?",
        "How do I keep my clock in sync?",
        "Where do I put the cron job?",
      ];
      const junk: Array<(q: string) => [string, Record<string, unknown>?]> = [
        (q) => [".", { reply_to: q }],
        () => ["sam: no"],
        (q) => ["sam: no", { reply_to: q }],
        (q) => ["ok", { group_meta: { reply_to: q } }],
        // A claim that reads like an answer: still a stranger's word, nobody vouches for zed.
        (q) => ["sam: that is answered in the pinned notes, nothing more to add here", { reply_to: q }],
      ];
      for (const [i, text] of questions.entries()) {
        const q = await room.say("sam", text);
        const [content, metadata] = junk[i]!(q);
        const j = await room.say("outsider", content, metadata);
        await waitFor(() => orphanSettled(room.agents, q) && settledOn(room.agents, j), `every agent settled on question ${i + 1}`, 20_000);
        const by = answersTo(room.dev.service.history(GROUP), q);
        expect({ question: text, answers: by.length }).toEqual({ question: text, answers: 1 });
      }
      // Nobody yielded to the outsider.
      const yieldedToOutsider = room.agents.flatMap((a) => a.decisions.filter((d) => d.detail?.includes(`by:${OUTSIDER}`)));
      expect(yieldedToOutsider).toEqual([]);

      // A credible answer still settles the floor: dave, a member the config names, answers sam's
      // next question with something to say, in reply_to, before any agent's turn: nobody repeats it.
      const q = await room.say("sam", "Which port does the backup server listen on?");
      const d = await room.say("dave", "sam: 8200, it is in the server's config file", { reply_to: q });
      await waitFor(() => orphanSettled(room.agents, q) && settledOn(room.agents, d), "every agent settled on dave's answer", 20_000);
      expect(answersTo(room.dev.service.history(GROUP), q)).toEqual([]);
    } finally {
      await room.close();
    }
  }, 120_000);
});
