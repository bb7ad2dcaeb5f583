// Requests are served round-robin across sockets (real sockets on 127.0.0.1): a socket that sends
// many requests at once has them served one per turn, interleaved with everyone else's, so one
// busy socket never makes another wait behind its whole burst. Observed by the order in which the
// group service (wrapped to record each request's sender) receives them, not by timing.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openRawSession, type RawSession } from "../../../bench/raw-session.ts";
import { createIdentity } from "../../../src/network/index.ts";
import { createGroupService } from "../../../src/server/group-service.ts";
import type { ServiceAgent } from "../../../src/server/service-agent.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { tempDir, waitFor } from "../../network/support.ts";

const GROUP = "lobby";
const AIDS = ["a.acp.local", "b.acp.local", "c.acp.local"];

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
const sessions: RawSession[] = [];
afterEach(async () => {
  sessions.splice(0).forEach((s) => s.close());
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

/** The longest run of consecutive entries from the same sender. */
function longestRun(order: string[]): number {
  let best = 0;
  let run = 0;
  order.forEach((who, i) => {
    run = i > 0 && order[i - 1] === who ? run + 1 : 1;
    best = Math.max(best, run);
  });
  return best;
}

describe("requests are served round-robin across sockets", () => {
  it("three sockets each sending 30 requests at once are served interleaved (no sender twice in a row past 2), all answered", async () => {
    tmp = tempDir();
    const service = createGroupService({ domain: "acp.local", groups: { [GROUP]: { members: Object.fromEntries(AIDS.map((a) => [a, {}])) } }, rateLimit: null });
    service.post({ groupId: GROUP, sender: AIDS[2]!, content: "hello" });
    const order: string[] = [];
    let recording = false;
    // The real group service, wrapped only to note who each request came from.
    const recorder: ServiceAgent = {
      aid: service.aid,
      attach: (host) => service.attach(host),
      onMessage: (p) => {
        if (recording) order.push(p.from);
        service.onMessage(p);
      },
      onSessionEnd: (p) => service.onSessionEnd(p),
    };
    net = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "net"), serviceAgents: [recorder] });
    const ids = await Promise.all(AIDS.map((aid) => createIdentity({ aid, stateDir: join(tmp.dir, "ids"), accessPointUrl: net!.localUrl, noPassphrase: true })));
    for (const identity of ids) sessions.push(await openRawSession({ localUrl: net.localUrl, identity, service: service.aid }));
    recording = true;
    // All 90 requests are written in one tick, before the server reads any of them.
    const answers = sessions.flatMap((s, k) =>
      Array.from({ length: 30 }, (_, i) => s.request({ action: "pull_messages", request_id: `r${k}-${i}`, group_id: GROUP, params: { after_msg_id: 0, limit: 1 } })),
    );
    const all = await Promise.all(answers);
    expect(all.every((a) => a.code === 0)).toBe(true);
    await waitFor(() => order.length === 90, "all 90 requests reached the service", 5000);
    expect(new Set(order)).toEqual(new Set(AIDS));
    // Served in arrival order per socket, one socket's whole burst first: a run of 30.
    expect(longestRun(order)).toBeLessThanOrEqual(2);
    expect(net.counters().slowClosed).toBe(0);
  });

  it("a reading socket that sends 500 requests at once (past the 64 KiB held) is read again as they are served: all answered, nothing closed", async () => {
    tmp = tempDir();
    const service = createGroupService({ domain: "acp.local", groups: { [GROUP]: { members: Object.fromEntries(AIDS.map((a) => [a, {}])) } }, rateLimit: null });
    service.post({ groupId: GROUP, sender: AIDS[2]!, content: "hello" });
    net = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "net"), serviceAgents: [service] });
    const identity = await createIdentity({ aid: AIDS[0]!, stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    const s = await openRawSession({ localUrl: net.localUrl, identity, service: service.aid });
    sessions.push(s);
    // Each request frame is ~250 bytes: 500 of them are ~125 KB, about twice what is held before reading stops.
    const all = await Promise.all(
      Array.from({ length: 500 }, (_, i) => s.request({ action: "pull_messages", request_id: `r${i}`, group_id: GROUP, params: { after_msg_id: 0, limit: 1 } })),
    );
    expect(all.filter((a) => a.code === 0)).toHaveLength(500);
    expect(net.counters().slowClosed).toBe(0);
  });
});
