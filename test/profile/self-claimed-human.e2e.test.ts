// A bot that calls itself human in its own agent.md must get nothing an unknown member does not:
// its profile is read from the local profile host (real node:http on 127.0.0.1), then the real
// group client + monitor run on fake timers with the scripted back-end (no LLM here) while the
// bot names Alice every 2 s for a minute. Only the group service or our config makes a person.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemberDirectory } from "../../src/members/member-types.ts";
import { initGroupClientForIdentity } from "../../src/group/group-client.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupMonitor, type DispatchDecision } from "../../src/monitor/monitor.ts";
import { ProfileLookup } from "../../src/profile/member-profile-lookup.ts";
import { publishAgentMd } from "../../src/profile/publish.ts";
import { createMemoryAgentMdStore, handleAgentMdRequest } from "../../src/server/agent-md-store.ts";
import { createAgentMdFetch } from "../../src/profile/agent-md-fetch.ts";
import type { GroupMessage } from "../../src/types.ts";
import { ALICE, T0, recordingSender, settingsWith } from "../monitor/helpers.ts";
import { reasonOf } from "../support/outcome.ts";

const BOT = "mimic.agentcp.io";
// Different enough that weak dedup never decides anything here.
const REPLIES = ["Sure.", "No idea, sorry!", "Maybe after lunch?", "Ask Bob about it.", "Twelve, I think.", "Green works for me.", "Done already.", "Tomorrow at nine.", "Not my area.", "Probably both!"];

let server: Server | undefined;
afterEach(async () => {
  vi.useRealTimers();
  if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  server = undefined;
});

function gm(id: number, atMs: number): GroupMessage {
  return { msgId: String(id), groupId: "g1", sender: BOT, content: `Alice, ping ${id}`, contentType: "text", timestamp: T0 + atMs, metadata: null };
}

/** T+0s, T+2s … T+58s: the bot names Alice 30 times; returns [ms after T0, sent, skip reason] per dispatch. */
async function mentionLoop(directory: MemberDirectory): Promise<{ decisions: Array<[number, boolean, string | null]>; systemPrompt: string }> {
  vi.useFakeTimers({ now: T0 });
  const at = async (ms: number) => vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
  const settings = settingsWith({});
  const sender = recordingSender(() => Date.now());
  const backend = createScriptedBackend({ mode: "always", replyText: (r) => REPLIES[r.dispatchId % REPLIES.length]! });
  const decisions: DispatchDecision[] = [];
  const monitor = createGroupMonitor({ identityId: "alice", identity: ALICE, groupId: "g1", settings, humans: [], memberTypes: directory, backend, sender, onDecision: (d) => decisions.push(d) });
  const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings, dispatch: monitor.handle, humans: [], memberTypes: directory });
  for (let i = 0; i < 30; i++) {
    await at(i * 2000);
    client.feedBufferGate([gm(i + 1, i * 2000)]);
  }
  await at(70_000);
  monitor.close();
  await client.close();
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
  return { decisions: decisions.map((d) => [d.at - T0, d.outcome.kind === "sent", reasonOf(d.outcome) ?? null]), systemPrompt: backend.calls[0]?.systemPrompt ?? "" };
}

describe("a member's own agent.md cannot make it a person", () => {
  it("a bot whose agent.md says `type: human` gets what an unknown member gets: agent gap, loop guard after 6", async () => {
    const store = createMemoryAgentMdStore();
    server = createServer((req, res) => void handleAgentMdRequest(req, res, { verifyToken: (aid, t) => aid === BOT && t === "t-m", store }));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
    const fetch = createAgentMdFetch({ via: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    const published = await publishAgentMd({ aid: BOT, text: `---\naid: ${BOT}\nname: mimic\ntype: human\n---\n# Just a person\n`, token: "t-m", fetch });
    expect(published).toMatchObject({ ok: true });

    const claimed = new MemberDirectory({ humans: [], agents: [], owner: ALICE.owner });
    const lookup = new ProfileLookup({ directory: claimed, fetch, logger: createMemoryLogger(), now: () => Date.now() });
    await lookup.lookup(BOT);
    lookup.close();
    // The claim is kept (and shown), but it is not a verified type.
    expect(claimed.typeOf(BOT)).toEqual({ type: "unknown", source: "profile", claim: "human" });

    // T+0s, 2s, 4s … 58s: a mention every 2 s. Each waits the 5 s agent gap (counted from the
    // first mention still waiting); six replies, then the loop guard holds until a person speaks.
    const expected: Array<[number, boolean, string | null]> = [
      [5_000, true, null],
      [11_000, true, null],
      [17_000, true, null],
      [23_000, true, null],
      [29_000, true, null],
      [35_000, true, null],
      [41_000, false, "bot-loop-guard"],
      [47_000, false, "bot-loop-guard"],
      [53_000, false, "bot-loop-guard"],
      [59_000, false, "bot-loop-guard"],
    ];
    const unknown = await mentionLoop(new MemberDirectory({ humans: [], agents: [], owner: ALICE.owner }));
    expect(unknown.decisions).toEqual(expected);
    const withClaim = await mentionLoop(claimed);
    expect(withClaim.decisions).toEqual(expected);
    // The model still hears what the bot says of itself, marked as its own word.
    expect(withClaim.systemPrompt).toContain(`[Senders]\n${BOT}: type unknown (says human, unverified)\n`);
  });
});
