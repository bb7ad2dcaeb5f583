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
  /** The invite_agent_ack frame (the SDK's `send` goes only after a 200 here). */
  readonly invited: SdkFrame;
  /** One group action as the SDK's sendRaw sends it; resolves with the answer carrying its request_id. */
  groupRequest(action: string, extra?: Record<string, unknown>): Promise<SdkGroupAnswer>;
  /** One line as the SDK's `send` writes it to the session's peer: the URL-encoded JSON block list. */
  say(text: string): void;
  /** The peer's session_messages in this session, read as the SDK's consumers read them (server.ts onMessage). */
  answers(): string[];
  /**
   * A new session with the same peer (as an SDK user does after the old one ended): created, the
   * peer invited; from then on `say` and `answers` use it. Resolves with the invite_agent_ack.
   */
  newSession(): Promise<SdkFrame>;
  /** The same in any session (a peer that opened a new one, e.g. after its restart). */
  answersAnywhere(): Array<{ sessionId: string; text: string }>;
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
  ws.on("message", (d) => {
    const f = JSON.parse(d.toString()) as SdkFrame;
    frames.push(f);
    // As the SDK's handleMessage: every invite is accepted at once with join_session_req.
    if (f.cmd === "invite_agent_req") {
      ws.send(JSON.stringify({ cmd: "join_session_req", data: { session_id: f.data.session_id, request_id: randomUUID().replace(/-/g, ""), inviter_agent_id: f.data.inviter_id, invite_code: f.data.invite_code, last_msg_id: "0" } }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const hex32 = () => randomUUID().replace(/-/g, "");
  const open = async (): Promise<{ sessionId: string; invited: SdkFrame }> => {
    const request_id = hex32();
    ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id, type: "public", group_name: "1", subject: "", timestamp: Date.now().toString() } }));
    const created = await waitFor(() => frames.find((f) => f.cmd === "create_session_ack" && f.data.request_id === request_id), "create_session_ack");
    const id = created.data.session_id as string;
    ws.send(JSON.stringify({ cmd: "invite_agent_req", data: { request_id: hex32(), acceptor_id: p.groupService, invite_code: created.data.identifying_code, session_id: id, inviter_id: aid } }));
    return { sessionId: id, invited: await waitFor(() => frames.find((f) => f.cmd === "invite_agent_ack" && f.data.session_id === id), "invite_agent_ack") };
  };
  let { sessionId, invited } = await open();

  let seq = 0;
  return {
    aid,
    get sessionId() {
      return sessionId;
    },
    frames,
    get invited() {
      return invited;
    },
    async newSession() {
      ({ sessionId, invited } = await open());
      return invited;
    },
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
    say(text) {
      const blocks = [{ type: "content", status: "success", timestamp: Date.now().toString(), content: text }];
      ws.send(
        JSON.stringify({
          cmd: "session_message",
          data: { message_id: Date.now().toString(), session_id: sessionId, ref_msg_id: "", sender: aid, receiver: p.groupService, message: encodeURIComponent(JSON.stringify(blocks)), timestamp: Date.now().toString() },
        }),
      );
    },
    answers: () => frames.filter((f) => f.cmd === "session_message" && f.data.sender === p.groupService && f.data.session_id === sessionId).map((f) => decodeLikeSdk(f.data.message as string)),
    answersAnywhere: () =>
      frames.filter((f) => f.cmd === "session_message" && f.data.sender === p.groupService).map((f) => ({ sessionId: f.data.session_id as string, text: decodeLikeSdk(f.data.message as string) })),
    close: () => ws.close(),
  };
}

/** What the SDK's own readers make of a session_message's `message` (hand-written from acp-ts server.ts). */
function decodeLikeSdk(message: string): string {
  let content = message;
  if (content.includes("%")) {
    try {
      content = decodeURIComponent(content);
    } catch {
      // kept as it came, as the SDK does
    }
  }
  try {
    const parsed = JSON.parse(content) as unknown;
    if (Array.isArray(parsed) && parsed.length > 0) return parsed.map((b: { content?: string }) => b?.content ?? "").join("");
    if (parsed && typeof parsed === "object" && "content" in parsed) return String((parsed as { content: unknown }).content);
    return content;
  } catch {
    return content;
  }
}
