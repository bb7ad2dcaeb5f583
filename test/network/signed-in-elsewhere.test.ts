// One identity in two processes (or on two hosts, each with its own state dir, so no lock file
// can see the other): the network takes the newer sign-in and closes the older socket as replaced
// (the local message service closes it with 4002). The older agent must not sign in again — the
// two would take each other's socket in turn for ever — but stop that identity with one clear
// line. Real sockets on 127.0.0.1, the real local network; the two agents stand for two processes.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, loadIdentity, type NetworkAgent } from "../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { tempDir, waitFor } from "./support.ts";

const ALICE = "alice.acp.local";

describe("an identity signed in elsewhere", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  const agents: NetworkAgent[] = [];
  beforeEach(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net` });
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.close();
    await net.close();
    tmp.cleanup();
  });

  it("stops the older connection with a line that says so, and leaves the newer one up", async () => {
    await createIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    const firstLog = createMemoryLogger();
    const first = connectAgent({ identity: loadIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state` }), accessPointUrl: net.accessPointUrl, logger: firstLog, backoff: { baseMs: 10, maxMs: 20 } });
    agents.push(first);
    await first.ready;
    const rejected = new Promise<Error>((resolve) => first.on("rejected", ({ error }) => resolve(error)));

    const second = connectAgent({ identity: loadIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state` }), accessPointUrl: net.accessPointUrl, logger: createMemoryLogger() });
    agents.push(second);
    await second.ready;

    const error = await rejected;
    expect(error.message).toMatch(/alice\.acp\.local is signed in from another process or host/);
    expect((error as { code?: string }).code).toBe("SIGNED_IN_ELSEWHERE");
    expect(first.status).toBe("rejected");
    expect(firstLog.entries.some((e) => e.level === "error" && e.event === "network.signed-in-elsewhere")).toBe(true);
    // The older one does not take the socket back: the newer stays open, signed in once.
    await waitFor(() => second.status === "open", "the newer connection open");
    expect(first.counters().signIns).toBe(1);
    expect(second.counters().socketsOpened).toBe(1);
  });
});
