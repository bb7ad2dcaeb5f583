// A message service that answers as minimal servers do: acks without request_id, status_code as
// the string "200", and the access point config as an object. The socket is real (ws on
// 127.0.0.1); the access point is scripted so the config can point at this socket.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPublicKey, generateKeyPairSync, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { connectAgent, type HttpClient, type HttpReply, type Identity } from "../../src/network/index.ts";
import { waitFor } from "./support.ts";

describe("acks without request_id (real socket, scripted access point)", () => {
  let wss: WebSocketServer;
  let port: number;
  const seen: Array<{ cmd: string; data: Record<string, unknown> }> = [];
  let greetFirst = false;
  beforeEach(async () => {
    seen.length = 0;
    greetFirst = false;
    wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/api/message/session" });
    await new Promise((r) => wss.once("listening", r));
    port = (wss.address() as AddressInfo).port;
    wss.on("connection", (ws) => {
      const invites = new Map<string, string>();
      ws.on("message", (raw) => {
        const f = JSON.parse(raw.toString()) as { cmd: string; data: Record<string, unknown> };
        seen.push(f);
        if (f.cmd === "create_session_req") {
          ws.send(JSON.stringify({ cmd: "create_session_ack", data: { session_id: randomBytes(4).toString("hex"), identifying_code: "code" } }));
        } else if (f.cmd === "invite_agent_req") {
          invites.set(f.data.session_id as string, f.data.acceptor_id as string);
          // The peer speaks on the new session before the invite is acknowledged.
          if (greetFirst) ws.send(JSON.stringify({ cmd: "session_message", data: { message_id: "1", session_id: f.data.session_id, ref_msg_id: "", sender: f.data.acceptor_id, receiver: f.data.inviter_id, message: "early", timestamp: "1" } }));
          ws.send(JSON.stringify({ cmd: "invite_agent_ack", data: { session_id: f.data.session_id, status_code: "200" } }));
        } else if (f.cmd === "session_message") {
          const peer = invites.get(f.data.session_id as string)!;
          ws.send(JSON.stringify({ cmd: "session_message", data: { ...f.data, sender: peer, receiver: f.data.sender, message: `${peer}:${f.data.message as string}` } }));
        }
      });
    });
  });
  afterEach(async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(r));
  });

  const makeAgent = () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    const identity: Identity = { aid: "alice.min.test", privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString(), certPem: "unused", dir: undefined };
    const reply = (json: unknown): HttpReply => ({ status: 200, headers: {}, text: JSON.stringify(json), json });
    const http: HttpClient = {
      request: async () => reply({}),
      postJson: async (url, body) => {
        if (url.endsWith("/get_accesspoint_config")) return reply({ config: { message_server: `http://127.0.0.1:${port}/api/message` } });
        return reply((body as Record<string, unknown>).nonce ? { signature: "tok" } : { nonce: "n" });
      },
      close() {},
    };
    return connectAgent({ identity, accessPointUrl: "https://acp3.min.test", http });
  };

  it("a payload from the peer that arrives before the invite ack is handed over right after up, not dropped", async () => {
    greetFirst = true;
    const agent = makeAgent();
    try {
      const ch = agent.channel("group.min.test");
      const log: string[] = [];
      ch.on("up", () => log.push("up"));
      ch.on("message", (m) => log.push(`message ${m.payload}`));
      await waitFor(() => log.length === 2, "up and the early payload");
      expect(log).toEqual(["up", "message early"]);
      expect(agent.counters().staleMessages).toBe(0);
    } finally {
      await agent.close();
    }
  });

  it("pairs by order and by session, accepts \"200\", reads the config as an object; two sessions come up on one socket", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    const identity: Identity = { aid: "alice.min.test", privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString(), certPem: "unused", dir: undefined };
    const reply = (json: unknown): HttpReply => ({ status: 200, headers: {}, text: JSON.stringify(json), json });
    const http: HttpClient = {
      request: async () => reply({}),
      postJson: async (url, body) => {
        const b = body as Record<string, unknown>;
        if (url.endsWith("/get_accesspoint_config")) return reply({ config: { message_server: `http://127.0.0.1:${port}/api/message` } });
        return reply(b.nonce ? { signature: "tok" } : { nonce: "n" });
      },
      close() {},
    };
    const agent = connectAgent({ identity, accessPointUrl: "https://acp3.min.test", http });
    try {
      const a = agent.channel("group.min.test");
      const b = agent.channel("group.other.test");
      await waitFor(() => a.status === "up" && b.status === "up", "both up");
      const got: string[] = [];
      a.on("message", (m) => got.push(m.payload));
      b.on("message", (m) => got.push(m.payload));
      a.send("x");
      b.send("y");
      await waitFor(() => got.length === 2, "answers");
      expect(got.sort()).toEqual(["group.min.test:x", "group.other.test:y"]);
      const ids = seen.filter((f) => f.cmd === "create_session_req").map((f) => String(f.data.request_id));
      expect(ids).toHaveLength(2);
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    } finally {
      await agent.close();
    }
  });
});
