// A network restart with many identities in one process (real sockets, the local network stopped
// and started again on the same port): their sign-ins share one pace — never more than its
// concurrency at once — and the ones waiting out a long backoff are woken as soon as one of them
// gets back in, the most urgent first. Without the wake-up they would wait 30–60 s (their backoff).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { connectAgent, createIdentity, type Identity, type NetworkAgent } from "../../src/network/index.ts";
import { SignInPace } from "../../src/network/sign-in-pace.ts";
import { echoAgent, tempDir, waitFor } from "./support.ts";

describe("paced sign-ins after a network restart", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  const agents: NetworkAgent[] = [];
  const start = (port?: number) => startLocalNetwork({ domain: "acp.test", stateDir: `${tmp.dir}/net`, ...(port ? { port } : {}), serviceAgents: [echoAgent("group.acp.test")] });
  beforeEach(async () => {
    tmp = tempDir();
    net = await start();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
    await net.close();
    tmp.cleanup();
  });

  it("six identities on a minute's backoff are back right after the one on a short backoff, one at a time, most urgent first", async () => {
    const pace = new SignInPace({ concurrency: 1, jitterMs: 0 });
    const names = ["scout", "a1", "a2", "a3", "a4", "a5", "a6"];
    const identities: Identity[] = [];
    for (const name of names) identities.push(await createIdentity({ aid: `${name}.acp.test`, stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true }));
    // a6 most urgent (a mention waits), then a5 … a1 by latest activity.
    const urgency: Record<string, number> = { scout: 0, a1: 10, a2: 20, a3: 30, a4: 40, a5: 50, a6: Number.MAX_SAFE_INTEGER };
    const opened: string[] = [];
    let peak = 0;
    for (const [i, identity] of identities.entries()) {
      const name = names[i]!;
      const agent = connectAgent({
        identity,
        accessPointUrl: net.localUrl,
        signInPace: pace,
        signInPriority: () => urgency[name]!,
        // Every drop counts as a stable socket's: redial at once, then the backoff.
        stableMs: 0,
        backoff: name === "scout" ? { baseMs: 100, maxMs: 100 } : { baseMs: 60_000, maxMs: 60_000 },
      });
      agent.on("status", ({ status }) => {
        peak = Math.max(peak, pace.active);
        if (status === "open") opened.push(name);
      });
      agents.push(agent);
    }
    await Promise.all(agents.map((a) => a.ready));
    expect(peak).toBeLessThanOrEqual(1);
    const port = net.port;
    await net.close();
    // Every identity tried again at once (a closing server may even take one back briefly),
    // failed, and waits out its backoff.
    await waitFor(() => agents.every((a) => a.status === "waiting") && pace.active === 0, "all waiting");
    opened.length = 0;
    net = await start(port);
    // The scout is back within its 100 ms backoff; it wakes the six, which come back one after
    // another by urgency — long before their minute.
    await waitFor(() => agents.every((a) => a.status === "open"), () => `all open again (opened: ${opened.join(", ")})`, 10_000);
    expect(opened).toEqual(["scout", "a6", "a5", "a4", "a3", "a2", "a1"]);
    expect(peak).toBeLessThanOrEqual(1);
  });
});
