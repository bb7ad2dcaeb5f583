// A bare session with a service agent over a real `ws` socket: sign in, create a session, invite
// the service, then send group requests as session_message frames. It can stop reading its
// socket (`stopReading`) like a client that sends and never reads. Used by the server bench and
// the socket-limit tests; loopback only.
import WebSocket from "ws";
import { createHttpClient, signIn, type Identity } from "../src/network/index.ts";

export interface RawSession {
  ws: WebSocket;
  sessionId: string;
  /** Sends one group request; true when it was handed to the socket. */
  send(request: Record<string, unknown>): boolean;
  /** Sends one group request and resolves with its response (reading must be on). */
  request(request: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Pauses the socket: nothing more is read, so the server's output to it piles up. */
  stopReading(): void;
  closed: Promise<number>;
  close(): void;
}

export async function openRawSession(p: { localUrl: string; identity: Identity; service: string }): Promise<RawSession> {
  const token = await signIn({ url: `${p.localUrl}/api/message/sign_in`, identity: p.identity, http: createHttpClient() });
  const ws = new WebSocket(`${p.localUrl.replace(/^http/, "ws")}/session?agent_id=${encodeURIComponent(p.identity.aid)}&signature=${encodeURIComponent(token)}`, {
    maxPayload: 64 * 1024 * 1024,
  });
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  ws.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once("error", reject);
  });
  const waiters = new Map<string, (data: Record<string, unknown>) => void>();
  ws.on("message", (raw) => {
    const frame = JSON.parse(raw.toString()) as { cmd: string; data: Record<string, unknown> };
    let key: unknown = frame.data.request_id;
    if (frame.cmd === "session_message") key = (JSON.parse(String(frame.data.message)) as { request_id?: unknown }).request_id;
    const wake = typeof key === "string" ? waiters.get(key) : undefined;
    if (!wake) return;
    waiters.delete(key as string);
    wake(frame.cmd === "session_message" ? (JSON.parse(String(frame.data.message)) as Record<string, unknown>) : frame.data);
  });
  const answer = (id: string) => new Promise<Record<string, unknown>>((resolve) => waiters.set(id, resolve));
  const created = answer("c");
  ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id: "c" } }));
  const ack = await created;
  const sessionId = String(ack.session_id);
  const invited = answer("i");
  ws.send(JSON.stringify({ cmd: "invite_agent_req", data: { request_id: "i", session_id: sessionId, acceptor_id: p.service, invite_code: ack.identifying_code } }));
  const inv = await invited;
  if (inv.status_code !== 200) throw new Error(`invite refused: ${String(inv.message)}`);
  const send = (request: Record<string, unknown>): boolean => {
    if (ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify({ cmd: "session_message", data: { session_id: sessionId, sender: p.identity.aid, receiver: p.service, message: JSON.stringify(request) } }));
    return true;
  };
  return {
    ws,
    sessionId,
    send,
    request(request) {
      const done = answer(String(request.request_id));
      send(request);
      return done;
    },
    stopReading: () => ws.pause(),
    closed,
    close: () => ws.terminate(),
  };
}
