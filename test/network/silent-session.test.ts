// A session that goes silent while its socket stays up, on the local network: the message service
// still holds the socket (pings answered, nothing closed), but everything sent on our session with
// the group service vanishes — as when a real service forgot the session without telling us. The
// client must notice within a request timeout (no answer and no push since the request went out),
// build a new session on the same socket, register there, and hear pushes again. Real sockets on
// 127.0.0.1, the real group service behind a switch that drops what reaches it on one session.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, type NetworkAgent } from "../../src/network/index.ts";
import { createGroupService, type GroupService } from "../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import type { ServiceAgent } from "../../src/server/service-agent.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { tempDir, waitFor } from "./support.ts";

const DOMAIN = "acp.local";
const ALICE = `alice.${DOMAIN}`;
const BOB = `bob.${DOMAIN}`;

/** The real group service, deaf to the sessions in `muted` (their frames never reach it). */
function deafOn(service: GroupService, muted: Set<string>, seen: string[]): ServiceAgent {
  return {
    aid: service.aid,
    attach: (host) => service.attach(host),
    onMessage: (m) => {
      if (!seen.includes(m.sessionId)) seen.push(m.sessionId);
      if (!muted.has(m.sessionId)) service.onMessage(m);
    },
    onSessionEnd: (e) => service.onSessionEnd(e),
  };
}

describe("a session silent while its socket is up", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let service: GroupService;
  let agent: NetworkAgent | undefined;
  let conn: GroupConnection | undefined;
  const muted = new Set<string>();
  const seen: string[] = [];
  beforeEach(async () => {
    tmp = tempDir();
    muted.clear();
    seen.length = 0;
    service = createGroupService({ domain: DOMAIN, groups: { lobby: { members: { [ALICE]: {}, [BOB]: {} } } }, rateLimit: null });
    net = await startLocalNetwork({ domain: DOMAIN, stateDir: `${tmp.dir}/net`, serviceAgents: [deafOn(service, muted, seen)] });
  });
  afterEach(async () => {
    await conn?.close();
    await agent?.close();
    await net.close();
    tmp.cleanup();
  });

  it("is rebuilt on the same socket within a request timeout, registered again, and pushes reach us", async () => {
    const identity = await createIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    const logger = createMemoryLogger();
    agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, logger });
    const fed: string[] = [];
    let last = 0;
    conn = createGroupConnection({
      channel: agent.channel(`group.${DOMAIN}`),
      aid: ALICE,
      groups: ["lobby"],
      getCursor: () => last,
      onMessages: (_g, messages) => {
        for (const m of messages) {
          last = Math.max(last, Number(m.msgId));
          fed.push(m.content);
        }
      },
      logger,
      // A beat every 500 ms asks the service something; 1.5 s without any answer is silence.
      heartbeatMs: 500,
      requestTimeoutMs: 1500,
      registerTimeoutMs: 1500,
    });
    void conn.start().catch(() => {});
    await waitFor(() => service.onlineAids("lobby").includes(ALICE), "registered online", 5000);
    service.post({ groupId: "lobby", sender: BOB, content: "before" });
    await waitFor(() => fed.includes("before"), "the first push", 3000);
    const socketsBefore = agent.counters().socketsOpened;

    // The service goes deaf on our session; the socket stays up.
    const first = seen[0]!;
    muted.add(first);
    await waitFor(() => conn!.counters().silentSessions === 1, "the silence noticed", 8000);
    await waitFor(() => seen.length === 2 && service.onlineAids("lobby").includes(ALICE), "a new session, registered", 8000);
    service.post({ groupId: "lobby", sender: BOB, content: "after" });
    await waitFor(() => fed.includes("after"), "the push on the new session", 3000);

    expect(seen[1]).not.toBe(first);
    expect(fed).toEqual(["before", "after"]);
    expect(agent.counters().socketsOpened).toBe(socketsBefore); // the same socket all along
    expect(logger.entries.some((e) => e.event === "transport.session-silent")).toBe(true);
  }, 30_000);
});
