// A group citizen, over real sockets on the local network: the group service's announcement and
// rules reach the agent's prompt (its group layer, after the identity's prefix), an update reaches
// it through the service's event log (`announcement_updated`), and a reply longer than the group's
// `max_message_size` (from `get_rules`) is cut to it before it is sent — the service takes it.
// The model is the scripted back-end (no LLM here), recording each request.
import { describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { createGroupConnection } from "../../src/transport/connection.ts";
import type { AgentBackend, GenerateRequest } from "../../src/types.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, HUMAN, lobbyConfig, startRecorded, useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("group-profile");
const FAST = { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };
const QUICK = { backoff: { baseMs: 20, maxMs: 100 }, stableMs: 0 };
const LONG = "Here is the whole plan 🚀 for the release: we freeze on Monday, test on Tuesday, fix on Wednesday, ship on Thursday 👍🏽 and rest on Friday.";

describe("the group's announcement, rules and message size", () => {
  it("are in the prompt's group layer, an update arrives by the event log, and a long reply is cut to max_message_size and stored", async () => {
    const stateDir = fx.stateDir();
    const dev = await startDevNetwork({
      stateDir,
      groups: { [GROUP]: { members: { [HUMAN]: { human: true }, [AGENTS.alice.aid]: {} }, announcement: "Release freeze until Friday.", rules: "English only." } },
      rateLimit: null,
      maxMessageChars: 80,
    });
    fx.server = dev.service;
    try {
      const identity = await dev.identity(AGENTS.alice.aid);
      const requests: GenerateRequest[] = [];
      const inner = createScriptedBackend({ mode: "mention", replyText: LONG });
      const backend: AgentBackend = { name: inner.name, generate: (r) => (requests.push(r), inner.generate(r)) };
      const config = lobbyConfig({ stateDir, agents: ["alice"], lobby: FAST });
      const logger = createMemoryLogger();
      const alice = fx.track(startRecorded({ config, identityId: "alice", backend, logger, connect: ({ logger: l }) => dev.connect(identity, l, QUICK) }));
      const profileReads = () => logger.entries.filter((e) => e.event === "runtime.group-profile");
      await alice.ready;

      const you = dev.connect(await dev.identity(HUMAN), undefined, QUICK);
      const conn = createGroupConnection({ channel: you.channel(dev.service.aid), aid: HUMAN, groups: [GROUP], getCursor: () => 0, onMessages: () => {} });
      await conn.start();
      const fromAlice = () => dev.service.history(GROUP).filter((m) => m.sender === AGENTS.alice.aid);

      await conn.sendMessage({ groupId: GROUP, content: "Alice, what is the plan?" });
      await waitFor(() => fromAlice().length === 1, "alice's first answer");
      expect(requests[0]!.stablePrefix).toContain("\n\n## This group\n");
      expect(requests[0]!.stablePrefix).toContain("- Announcement: Release freeze until Friday.\n- Rules: English only.\n- The group accepts messages of at most 80 characters.");
      expect(requests[0]!.systemPrompt).toContain("\nmax_chars=80");
      // Cut to the group's size and stored (the service refuses anything longer with 1009).
      const first = fromAlice()[0]!.content;
      expect(first.length).toBeLessThanOrEqual(80);
      expect(first.endsWith("…")).toBe(true);
      expect(LONG.startsWith(first.slice(0, -1).trimEnd())).toBe(true);

      // The group's admin changes the announcement: the event log tells alice, who reads it again.
      dev.service.updateGroupProfile(GROUP, { announcement: "The freeze is over." }, HUMAN);
      await waitFor(() => profileReads().length === 2, "the profile read again after announcement_updated");
      expect(profileReads().map((e) => e.fields.group)).toEqual([GROUP, GROUP]);
      await conn.sendMessage({ groupId: GROUP, content: "Alice, and now?" });
      // (Her answer would repeat the first and is skipped as a duplicate; the request is what counts.)
      await waitFor(() => requests.length === 2, "alice's second model call");
      const latest = requests.at(-1)!;
      expect(latest.stablePrefix).toContain("- Announcement: The freeze is over.\n- Rules: English only.");
      expect(latest.stablePrefix).not.toContain("Release freeze until Friday.");
      expect(dev.service.events(GROUP).map((e) => e.event_type)).toEqual(["announcement_updated"]);
      await conn.close();
      await you.close();
    } finally {
      await Promise.all(fx.running.map((r) => r.close()));
      await dev.close();
    }
  }, 30_000);
});
