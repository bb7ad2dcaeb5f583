// The compatibility check end to end, with an SDK-shaped client (hand-written from the
// official SDK's source, no SDK code): against the local development network over TLS it creates
// an identity, signs in, opens the session with group.D, joins the lobby by its printed link,
// registers online, sends "Alice, can you hear me?", pulls — and Alice (the real runtime on a
// scripted model, since no hosted LLM exists here) has answered. Real sockets, crypto and files.
import { describe, expect, it } from "vitest";
import { createPublicKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from "node:crypto";
import { request } from "node:https";
import WebSocket from "ws";
import { startDevNetwork } from "../../src/dev-network.ts";
import { createScriptedBackend } from "../../src/host/deterministic.ts";
import { buildCsr } from "../../src/network/x509.ts";
import { AGENTS, GENEROUS_BUDGET, GROUP, lobbyConfig, startRecorded, useRuntimeFixture } from "../support/runtime-harness.ts";
import { loopbackLookup, waitFor } from "./support.ts";

const fx = useRuntimeFixture("sdk-e2e");
const crlf = (pem: string) => pem.replace(/\r?\n/g, "\r\n");

interface Frame {
  cmd: string;
  data: Record<string, unknown>;
}

describe("an SDK-shaped client joins the lobby by link and Alice answers (TLS, local network, real runtime)", () => {
  it("identity → sign-ins → session with group.D → use_invite_code → register_online → send_message → pull_messages shows Alice's answer", async () => {
    const stateDir = fx.stateDir();
    const dev = await startDevNetwork({ stateDir, tls: true, groups: { [GROUP]: { members: { [AGENTS.alice.aid]: {} }, inviteCode: "lobby-code" } }, rateLimit: null });
    let ws: WebSocket | undefined;
    try {
      const config = lobbyConfig({ stateDir, agents: ["alice"], lobby: { bufferGateMs: 40, bufferGateMaxWaitMs: 300, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET } });
      const aliceIdentity = await dev.identity(AGENTS.alice.aid);
      const alice = fx.track(
        startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "mention", replyText: "Loud and clear." }), connect: ({ logger }) => dev.connect(aliceIdentity, logger) }),
      );
      await alice.ready;

      const link = dev.lines.find((l) => l.startsWith(`join ${GROUP}: `))!.slice(`join ${GROUP}: `.length);
      const joinUrl = new URL(link);
      expect(joinUrl.host).toBe("group.acp.local");
      const groupId = joinUrl.pathname.slice(1);
      const code = joinUrl.searchParams.get("code")!;

      // What `new AgentCP("acp.local:<port>")` builds; the printed CA is trusted, acp3.acp.local → 127.0.0.1.
      const base = `https://acp3.${dev.net.sdkDomain}`;
      const call = (url: string, body: unknown) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          const text = JSON.stringify(body);
          const req = request(url, { method: "POST", ca: dev.net.caPem, lookup: loopbackLookup, headers: { "Content-Type": "application/json" } }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString())) : reject(new Error(`${url}: ${res.statusCode}`))));
          });
          req.on("error", reject);
          req.end(text);
        });
      const aid = "visitor.acp.local";
      const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
      const publicKeyPem = crlf(createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString());
      const certPem = (await call(`${base}/api/accesspoint/sign_cert`, { id: aid, csr: crlf(await buildCsr(aid, privateKey)) })).certificate as string;
      const signIn = async (api: string, key: KeyObject) => {
        const request_id = randomUUID();
        const { nonce } = (await call(`${api}/sign_in`, { agent_id: aid, request_id, client_info: `AgentCP/0.1.31 (AuthClient; ${aid})` })) as { nonce: string };
        const signature = sign("sha256", Buffer.from(nonce), key).toString("hex");
        return (await call(`${api}/sign_in`, { agent_id: aid, request_id, nonce, public_key: publicKeyPem, cert: certPem, signature })).signature as string;
      };
      await signIn(`${base}/api/accesspoint`, privateKey);
      const { message_server: messageServer } = JSON.parse((await call(`${base}/api/accesspoint/get_accesspoint_config`, { agent_id: aid })).config as string) as { message_server: string };
      const token = await signIn(`${base}/api/message`, privateKey);

      ws = new WebSocket(`${messageServer.replace("https://", "wss://")}/session?agent_id=${encodeURIComponent(aid)}&signature=${encodeURIComponent(token)}`, { ca: dev.net.caPem, lookup: loopbackLookup });
      const frames: Frame[] = [];
      ws.on("message", (d) => frames.push(JSON.parse(d.toString()) as Frame));
      await new Promise<void>((resolve, reject) => {
        ws!.once("open", () => resolve());
        ws!.once("error", reject);
      });
      const hex32 = () => randomUUID().replace(/-/g, "");
      ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id: hex32(), type: "public", group_name: "1", subject: "", timestamp: Date.now().toString() } }));
      const created = await waitFor(() => frames.find((f) => f.cmd === "create_session_ack"), "create_session_ack");
      const sessionId = created.data.session_id as string;
      ws.send(JSON.stringify({ cmd: "invite_agent_req", data: { request_id: hex32(), acceptor_id: "group.acp.local", invite_code: created.data.identifying_code, session_id: sessionId, inviter_id: aid } }));
      const invited = await waitFor(() => frames.find((f) => f.cmd === "invite_agent_ack"), "invite_agent_ack");
      expect(Number(invited.data.status_code)).toBe(200);

      // Group requests as sendRaw sends them; responses come back as session_messages from group.D.
      let seq = 0;
      const groupRequest = async (action: string, extra: Record<string, unknown> = {}) => {
        const request_id = `${aid}-${Date.now()}-${++seq}`;
        ws!.send(
          JSON.stringify({
            cmd: "session_message",
            data: { message_id: Date.now().toString(), session_id: sessionId, ref_msg_id: "", sender: aid, receiver: "group.acp.local", message: JSON.stringify({ action, request_id, ...extra }), timestamp: Date.now().toString() },
          }),
        );
        return waitFor(() => {
          for (const f of frames) {
            if (f.cmd !== "session_message" || f.data.sender !== "group.acp.local") continue;
            const payload = JSON.parse(f.data.message as string) as { request_id?: string; code?: number; data?: Record<string, unknown> };
            if (payload.request_id === request_id) return payload;
          }
          return undefined;
        }, action);
      };
      expect((await groupRequest("use_invite_code", { group_id: groupId, params: { code } })).code).toBe(0);
      expect((await groupRequest("register_online")).code).toBe(0);
      expect((await groupRequest("send_message", { group_id: groupId, params: { content: "Alice, can you hear me?" } })).code).toBe(0);

      const answered = async () => {
        const pulled = await groupRequest("pull_messages", { group_id: groupId, params: { after_msg_id: 0, limit: 50 } });
        const messages = (pulled.data?.messages ?? []) as Array<{ msg_id: number; sender: string; content: string }>;
        return messages.some((m) => m.sender === AGENTS.alice.aid) ? messages : undefined;
      };
      let messages: Array<{ msg_id: number; sender: string; content: string }> | undefined;
      const deadline = Date.now() + 8000;
      while (!(messages = await answered())) {
        if (Date.now() > deadline) throw new Error("Alice did not answer");
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(messages.map((m) => [m.sender, m.content])).toEqual([
        [aid, "Alice, can you hear me?"],
        [AGENTS.alice.aid, "Loud and clear."],
      ]);
      const last = messages.at(-1)!.msg_id;
      expect((await groupRequest("ack_messages", { group_id: groupId, params: { msg_id: last } })).code).toBe(0);
    } finally {
      ws?.close();
      await Promise.all(fx.running.map((r) => r.close()));
      await dev.close();
    }
  });
});
