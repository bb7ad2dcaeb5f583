// The official TypeScript SDK's observed sequence, byte for byte in shape, against our local network
// over TLS: CRLF PEMs, a uuid v4 request_id for sign-in, 32-hex request_ids for the session
// commands, acks paired by order, the config read as a JSON string, and the access point built as
// `https://acp3.${"D:P"}`. `acp3.D` resolves to 127.0.0.1 through a custom lookup; the printed CA
// is trusted. The client side here is hand-written from the SDK's source (no SDK code is used).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicKey, generateKeyPairSync, randomUUID, sign } from "node:crypto";
import { request } from "node:https";
import WebSocket from "ws";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { buildCsr } from "../../src/network/x509.ts";
import { echoAgent, loopbackLookup, tempDir, waitFor } from "./support.ts";

const crlf = (pem: string) => pem.replace(/\r?\n/g, "\r\n");

describe("an SDK-shaped client against the local network (TLS, real sockets)", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let group: ReturnType<typeof echoAgent>;
  let base: string;
  beforeAll(async () => {
    tmp = tempDir();
    group = echoAgent("group.acp.sdk");
    net = await startLocalNetwork({ domain: "acp.sdk", stateDir: tmp.dir, tls: true, serviceAgents: [group], presence: true });
    // What `new AgentCP("acp.sdk:<port>")` builds.
    base = `https://acp3.${net.sdkDomain}`;
  });
  afterAll(async () => {
    await net.close();
    tmp.cleanup();
  });

  const call = (method: "GET" | "POST", url: string, body?: unknown) =>
    new Promise<{ status: number; data: Record<string, unknown> }>((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = request(url, { method, ca: net.caPem, lookup: loopbackLookup, headers: text ? { "Content-Type": "application/json" } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, data: JSON.parse(Buffer.concat(chunks).toString() || "{}") }));
      });
      req.on("error", reject);
      if (text) req.write(text);
      req.end();
    });

  /** api.ts signIn: nonce, then the signature step with public_key + cert. */
  const sdkSignIn = async (apiUrl: string, aid: string, privateKey: ReturnType<typeof generateKeyPairSync>["privateKey"], publicKeyPem: string, certPem: string) => {
    const requestId = randomUUID();
    const first = await call("POST", `${apiUrl}/sign_in`, { agent_id: aid, request_id: requestId, client_info: `AgentCP/0.1.31 (AuthClient; ${aid})` });
    expect(first.status).toBe(200);
    const nonce = first.data.nonce as string;
    const signature = sign("sha256", Buffer.from(nonce), privateKey).toString("hex");
    const second = await call("POST", `${apiUrl}/sign_in`, { agent_id: aid, request_id: requestId, nonce, public_key: publicKeyPem, cert: certPem, signature });
    expect(second.status).toBe(200);
    return second.data.signature as string;
  };

  it("create identity → sign in → config → message sign-in → /session → create_session → invite group.D → session_messages both ways", async () => {
    const aid = "sdkuser.acp.sdk";
    const apUrl = `${base}/api/accesspoint`;
    const msgUrl = `${base}/api/message`;
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    const publicKeyPem = crlf(createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString());
    // 1. sign_cert with a CRLF CSR.
    const signed = await call("POST", `${apUrl}/sign_cert`, { id: aid, csr: crlf(await buildCsr(aid, privateKey)) });
    expect(signed.status).toBe(200);
    const certPem = signed.data.certificate as string;
    // 2–3. access point sign-in; 4. config as a JSON string, no token sent.
    await sdkSignIn(apUrl, aid, privateKey, publicKeyPem, certPem);
    const config = await call("POST", `${apUrl}/get_accesspoint_config`, { agent_id: aid });
    expect(typeof config.data.config).toBe("string");
    const { message_server: messageServer, heartbeat_server: heartbeatServer } = JSON.parse(config.data.config as string) as { message_server: string; heartbeat_server: string };
    expect(messageServer).toBe(`https://acp3.acp.sdk:${net.port}/api/message`);
    expect(heartbeatServer).toMatch(/^https:\/\//);
    // 5–6. message-service sign-in at <ap>/api/message.
    const token = await sdkSignIn(msgUrl, aid, privateKey, publicKeyPem, certPem);
    // 7. the socket.
    const url = `${messageServer.replace("https://", "wss://")}/session?agent_id=${encodeURIComponent(aid)}&signature=${encodeURIComponent(token)}`;
    const ws = new WebSocket(url, { ca: net.caPem, lookup: loopbackLookup });
    const frames: Array<{ cmd: string; data: Record<string, unknown> }> = [];
    ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    try {
      // 8. create_session_req; the SDK takes the next create_session_ack, whatever its request_id.
      const hex32 = () => randomUUID().replace(/-/g, "");
      ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id: hex32(), type: "public", group_name: "1", subject: "", timestamp: Date.now().toString() } }));
      const created = await waitFor(() => frames.find((f) => f.cmd === "create_session_ack"), "create_session_ack");
      const sessionId = created.data.session_id as string;
      const identifyingCode = created.data.identifying_code as string;
      expect(sessionId).toBeTruthy();
      expect(identifyingCode).toBeTruthy();
      // 9. invite group.D; the SDK checks Number(status_code) === 200.
      ws.send(JSON.stringify({ cmd: "invite_agent_req", data: { request_id: hex32(), acceptor_id: "group.acp.sdk", invite_code: identifyingCode, session_id: sessionId, inviter_id: aid } }));
      const invited = await waitFor(() => frames.find((f) => f.cmd === "invite_agent_ack"), "invite_agent_ack");
      expect(Number(invited.data.status_code)).toBe(200);
      // Group requests as sendRaw sends them: message_id is Date.now() — two in one ms share it.
      const ms = Date.now();
      const requests = [
        { action: "use_invite_code", request_id: `${aid}-${ms}-1`, params: { code: "abc" } },
        { action: "register_online", request_id: `${aid}-${ms}-2` },
        { action: "send_message", request_id: `${aid}-${ms}-3`, group_id: "lobby", params: { content: "Alice, can you hear me?" } },
        { action: "pull_messages", request_id: `${aid}-${ms}-4`, group_id: "lobby", params: { after_msg_id: 0, limit: 50 } },
      ];
      for (const r of requests) {
        ws.send(JSON.stringify({ cmd: "session_message", data: { message_id: String(ms), session_id: sessionId, ref_msg_id: "", sender: aid, receiver: "group.acp.sdk", message: JSON.stringify(r), timestamp: String(ms) } }));
      }
      await waitFor(() => group.received.length === 4, "four requests at group.D");
      expect(group.received.map((r) => [r.from, r.sessionId, JSON.parse(r.payload).action])).toEqual([
        [aid, sessionId, "use_invite_code"],
        [aid, sessionId, "register_online"],
        [aid, sessionId, "send_message"],
        [aid, sessionId, "pull_messages"],
      ]);
      // What comes back is what handleGroupMessage routes: session_message with sender === group.D.
      const back = await waitFor(() => {
        const m = frames.filter((f) => f.cmd === "session_message");
        return m.length === 4 ? m : undefined;
      }, "four answers");
      for (const m of back) {
        expect(m.data).toMatchObject({ session_id: sessionId, ref_msg_id: "", sender: "group.acp.sdk", receiver: aid });
        expect(typeof m.data.message).toBe("string");
        expect(typeof m.data.timestamp).toBe("string");
      }
      expect(new Set(back.map((m) => m.data.message_id)).size).toBe(4);
    } finally {
      ws.close();
    }
  });

  it("a guest identity from sign_guest_cert signs in the same way", async () => {
    const guest = await call("GET", `${base}/api/accesspoint/sign_guest_cert`);
    expect(guest.status).toBe(200);
    const aid = guest.data.guest_aid as string;
    expect(aid).toMatch(/^guest-[0-9a-f]+\.acp\.sdk$/);
    const { createPrivateKey } = await import("node:crypto");
    const key = createPrivateKey(guest.data.key as string);
    const token = await sdkSignIn(`${base}/api/accesspoint`, aid, key, crlf(createPublicKey(key).export({ type: "spki", format: "pem" }).toString()), guest.data.cert as string);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
  });
});
