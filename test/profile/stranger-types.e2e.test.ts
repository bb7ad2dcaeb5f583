// On the local profile host (real node:http on 127.0.0.1): strangers publish their agent.md, we
// read them, and the real group client + monitor (fake timers from there on) stop an agent-only
// exchange with the stranger agent — with no `humans`/`agents` config. A stranger whose own
// profile says human is not taken at its word (a bot could say so); one the group service
// reports as a person gets through. The model is the deterministic scripted back-end (no LLM here).
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

const TOKENS: Record<string, string> = { "stranger.agentcp.io": "t-s", "dave.agentcp.io": "t-d" };

let server: Server | undefined;
afterEach(async () => {
  vi.useRealTimers();
  if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  server = undefined;
});

function gm(id: number, atMs: number, content: string, sender: string): GroupMessage {
  return { msgId: String(id), groupId: "g1", sender, content, contentType: "text", timestamp: T0 + atMs, metadata: null };
}

describe("member types from strangers' agent.md (local profile host)", () => {
  it("the loop guard stops an agent-only exchange with a stranger agent without config; a self-declared human is held too, a service-reported one goes through", async () => {
    const store = createMemoryAgentMdStore();
    server = createServer((req, res) => void handleAgentMdRequest(req, res, { verifyToken: (aid, t) => TOKENS[aid] === t, store }));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
    const fetch = createAgentMdFetch({ via: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    const publish = (aid: string, type: string) =>
      publishAgentMd({ aid, text: `---\naid: ${aid}\nname: ${aid.split(".")[0]}\ntype: ${type}\n---\n# x\n`, token: TOKENS[aid]!, fetch });
    expect(await publish("stranger.agentcp.io", "agent")).toMatchObject({ ok: true });
    expect(await publish("dave.agentcp.io", "human")).toMatchObject({ ok: true });

    // No humans, no agents configured: only the owner is known.
    const directory = new MemberDirectory({ humans: [], agents: [], owner: ALICE.owner });
    const logger = createMemoryLogger();
    const lookup = new ProfileLookup({ directory, fetch, logger, now: () => Date.now() });
    expect(directory.typeOf("stranger.agentcp.io").type).toBe("unknown");
    await Promise.all([lookup.lookup("stranger.agentcp.io"), lookup.lookup("dave.agentcp.io"), lookup.lookup("nobody.agentcp.io")]);
    expect(directory.typeOf("stranger.agentcp.io")).toEqual({ type: "agent", source: "profile" });
    expect(directory.typeOf("dave.agentcp.io")).toEqual({ type: "unknown", source: "profile", claim: "human" });
    expect(directory.typeOf("nobody.agentcp.io")).toEqual({ type: "unknown", source: "none" });
    lookup.close();

    vi.useFakeTimers({ now: T0 });
    const at = async (ms: number) => vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
    const settings = settingsWith({ maxAgentChain: 2, delay: { enabled: false } });
    const sender = recordingSender(() => Date.now());
    const backend = createScriptedBackend({ mode: "always", replyText: (r) => `answer number ${r.dispatchId} for you.` });
    const decisions: DispatchDecision[] = [];
    const monitor = createGroupMonitor({ identityId: "alice", identity: ALICE, groupId: "g1", settings, humans: [], memberTypes: directory, backend, sender, onDecision: (d) => decisions.push(d) });
    const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings, dispatch: monitor.handle });

    directory.recordService("erin.agentcp.io", "human");
    // T+0, T+10s, T+20s: the stranger agent addresses Alice; T+30s: dave (human by his own word)
    // does; T+40s: erin (a person, says the group service) does.
    client.feedBufferGate([gm(1, 0, "Alice, ping one", "stranger.agentcp.io")]);
    await at(10_000);
    client.feedBufferGate([gm(3, 10_000, "Alice, ping two", "stranger.agentcp.io")]);
    await at(20_000);
    client.feedBufferGate([gm(5, 20_000, "Alice, ping three", "stranger.agentcp.io")]);
    await at(30_000);
    client.feedBufferGate([gm(6, 30_000, "Alice, what is going on here?", "dave.agentcp.io")]);
    await at(40_000);
    client.feedBufferGate([gm(7, 40_000, "Alice, can you stop for a moment?", "erin.agentcp.io")]);
    await at(41_000);

    expect(decisions.map((d) => [d.at - T0, d.outcome.kind === "sent", reasonOf(d.outcome) ?? null, d.agentChain])).toEqual([
      [0, true, null, 1],
      [10_000, true, null, 2],
      [20_000, false, "bot-loop-guard", 2],
      [30_000, false, "bot-loop-guard", 2],
      [40_000, true, null, 0],
    ]);
    expect(sender.sent.map((s) => s.content)).toEqual(["answer number 1 for you.", "answer number 2 for you.", "answer number 5 for you."]);
    // The prompt told the model who is who.
    expect(backend.calls[0]!.systemPrompt).toContain("[Senders]\nstranger.agentcp.io: agent\n");
    expect(backend.calls[2]!.systemPrompt).toContain("[Senders]\nerin.agentcp.io: human\n");

    monitor.close();
    await client.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
