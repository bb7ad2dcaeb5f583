// A group member that speaks the official TypeScript SDK's exact sequence (hand-written from the
// SDK's source, no SDK code): sign_cert for a new P-384 key, the two-step sign_in at the access
// point and at the message service, get_accesspoint_config, the session socket, create_session_req,
// invite_agent_req for group.<ap>, then group actions as session_messages to group.<ap>.
import { createPublicKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from "node:crypto";
import { request } from "node:https";
import type { LookupFunction } from "node:net";
import WebSocket from "ws";
import { buildCsr } from "../../src/network/x509.ts";
import { waitFor as waitForProbe } from "./wait-for.ts";

export interface SdkFrame {
  cmd: string;
  data: Record<string, unknown>;
}

export interface SdkGroupAnswer {
  request_id?: string;
  code?: number;
  data?: Record<string, unknown>;
}

export interface SdkMember {
  readonly aid: string;
  readonly sessionId: string;
  /** Every frame received, in order. */
  readonly frames: SdkFrame[];
  /** The invite_agent_ack frame (the SDK reads nothing from it). */
  readonly invited: SdkFrame;
  /** One group action as the SDK's sendRaw sends it; resolves with the answer carrying its request_id. */
  groupRequest(action: string, extra?: Record<string, unknown>): Promise<SdkGroupAnswer>;
  close(): void;
}

const crlf = (pem: string) => pem.replace(/\r?\n/g, "\r\n");

const waitFor = <T>(probe: () => T | undefined, what: string) => waitForProbe(probe, what, 10_000);

/** `base` is what `new AgentCP("<domain>:<port>")` builds: https://acp3.<domain>:<port>. */
export async function connectSdkMember(p: { base: string; aid: string; caPem: string; lookup: LookupFunction; groupService: string }): Promise<SdkMember> {
  const { aid, caPem, lookup } = p;
  const call = (url: string, body: unknown) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(url, { method: "POST", ca: caPem, lookup, headers: { "Content-Type": "application/json" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>) : reject(new Error(`${url}: ${res.statusCode}`))));
      });
      req.on("error", reject);
      req.end(JSON.stringify(body));
    });
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
  const publicKeyPem = crlf(createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString());
  const certPem = (await call(`${p.base}/api/accesspoint/sign_cert`, { id: aid, csr: crlf(await buildCsr(aid, privateKey)) })).certificate as string;
  const signIn = async (api: string, key: KeyObject) => {
    const request_id = randomUUID();
    const { nonce } = (await call(`${api}/sign_in`, { agent_id: aid, request_id, client_info: `AgentCP/0.1.31 (AuthClient; ${aid})` })) as { nonce: string };
    const signature = sign("sha256", Buffer.from(nonce), key).toString("hex");
    return (await call(`${api}/sign_in`, { agent_id: aid, request_id, nonce, public_key: publicKeyPem, cert: certPem, signature })).signature as string;
  };
  await signIn(`${p.base}/api/accesspoint`, privateKey);
  const { message_server: messageServer } = JSON.parse((await call(`${p.base}/api/accesspoint/get_accesspoint_config`, { agent_id: aid })).config as string) as { message_server: string };
  const token = await signIn(`${p.base}/api/message`, privateKey);

  const ws = new WebSocket(`${messageServer.replace("https://", "wss://")}/session?agent_id=${encodeURIComponent(aid)}&signature=${encodeURIComponent(token)}`, { ca: caPem, lookup });
  const frames: SdkFrame[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString()) as SdkFrame));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const hex32 = () => randomUUID().replace(/-/g, "");
  ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id: hex32(), type: "public", group_name: "1", subject: "", timestamp: Date.now().toString() } }));
  const created = await waitFor(() => frames.find((f) => f.cmd === "create_session_ack"), "create_session_ack");
  const sessionId = created.data.session_id as string;
  ws.send(JSON.stringify({ cmd: "invite_agent_req", data: { request_id: hex32(), acceptor_id: p.groupService, invite_code: created.data.identifying_code, session_id: sessionId, inviter_id: aid } }));
  const invited = await waitFor(() => frames.find((f) => f.cmd === "invite_agent_ack"), "invite_agent_ack");

  let seq = 0;
  return {
    aid,
    sessionId,
    frames,
    invited,
    async groupRequest(action, extra = {}) {
      const request_id = `${aid}-${Date.now()}-${++seq}`;
      ws.send(
        JSON.stringify({
          cmd: "session_message",
          data: { message_id: Date.now().toString(), session_id: sessionId, ref_msg_id: "", sender: aid, receiver: p.groupService, message: JSON.stringify({ action, request_id, ...extra }), timestamp: Date.now().toString() },
        }),
      );
      return waitFor(() => {
        for (const f of frames) {
          if (f.cmd !== "session_message" || f.data.sender !== p.groupService) continue;
          const payload = JSON.parse(f.data.message as string) as SdkGroupAnswer;
          if (payload.request_id === request_id) return payload;
        }
        return undefined;
      }, action);
    },
    close: () => ws.close(),
  };
}
