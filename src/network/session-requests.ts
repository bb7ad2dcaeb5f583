// The frames that open a session with one peer and write on it, as the official SDK sends them:
// `create_session_req`, then `invite_agent_req` for the peer with the session's code, then
// `session_message`s. Shared by the group service's channel (session-channel.ts) and the direct
// sessions (direct-sessions.ts); each decides what a missing ack or a refusal means for it.
import { randomBytes } from "node:crypto";
import type { Logger } from "../types.ts";
import { NetworkError } from "./errors.ts";

/** What opening and writing a session needs from the identity's socket. */
export interface SessionSocket {
  readonly aid: string;
  socketOpen(): boolean;
  /** Sends a control request and resolves with the matching ack's `data` (rejects on timeout or close). */
  request(cmd: "create_session_req" | "invite_agent_req", data: Record<string, unknown>): Promise<Record<string, unknown>>;
  sendFrame(cmd: string, data: Record<string, unknown>): boolean;
  nextMessageId(): string;
  now(): number;
  logger: Logger;
}

/** An ack's status is success (the network sends it as a number or a string). */
export const okStatus = (v: unknown): boolean => v === 200 || v === "200";
/** A field as text: a string, a number written out, else "". */
export const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/** A fresh request id, as the SDK makes them (32 hex characters). */
export const requestId = (): string => randomBytes(16).toString("hex");

/** A new session of ours: its id and the code a peer is invited with. Throws BAD_REPLY when the ack names no session. */
export async function createSession(socket: SessionSocket): Promise<{ sessionId: string; inviteCode: string }> {
  const created = await socket.request("create_session_req", { request_id: requestId(), type: "public", group_name: "1", subject: "", timestamp: String(socket.now()) });
  const sessionId = str(created.session_id);
  if (!sessionId) throw new NetworkError("BAD_REPLY", `create_session_ack without session_id (status ${str(created.status_code) || "?"})`, { aid: socket.aid });
  return { sessionId, inviteCode: str(created.identifying_code) };
}

/** Invites `peer` into our session; resolves with invite_agent_ack's data (see okStatus). */
export function invitePeer(socket: SessionSocket, p: { sessionId: string; inviteCode: string; peer: string }): Promise<Record<string, unknown>> {
  return socket.request("invite_agent_req", { request_id: requestId(), acceptor_id: p.peer, invite_code: p.inviteCode, session_id: p.sessionId, inviter_id: socket.aid });
}

/** Why a peer's invite was refused, from invite_agent_ack's data. */
export const inviteRefusal = (data: Record<string, unknown>): string => `invite_agent_ack ${str(data.status_code)}${typeof data.message === "string" ? `: ${data.message}` : ""}`;

/** Writes `message` to `receiver` on `sessionId`; false when the socket could not take it. */
export function sendSessionMessage(socket: SessionSocket, p: { sessionId: string; receiver: string; message: string }): boolean {
  return socket.sendFrame("session_message", {
    message_id: socket.nextMessageId(),
    session_id: p.sessionId,
    ref_msg_id: "",
    sender: socket.aid,
    receiver: p.receiver,
    message: p.message,
    timestamp: String(socket.now()),
  });
}
