// maxConcurrentDispatches on the loopback network: one identity in three groups, a model that
// takes a while (scripted, mocked LLM), and a counter of calls in flight. Waits are for events
// (a call started or ended, a dispatch queued), never for time to pass.
import { describe, expect, it } from "vitest";
import { parseChannelConfig } from "../../src/config/load.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { startIdentity, type RunningIdentity } from "../../src/runtime/identity.ts";

import type { AgentBackend, GenerateRequest } from "../../src/types.ts";
import type { GroupClientEvent } from "../../src/group/group-client.ts";
import { GENEROUS_BUDGET, currentNetwork, serveGroups, useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";

const ALICE = { aid: "alice.acp.local", name: "Alice" };
const HUMAN = "you.agentcp.io";
const GROUPS = ["g1", "g2", "g3"];

const fx = useRuntimeFixture<RunningIdentity>("concurrency");

/** Wraps a back-end to record the most calls that were ever in flight at once, their order, and how many ended. */
function countingBackend(inner: AgentBackend): AgentBackend & { maxInFlight: number; started: string[]; ended: number } {
  let inFlight = 0;
  const out = {
    name: "counting",
    maxInFlight: 0,
    started: [] as string[],
    ended: 0,
    async generate(req: GenerateRequest) {
      out.started.push(`${req.groupId}:${req.mentionInfo.mentioned ? "mention" : "normal"}`);
      inFlight++;
      out.maxInFlight = Math.max(out.maxInFlight, inFlight);
      try {
        return await inner.generate(req);
      } finally {
        inFlight--;
        out.ended++;
      }
    },
  };
  return out;
}

/** Dispatches started, per group (the group client's dispatch-start: its call is queued for a slot or running). */
let dispatchStarts: Map<string, number>;

async function run(maxConcurrentDispatches: number, opts: { mode?: "silent" | "always"; delay?: object } = {}) {
  const members = { [ALICE.aid]: {}, [HUMAN]: { human: true } };
  fx.server = serveGroups({ groups: Object.fromEntries(GROUPS.map((g) => [g, { members }])), rateLimit: null });
  const state = fx.stateDir();
  const lobby = { bufferGateMs: 30, bufferGateMaxWaitMs: 300, cooldownMs: 30, delay: opts.delay ?? { enabled: false }, budget: GENEROUS_BUDGET };
  const config = parseChannelConfig({
    stateDir: state,
    humans: [HUMAN],
    maxConcurrentDispatches,
    identities: { alice: ALICE },
    groups: Object.fromEntries(GROUPS.map((g) => [g, lobby])),
  });
  const backend = countingBackend(
    createScriptedBackend({ mode: opts.mode ?? "silent", latencyMs: 150, replyText: (r) => `Answer for ${r.groupId}, number ${r.dispatchId}.` }),
  );
  dispatchStarts = new Map();
  const onGroupEvent = (groupId: string, e: GroupClientEvent) => {
    if (e.type === "dispatch-start") dispatchStarts.set(groupId, (dispatchStarts.get(groupId) ?? 0) + 1);
  };
  const alice = fx.track(startIdentity({ config, identityId: "alice", backend, link: currentNetwork().link(ALICE.aid), connection: { heartbeatMs: 0 }, onGroupEvent }));
  await alice.ready;
  return backend;
}

describe("maxConcurrentDispatches", () => {
  it("1: three groups with talk at once get their model calls one after another", async () => {
    const backend = await run(1);
    for (const g of GROUPS) fx.server!.post({ groupId: g, sender: HUMAN, content: `hello ${g}` });
    // All three calls ended: the most ever in flight is final.
    await waitFor(() => backend.ended === 3, "three model calls to end", 5000);
    expect(backend.started).toHaveLength(3);
    expect(backend.maxInFlight).toBe(1);
  });

  it("3: the same three groups run their model calls side by side", async () => {
    const backend = await run(3);
    for (const g of GROUPS) fx.server!.post({ groupId: g, sender: HUMAN, content: `hello ${g}` });
    await waitFor(() => backend.started.length === 3, "three model calls", 5000);
    expect(backend.maxInFlight).toBe(3);
  });

  it("a mention waiting for the slot goes before unaddressed talk that waits too", async () => {
    const backend = await run(1);
    // g1's call takes the only slot; g2's unaddressed talk, then g3's mention, queue behind it.
    fx.server!.post({ groupId: "g1", sender: HUMAN, content: "hello g1" });
    await waitFor(() => backend.started.length === 1, "g1's call");
    fx.server!.post({ groupId: "g2", sender: HUMAN, content: "hello g2" });
    // g2's buffer gate fired: its dispatch started and its call waits for the slot.
    await waitFor(() => dispatchStarts.get("g2") === 1, "g2's dispatch queued for the slot");
    expect(backend.started).toEqual(["g1:normal"]);
    fx.server!.post({ groupId: "g3", sender: HUMAN, content: "Alice, are you there?" });
    await waitFor(() => backend.started.length === 3, "all three calls", 5000);
    expect(backend.started).toEqual(["g1:normal", "g3:mention", "g2:normal"]);
  });

  it("a reply waiting out its send delay holds no slot: another group's call runs meanwhile", async () => {
    // One slot; every reply waits 1.5 s before it is sent. g1's call (150 ms) ends, then its reply
    // waits; g2's call must start during that wait.
    const backend = await run(1, { mode: "always", delay: { enabled: true, fastMs: [1500, 1500], normalMs: [1500, 1500], slowMs: [1500, 1500] } });
    fx.server!.post({ groupId: "g1", sender: HUMAN, content: "hello g1" });
    await waitFor(() => backend.started.length === 1, "g1's call");
    await waitFor(() => backend.ended === 1, "g1's call to end"); // its reply now waits in the delay gate
    fx.server!.post({ groupId: "g2", sender: HUMAN, content: "hello g2" });
    await waitFor(() => backend.started.length === 2, "g2's call", 1000);
    // g1's reply has not been sent yet: g2's call did not wait for it.
    expect(fx.server!.history("g1").filter((m) => m.sender === ALICE.aid)).toEqual([]);
    await waitFor(() => fx.server!.history("g1").some((m) => m.sender === ALICE.aid), "g1's reply", 3000);
  });
});
