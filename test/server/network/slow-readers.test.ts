// A socket that does not read costs the server little and nobody else's latency (real sockets on
// 127.0.0.1): the message service sends a socket at most outputCreditBytes of answers before the
// socket proves it reads them (a pong to a ping sent behind them); until then its requests wait,
// and past maxUnconfirmedBytes of output (pushes it did not ask for) or a full backlog it is closed.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openRawSession, type RawSession } from "../../../bench/raw-session.ts";
import { createIdentity, type Identity } from "../../../src/network/index.ts";
import { createGroupService, type GroupService } from "../../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { tempDir, waitFor } from "../../network/support.ts";

const GROUP = "lobby";
const AIDS = ["slow.acp.local", "good.acp.local", "poster.acp.local"];

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
const sessions: RawSession[] = [];
afterEach(async () => {
  sessions.splice(0).forEach((s) => s.close());
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

async function setup(): Promise<{ service: GroupService; ids: Identity[]; open(i: number): Promise<RawSession> }> {
  tmp = tempDir();
  const service = createGroupService({ domain: "acp.local", groups: { [GROUP]: { members: Object.fromEntries(AIDS.map((a) => [a, {}])) } }, rateLimit: null });
  // 50 messages of ~1 KB: every pull of 50 answers ~55 KB.
  for (let i = 0; i < 50; i++) service.post({ groupId: GROUP, sender: AIDS[2]!, content: `${i} ${"x".repeat(1000)}` });
  net = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "net"), serviceAgents: [service] });
  const ids = await Promise.all(AIDS.map((aid) => createIdentity({ aid, stateDir: join(tmp.dir, "ids"), accessPointUrl: net!.localUrl, noPassphrase: true })));
  return {
    service,
    ids,
    async open(i) {
      const s = await openRawSession({ localUrl: net!.localUrl, identity: ids[i]!, service: service.aid });
      sessions.push(s);
      return s;
    },
  };
}

const pull = (n: number) => ({ action: "pull_messages", request_id: `p${n}`, group_id: GROUP, params: { after_msg_id: 0, limit: 50 } });

describe("slow readers are cheap (real sockets, default limits)", () => {
  it("a socket that floods pulls and never reads gets a few answers (≤ 256 KiB unconfirmed), then is closed; a good member is answered meanwhile", async () => {
    const { service, open } = await setup();
    const slow = await open(0);
    const good = await open(1);
    slow.stopReading();
    const before = service.counters().requests;
    for (let i = 0; i < 2000; i++) slow.send(pull(i));
    const answer = await good.request({ action: "pull_messages", request_id: "g1", group_id: GROUP, params: { after_msg_id: 49, limit: 5 } });
    expect(answer.code).toBe(0);
    await waitFor(() => net!.counters().slowClosed >= 1, "the slow socket closed", 5000);
    // 256 KiB of ~55 KB answers is 5 of them (the one that crosses the line included), plus the good member's.
    expect(service.counters().requests - before).toBeLessThanOrEqual(7);
    await waitFor(() => !net!.connectedAids().includes(AIDS[0]!), "the slow socket gone", 5000);
  });

  it("a member that reads is never held back: 100 pulls of ~55 KB in a row (5.5 MB) all answered, nothing closed", async () => {
    const { open } = await setup();
    const good = await open(1);
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => good.request(pull(i))));
    expect(answers.every((a) => a.code === 0)).toBe(true);
    expect(net!.counters().slowClosed).toBe(0);
  });

  it("a member registered online that never reads is closed once 2 MiB of pushes go unconfirmed", async () => {
    const { service, open } = await setup();
    const slow = await open(0);
    await slow.request({ action: "register_online", request_id: "r1" });
    slow.stopReading();
    // 200 messages of ~30 KB (pushed in batches of ≤ 512 KiB): 6 MB for a socket that reads nothing.
    for (let i = 0; i < 200; i++) service.post({ groupId: GROUP, sender: AIDS[2]!, content: `${i} ${"y".repeat(30_000)}` });
    await waitFor(() => net!.counters().slowClosed >= 1, "the slow socket closed", 5000);
  });
});
