// Once an identity's message socket opens, its sessions are built under the turn budget
// (src/util/turn-budget.ts): a thousand identities' sockets open in bursts, and building every
// session (a create_session_req each, then the groups' joins and reads) in the turn the sockets
// opened in made it long. Real sockets on 127.0.0.1 and the local network; the budget's clock is
// the test's own, so "the turn used its budget" is a literal step.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, type NetworkAgent } from "../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { createTurnBudget } from "../../src/util/turn-budget.ts";
import { echoAgent, tempDir } from "./support.ts";

const ALICE = "alice.acp.local";
const GROUPS = "group.acp.local";

describe("sessions built under a turn budget", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let agent: NetworkAgent | undefined;
  beforeEach(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, serviceAgents: [echoAgent(GROUPS)] });
  });
  afterEach(async () => {
    await agent?.close();
    await net.close();
    tmp.cleanup();
  });

  it("a socket that opens in a turn with no budget left builds its sessions in a later turn", async () => {
    const identity = await createIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    let t = 0;
    const turns = createTurnBudget({ budgetMs: 10, now: () => t });
    agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, turns, logger: createMemoryLogger(), presence: false });
    const channel = agent.channel(GROUPS);
    const up = new Promise<void>((resolve) => channel.on("up", () => resolve()));
    let waitingRightAfterOpen: number | undefined;
    agent.on("status", ({ status }) => {
      if (status !== "open") return;
      // Another identity's work took this turn's budget (10 ms of the budget's clock).
      turns.run(() => (t += 10));
      // Once the socket's open callback is done: its session waits for a later turn (seen failing
      // before sessions went through the budget: 0 waiting).
      queueMicrotask(() => (waitingRightAfterOpen = turns.waiting));
    });
    await agent.ready;
    await up;
    expect(waitingRightAfterOpen).toBe(1);
    expect(channel.status).toBe("up");
  });
});
