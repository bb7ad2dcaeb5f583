// Heard from the first second, on a strict network: the local network plays a message service
// where the group service joins a new session a moment after invite_agent_req (and only then sends
// invite_agent_ack), and drops every session frame sent to it before that. A client that used the
// session at once lost its register_online there and got no pushes until a later heartbeat slot
// (minutes); ours waits for the ack, so after the first sign-in and after each reconnect the
// service registers it within seconds and pushes reach it. Real sockets on 127.0.0.1, the real
// group service, the network agent and the group connection.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, type NetworkAgent } from "../../src/network/index.ts";
import { createGroupService, type GroupService } from "../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { tempDir, waitFor } from "./support.ts";

const DOMAIN = "acp.local";
const ALICE = `alice.${DOMAIN}`;
const BOB = `bob.${DOMAIN}`;

describe("a strict network drops what is sent before the group service joined the session", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let service: GroupService;
  let agent: NetworkAgent | undefined;
  let conn: GroupConnection | undefined;
  beforeEach(async () => {
    tmp = tempDir();
    service = createGroupService({ domain: DOMAIN, groups: { lobby: { members: { [ALICE]: {}, [BOB]: {} } } }, rateLimit: null });
    net = await startLocalNetwork({ domain: DOMAIN, stateDir: `${tmp.dir}/net`, serviceAgents: [service], strictInviteDelayMs: 250 });
  });
  afterEach(async () => {
    await conn?.close();
    await agent?.close();
    await net.close();
    tmp.cleanup();
  });

  it("the service registers us and pushes reach us within seconds of the first session and of each reconnect; nothing of ours is dropped", async () => {
    const identity = await createIdentity({ aid: ALICE, stateDir: `${tmp.dir}/state`, accessPointUrl: net.accessPointUrl, noPassphrase: true });
    const logger = createMemoryLogger();
    agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, logger, backoff: { baseMs: 100, maxMs: 200 } });
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
    });
    void conn.start().catch(() => {});
    for (const round of [1, 2, 3]) {
      if (round > 1) {
        // The socket drops like a network failure; the agent signs in again and builds a new session.
        const sessions = net.counters().sessionsCreated;
        net.dropSockets(ALICE);
        await waitFor(() => net.counters().sessionsCreated > sessions && service.onlineAids("lobby").length === 0, `round ${round}: the old session gone, a new one made`);
      }
      // Within seconds, not at a heartbeat slot minutes away.
      await waitFor(() => service.onlineAids("lobby").includes(ALICE), `round ${round}: registered online`, 5000);
      await waitFor(() => conn!.status === "open", `round ${round}: open`, 5000);
      service.post({ groupId: "lobby", sender: BOB, content: `round ${round}` });
      await waitFor(() => fed.includes(`round ${round}`), `round ${round}: the push`, 3000);
    }
    expect(fed).toEqual(["round 1", "round 2", "round 3"]);
    expect(net.counters().droppedBeforeJoin).toBe(0);
    expect(conn.counters()).toMatchObject({ registerFailures: 0, silentSessions: 0 });
  });
});
