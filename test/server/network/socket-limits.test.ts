// The message service survives slow and silent sockets (real sockets on 127.0.0.1, real keys):
// a socket that floods requests and never reads stops being served once its unsent output passes
// a limit and is closed when it stops draining; silent sockets are dropped; sockets are limited in
// total (one per aid); a frame over the limit is refused from its header.
import WebSocket from "ws";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openRawSession, type RawSession } from "../../../bench/raw-session.ts";
import { createIdentity, createHttpClient, signIn, type Identity } from "../../../src/network/index.ts";
import { createGroupService, type GroupService } from "../../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork, type LocalNetworkOptions } from "../../../src/server/network/index.ts";
import { tempDir, waitFor } from "../../network/support.ts";

const GROUP = "lobby";
const AIDS = ["flood.acp.local", "good.acp.local", "c.acp.local", "d.acp.local"];

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
const sessions: RawSession[] = [];
afterEach(async () => {
  sessions.splice(0).forEach((s) => s.close());
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

async function setup(opts: Pick<LocalNetworkOptions, "socketLimits" | "pingIntervalMs">): Promise<{ service: GroupService; ids: Identity[]; open(i: number): Promise<RawSession> }> {
  tmp = tempDir();
  const service = createGroupService({ domain: "acp.local", groups: { [GROUP]: { members: Object.fromEntries(AIDS.map((a) => [a, {}])) } }, rateLimit: null });
  // 50 messages of ~1 KB: every pull answers ~55 KB.
  for (let i = 0; i < 50; i++) service.post({ groupId: GROUP, sender: AIDS[1]!, content: `${i} ${"x".repeat(1000)}` });
  net = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "net"), serviceAgents: [service], ...opts });
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

describe("slow and silent sockets (real sockets)", () => {
  it("a socket that floods requests and never reads stops being served past its output limit, then is closed; a well-behaved member is served meanwhile", async () => {
    // The output credit (slow-readers.test.ts) would hold this socket first: set out of reach, so the pause on unsent output is what is tested here.
    const { service, open } = await setup({ socketLimits: { pauseBufferedBytes: 256 * 1024, maxBufferedBytes: 2 * 1024 * 1024, outputCreditBytes: 1 << 30, maxUnconfirmedBytes: 1 << 30, maxBacklogBytes: 256 * 1024 }, pingIntervalMs: 400 });
    const flood = await open(0);
    const good = await open(1);
    flood.stopReading();
    for (let i = 0; i < 2000; i++) flood.send(pull(i));
    await waitFor(() => net!.counters().pausedSockets >= 1, "the flooding socket paused", 10_000);
    const servedAtPause = service.counters().requests;
    // 2000 answers of ~55 KB would be ~110 MB held for a socket that reads nothing.
    expect(servedAtPause).toBeLessThan(1000);
    const answer = await good.request({ action: "pull_messages", request_id: "g1", group_id: GROUP, params: { after_msg_id: 49, limit: 5 } });
    expect(answer.code).toBe(0);
    // Paused for a full ping interval without draining: closed (the good socket stays).
    await waitFor(() => net!.counters().slowClosed >= 1, "the flooding socket closed", 10_000);
    // (The flooder itself notices only when it reads again: its socket is paused.)
    expect(service.counters().requests).toBeLessThan(1000);
    // Its close event follows the terminate: wait for it; the good socket stays.
    await waitFor(() => net!.connectedAids().length === 1, "the flooding socket gone", 5000);
    expect(net!.connectedAids()).toEqual([AIDS[1]]);
  }, 30_000);

  it("sockets are limited in total: past the limit an upgrade answers 503; the same aid again replaces its older socket", async () => {
    const { open } = await setup({ socketLimits: { maxConnections: 2 } });
    const first = await open(0);
    await open(1);
    await expect(open(2)).rejects.toThrow("upgrade refused: 503");
    expect(net!.counters().refusedFull).toBe(1);
    // One socket per aid: a second one for aid 0 is let in and closes the first (4002).
    await open(0);
    expect(await first.closed).toBe(4002);
    expect(net!.connectedAids().sort()).toEqual([AIDS[0], AIDS[1]]);
  });

  it("a 60 MB frame is refused from its header (1009) and the socket closed; a socket that answers no ping is dropped", async () => {
    const { ids } = await setup({ pingIntervalMs: 200 });
    const token = await signIn({ url: `${net!.localUrl}/api/message/sign_in`, identity: ids[2]!, http: createHttpClient() });
    const dial = (aid: string, tok: string, autoPong = true) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`${net!.localUrl.replace("http", "ws")}/session?agent_id=${aid}&signature=${tok}`, { autoPong });
        ws.once("open", () => resolve(ws));
        ws.once("error", reject);
      });
    const big = await dial(AIDS[2]!, token);
    const closed = new Promise<number>((resolve) => big.once("close", (code) => resolve(code)));
    big.on("error", () => {});
    big.send("x".repeat(60 * 1024 * 1024));
    expect(await closed).toBe(1009);
    const token2 = await signIn({ url: `${net!.localUrl}/api/message/sign_in`, identity: ids[3]!, http: createHttpClient() });
    const silent = await dial(AIDS[3]!, token2, false);
    silent.on("error", () => {});
    await new Promise<void>((resolve) => silent.once("close", () => resolve()));
    expect(net!.counters().deadClosed).toBeGreaterThanOrEqual(1);
  });
});
