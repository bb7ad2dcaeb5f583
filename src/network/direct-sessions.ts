// An identity's direct sessions: those another agent invited us into (accepted with
// join_session_req, as the official SDKs accept every invite) and those we opened to write to a
// peer first. Reads each direct `session_message` in the SDK's format and hands it up; writes text
// back on the peer's session, or opens one (create_session_req → invite_agent_req → its ack).
// Sessions end with the socket: after a reconnect the next send opens a fresh one.
import { decodeDirectPayload, encodeDirectText } from "../wire/direct-message.ts";
import type { DirectMessage } from "./direct-link.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import { NetworkError } from "./errors.ts";
import { createSession, invitePeer, inviteRefusal, okStatus, requestId, sendSessionMessage, str, type SessionSocket } from "./session-requests.ts";

/** What direct sessions need from the identity's socket. */
export interface DirectSessionHost extends SessionSocket {
  /** A direct message read off the socket. */
  deliver(message: DirectMessage): void;
}

/** Direct sessions remembered per socket; past this the least recently used is forgotten. */
const MAX_SESSIONS = 1000;


export class DirectSessions {
  readonly #host: DirectSessionHost;
  /** sessionId → the peer in it; a used session is the newest, past MAX_SESSIONS the least recently used goes. */
  readonly #sessions = new BoundedMap<string, string>(MAX_SESSIONS);
  /** Sessions being opened, per peer (lower-cased): two sends at once share one. */
  readonly #opening = new Map<string, Promise<string>>();

  constructor(host: DirectSessionHost) {
    this.#host = host;
  }

  /** Is `sessionId` one of our direct sessions? */
  has(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }

  /**
   * Someone invites us into a session: joined at once, whoever it is (who may talk is decided
   * above). A channel's peer (the group service) rides on its channel; anyone else's is direct.
   */
  invited(data: Record<string, unknown>, channelPeer: boolean): void {
    const inviter = str(data.inviter_id) || str(data.inviter_agent_id);
    const sessionId = str(data.session_id);
    if (!inviter || !sessionId) {
      this.#host.logger.log("debug", "network.invite-ignored", { aid: this.#host.aid, inviter, sessionId, why: "no inviter or session" });
      return;
    }
    this.#host.sendFrame("join_session_req", {
      session_id: sessionId,
      request_id: requestId(),
      inviter_agent_id: inviter,
      invite_code: str(data.invite_code),
      last_msg_id: "0",
    });
    if (!channelPeer) this.#remember(sessionId, inviter);
    this.#host.logger.log("info", "network.invite-accepted", { aid: this.#host.aid, inviter, sessionId, ...(channelPeer ? {} : { direct: true }) });
  }

  /** A session_message from a sender that is no channel's peer: a direct message. */
  received(data: Record<string, unknown>): void {
    const peer = str(data.sender);
    const sessionId = str(data.session_id);
    const payload = typeof data.message === "string" ? data.message : "";
    if (!peer || !sessionId) return;
    this.#remember(sessionId, peer);
    this.#host.logger.log("debug", "network.message-direct", { aid: this.#host.aid, sender: peer, sessionId, chars: payload.length });
    const stamped = Number(str(data.timestamp));
    this.#host.deliver({
      peer,
      sessionId,
      messageId: str(data.message_id),
      text: decodeDirectPayload(payload).text,
      at: Number.isFinite(stamped) && stamped > 0 ? stamped : this.#host.now(),
      payload,
    });
  }

  /** Sends `text` to `peer` (see DirectLink.sendDirect). */
  async send(p: { peer: string; text: string; sessionId?: string | undefined }): Promise<{ sessionId: string }> {
    if (!this.#host.socketOpen()) throw new NetworkError("NOT_CONNECTED", `${this.#host.aid}: no message socket to send to ${p.peer}`, { aid: this.#host.aid });
    const sessionId = this.#sessionWith(p.peer, p.sessionId) ?? (await this.#open(p.peer));
    const sent = sendSessionMessage(this.#host, { sessionId, receiver: p.peer, message: encodeDirectText(p.text, this.#host.now()) });
    if (!sent) throw new NetworkError("NOT_CONNECTED", `${this.#host.aid}: the socket closed before the message to ${p.peer} left`, { aid: this.#host.aid });
    this.#remember(sessionId, p.peer);
    return { sessionId };
  }

  /** The socket is gone: so are its sessions. */
  socketDown(): void {
    this.#sessions.clear();
    this.#opening.clear();
  }

  /** The given session when it is a live one with `peer`, else the newest live one with `peer`. */
  #sessionWith(peer: string, preferred: string | undefined): string | undefined {
    const lower = peer.toLowerCase();
    if (preferred !== undefined && this.#sessions.get(preferred)?.toLowerCase() === lower) return preferred;
    let newest: string | undefined;
    for (const [id, p] of this.#sessions) if (p.toLowerCase() === lower) newest = id;
    return newest;
  }

  #open(peer: string): Promise<string> {
    const key = peer.toLowerCase();
    let opening = this.#opening.get(key);
    if (!opening) {
      opening = this.#openNow(peer).finally(() => this.#opening.delete(key));
      this.#opening.set(key, opening);
    }
    return opening;
  }

  async #openNow(peer: string): Promise<string> {
    const { sessionId, inviteCode } = await createSession(this.#host);
    // As the SDK's send does: the peer is written to only once its invite came back accepted.
    const invited = await invitePeer(this.#host, { sessionId, inviteCode, peer });
    if (!okStatus(invited.status_code)) throw new NetworkError("BAD_REPLY", `${peer} could not be invited: ${inviteRefusal(invited)}`, { aid: this.#host.aid });
    this.#remember(sessionId, peer);
    this.#host.logger.log("info", "network.direct-session-opened", { aid: this.#host.aid, peer, sessionId });
    return sessionId;
  }

  #remember(sessionId: string, peer: string): void {
    this.#sessions.set(sessionId, peer);
  }
}
