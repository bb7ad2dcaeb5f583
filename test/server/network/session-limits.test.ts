// Sessions are bounded (real sockets on the local network): one socket cannot open sessions
// without end (each costs the server memory until the socket closes), a session everyone left is
// gone, and a member registered online in many sessions gets each push a bounded number of times.
import WebSocket from "ws";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClient, createIdentity, signIn, type Identity } from "../../../src/network/index.ts";
import { createGroupService } from "../../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { tempDir, waitFor } from "../../network/support.ts";

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
  sockets.splice(0).forEach((ws) => ws.terminate());
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

type Frame = { cmd: string; data: Record<string, unknown> };

async function dial(identity: Identity): Promise<{ ws: WebSocket; frames: Frame[]; next(cmd: string, requestId: string): Promise<Record<string, unknown>> }> {
  const token = await signIn({ url: `${net!.localUrl}/api/message/sign_in`, identity, http: createHttpClient() });
  const ws = new WebSocket(`${net!.localUrl.replace(/^http/, "ws")}/session?agent_id=${identity.aid}&signature=${token}`);
  sockets.push(ws);
  const frames: Frame[] = [];
  ws.on("message", (raw) => frames.push(JSON.parse(raw.toString()) as Frame));
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  const next = (cmd: string, requestId: string) => waitFor(() => frames.find((f) => f.cmd === cmd && f.data.request_id === requestId)?.data, `${cmd} ${requestId}`);
  return { ws, frames, next };
}

const create = (ws: WebSocket, requestId: string) => ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id: requestId } }));

describe("sessions per socket and online registrations are bounded (real sockets)", () => {
  it("past maxSessionsPerAid a create_session_req is answered 429 and nothing is kept; leaving a session makes room again", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net"), socketLimits: { maxSessionsPerAid: 16 } });
    const id = await createIdentity({ aid: "flood.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    const { ws, frames, next } = await dial(id);
    for (let i = 0; i < 100; i++) create(ws, `c${i}`);
    await next("create_session_ack", "c99");
    const acks = frames.filter((f) => f.cmd === "create_session_ack").map((f) => f.data);
    expect(acks.filter((a) => a.status_code === 200)).toHaveLength(16);
    expect(acks.filter((a) => a.status_code === 429)).toHaveLength(84);
    expect(acks.find((a) => a.status_code === 429)).toMatchObject({ message: "too many sessions", session_id: "" });
    expect(net.counters().sessionsCreated).toBe(16);
    expect(net.counters().refusedSessions).toBe(84);
    ws.send(JSON.stringify({ cmd: "leave_session_req", data: { session_id: acks[0]!.session_id } }));
    create(ws, "again");
    expect(await next("create_session_ack", "again")).toMatchObject({ status_code: 200 });
  });

  it("a member registered online in 20 sessions gets a new message pushed to at most 8 of them", async () => {
    tmp = tempDir();
    const service = createGroupService({ domain: "acp.local", groups: { lobby: { members: { "m.acp.local": {}, "other.acp.local": {} } } }, rateLimit: null });
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net"), serviceAgents: [service] });
    const id = await createIdentity({ aid: "m.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    const { ws, frames, next } = await dial(id);
    for (let i = 0; i < 20; i++) {
      create(ws, `c${i}`);
      const ack = await next("create_session_ack", `c${i}`);
      ws.send(JSON.stringify({ cmd: "invite_agent_req", data: { request_id: `i${i}`, session_id: ack.session_id, acceptor_id: service.aid, invite_code: ack.identifying_code } }));
      await next("invite_agent_ack", `i${i}`);
      const message = JSON.stringify({ action: "register_online", request_id: `r${i}` });
      ws.send(JSON.stringify({ cmd: "session_message", data: { session_id: ack.session_id, sender: id.aid, receiver: service.aid, message } }));
    }
    await waitFor(() => frames.filter((f) => f.cmd === "session_message" && String(f.data.message).includes('"register_online"')).length === 20, "20 registrations answered");
    expect(service.onlineAids()).toEqual(["m.acp.local"]);
    const before = service.counters().pushesSent;
    service.post({ groupId: "lobby", sender: "other.acp.local", content: "hello" });
    // The service pushes a stored message to every session online in one turn (its fan-out):
    // once the first push is counted, all of them are.
    await waitFor(() => service.counters().pushesSent > before, "the push");
    expect(service.counters().pushesSent - before).toBe(8);
  });
});
