// After a drop, an identity whose socket had opened signs in again at the message service alone:
// the access point's config named the servers already, and the access point sign-in (one more
// signed nonce and three requests) was most of a reconnect storm's CPU on both ends. A reconnect
// that fails anywhere asks the access point again. Real sockets on 127.0.0.1, the local network,
// whose own log says where each sign-in went.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createHttpClient, createIdentity, type HttpClient, type NetworkAgent } from "../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { tempDir, waitFor } from "./support.ts";

const ALICE = "alice.acp.local";

describe("signing in again after a drop", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let agent: NetworkAgent | undefined;
  const netLog = createMemoryLogger();
  const signIns = () => netLog.entries.filter((e) => e.event === "access-point.sign-in-ok").map((e) => e.fields.where);
  beforeEach(async () => {
    tmp = tempDir();
    netLog.entries.length = 0;
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, logger: netLog });
  });
  afterEach(async () => {
    await agent?.close();
    await net.close();
    tmp.cleanup();
  });

  it("goes to the message service alone while the route holds, and to the access point again after a failed try", async () => {
    const identity = await createIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    // The real HTTP client, but the next message-service sign-in can be made to fail (a 503) once.
    const real = createHttpClient();
    let failNext = false;
    const http: HttpClient = {
      request: (url, init) => real.request(url, init),
      postJson: async (url, body, init) => {
        if (failNext && url.includes("/message/sign_in")) {
          failNext = false;
          return { status: 503, headers: {}, text: "{}", json: {} };
        }
        return real.postJson(url, body, init);
      },
      close: () => real.close(),
    };
    agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, http, logger: createMemoryLogger(), backoff: { baseMs: 10, maxMs: 20 }, stableMs: 0 });
    await agent.ready;
    expect(signIns().filter((w) => w !== "heartbeat")).toEqual(["accesspoint", "message"]);

    // The network drops the socket: back with one sign-in, at the message service.
    net.dropSockets(ALICE);
    await waitFor(() => agent!.counters().socketsOpened === 2, "the second socket open");
    expect(signIns().filter((w) => w !== "heartbeat")).toEqual(["accesspoint", "message", "message"]);

    // A try that fails (the message service answers 503 once) starts over at the access point.
    failNext = true;
    net.dropSockets(ALICE);
    await waitFor(() => agent!.counters().socketsOpened === 3, "the third socket open");
    expect(signIns().filter((w) => w !== "heartbeat")).toEqual(["accesspoint", "message", "message", "accesspoint", "message"]);
    expect(agent.counters().signInFailures).toBe(1);
  });
});
