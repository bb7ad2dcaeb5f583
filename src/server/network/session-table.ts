// The message service's sessions: `create_session_req`, `invite_agent_req`, `join_session_req`
// and leaving, each bounded by maxSessionsPerAid; the members of each session, and the end of a
// session once no connected agent is in it. As the real service does, an invite of a connected
// agent is forwarded to it, and it becomes a member when it answers with join_session_req (then
// the inviter gets its invite_agent_ack); in-process service agents join at once. Sockets and
// routing are the service's business.
import { randomBytes } from "node:crypto";
import type { Logger } from "../../types.ts";
import type { ServiceAgent } from "../service-agent.ts";
import type { AgentSocket } from "./agent-socket.ts";
import type { SessionCounters } from "./service-counters.ts";

export interface Session {
  id: string;
  identifyingCode: string;
  members: Set<string>;
  /** Invited but not yet joined (a forwarded invite, or a strict service): frames to them are dropped. */
  joining?: Set<string>;
  /** Forwarded invites waiting for the invitee's join_session_req: invitee → how to answer the inviter. */
  forwarded?: Map<string, ForwardedInvite>;
}

interface ForwardedInvite {
  inviter: AgentSocket;
  requestId: string | undefined;
  /** Gives up on the join (the inviter hears 408); cleared when the invitee joins and on close. */
  timer: ReturnType<typeof setTimeout>;
}

export const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Calls into an in-process service agent; a throw is logged, never out into the socket's handler. */
export function callServiceAgent(logger: Logger, agent: ServiceAgent, what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    logger.log("error", "message-service.service-agent-failed", { agent: agent.aid, what, error: (err as Error).message });
  }
}

export interface SessionTableParams {
  logger: Logger;
  counters: SessionCounters;
  maxSessionsPerAid: number;
  /** Accept invite_agent_req without ever sending invite_agent_ack (read at each invite). */
  omitInviteAck: () => boolean;
  /**
   * The invited member joins (and the ack goes out) only after this many ms; until then frames to
   * it are dropped, as a strict real service does. Undefined: joins at once (read at each invite).
   */
  strictInviteDelayMs: () => number | undefined;
  sockets: ReadonlyMap<string, AgentSocket>;
  agents: ReadonlyMap<string, ServiceAgent>;
  /** How long a forwarded invite waits for the invitee's join_session_req. */
  joinTimeoutMs: number;
  send(conn: AgentSocket, cmd: string, data: Record<string, unknown>): boolean;
}

export class SessionTable {
  readonly #p: SessionTableParams;
  readonly #sessions = new Map<string, Session>();
  /** Strict invites waiting to complete; cleared on close. */
  readonly #joinTimers = new Set<ReturnType<typeof setTimeout>>();

  constructor(p: SessionTableParams) {
    this.#p = p;
  }

  get(id: string): Session | undefined {
    return this.#sessions.get(id);
  }

  /**
   * A service agent opens a session with `to` and invites it: over `to`'s socket, or through
   * `notify` (the presence channel) when given. Undefined when `to` has no socket or the invite
   * could not be sent.
   */
  openFromService(agentAid: string, to: string, notify?: (session: Session) => boolean): string | undefined {
    const conn = this.#p.sockets.get(to);
    if (!conn) return undefined;
    const session = newSession([agentAid, to]);
    this.#sessions.set(session.id, session);
    if (notify) {
      if (!notify(session)) {
        this.#sessions.delete(session.id);
        return undefined;
      }
    } else {
      this.#p.send(conn, "invite_agent_req", { request_id: randomBytes(16).toString("hex"), session_id: session.id, inviter_id: agentAid, acceptor_id: to, invite_code: session.identifyingCode });
    }
    this.#p.counters.sessionsCreated++;
    return session.id;
  }

  create(conn: AgentSocket, data: Record<string, unknown>): void {
    const requestId = str(data.request_id) ? { request_id: data.request_id } : {};
    if (conn.sessions.size >= this.#p.maxSessionsPerAid) {
      this.#refuse(conn.aid, "create");
      this.#p.send(conn, "create_session_ack", { ...requestId, session_id: "", identifying_code: "", status_code: 429, message: "too many sessions" });
      return;
    }
    const session = newSession([conn.aid]);
    this.#sessions.set(session.id, session);
    conn.sessions.add(session.id);
    this.#p.counters.sessionsCreated++;
    this.#p.send(conn, "create_session_ack", { ...requestId, session_id: session.id, identifying_code: session.identifyingCode, status_code: 200, message: "success" });
  }

  invite(conn: AgentSocket, data: Record<string, unknown>): void {
    const requestId = str(data.request_id);
    const sessionId = str(data.session_id) ?? "";
    const acceptor = (str(data.acceptor_id) ?? "");
    const ack = (status: number, message: string) => inviteAck(this.#p, conn, { requestId, sessionId, acceptor, status, message });
    const session = this.#sessions.get(sessionId);
    if (!session || !session.members.has(conn.aid)) return void ack(404, "no such session");
    if (str(data.invite_code) !== session.identifyingCode) return void ack(403, "invite_code does not match the session");
    const invited = this.#p.sockets.get(acceptor);
    if (!this.#p.agents.has(acceptor) && !invited) return void ack(404, `${acceptor} is not online`);
    if (invited && !session.members.has(acceptor)) {
      if (invited.sessions.size >= this.#p.maxSessionsPerAid) {
        this.#refuse(acceptor, "invite");
        return void ack(429, `${acceptor} is in too many sessions`);
      }
      invited.sessions.add(session.id);
    }
    if (invited && !this.#p.agents.has(acceptor)) {
      if (session.members.has(acceptor)) return void ack(200, "success");
      return this.#forward(session, conn, invited, requestId);
    }
    const delay = this.#p.strictInviteDelayMs();
    if (delay === undefined) {
      session.members.add(acceptor);
      if (!this.#p.omitInviteAck()) ack(200, "success");
      return;
    }
    // A strict service: the acceptor joins a moment later; what is sent to it before then is lost.
    (session.joining ??= new Set()).add(acceptor);
    const timer = setTimeout(() => {
      this.#joinTimers.delete(timer);
      if (this.#sessions.get(session.id) !== session || !session.joining?.delete(acceptor)) return;
      session.members.add(acceptor);
      if (!this.#p.omitInviteAck()) ack(200, "success");
    }, delay);
    timer.unref?.();
    this.#joinTimers.add(timer);
  }

  /** Is `aid` invited into `session` but not joined yet (strict invites)? */
  isJoining(session: Session, aid: string): boolean {
    return session.joining?.has(aid) === true;
  }

  close(): void {
    for (const t of this.#joinTimers) clearTimeout(t);
    this.#joinTimers.clear();
  }

  /**
   * The invite goes to the invitee's socket; it joins with join_session_req (see `join`), or the
   * inviter hears 408 after joinTimeoutMs. Frames to it before it joined are dropped.
   */
  #forward(session: Session, inviter: AgentSocket, invitee: AgentSocket, requestId: string | undefined): void {
    const forwarded = (session.forwarded ??= new Map());
    if (forwarded.has(invitee.aid)) return; // already on its way: the first invite's ack answers
    (session.joining ??= new Set()).add(invitee.aid);
    const timer = setTimeout(() => {
      this.#joinTimers.delete(timer);
      if (!forwarded.delete(invitee.aid)) return;
      session.joining?.delete(invitee.aid);
      invitee.sessions.delete(session.id);
      this.#p.logger.log("info", "message-service.invite-unanswered", { inviter: inviter.aid, invitee: invitee.aid, sessionId: session.id });
      if (!this.#p.omitInviteAck()) inviteAck(this.#p, inviter, { requestId, sessionId: session.id, acceptor: invitee.aid, status: 408, message: `${invitee.aid} did not join` });
    }, this.#p.joinTimeoutMs);
    timer.unref?.();
    this.#joinTimers.add(timer);
    forwarded.set(invitee.aid, { inviter, requestId, timer });
    this.#p.send(invitee, "invite_agent_req", { request_id: randomBytes(16).toString("hex"), session_id: session.id, inviter_id: inviter.aid, acceptor_id: invitee.aid, invite_code: session.identifyingCode });
  }

  /** An invited member accepts (the official SDKs answer an invite with join_session_req). */
  join(conn: AgentSocket, data: Record<string, unknown>): void {
    const session = this.#sessions.get(str(data.session_id) ?? "");
    const waiting = session?.forwarded?.get(conn.aid);
    if (session && waiting && str(data.invite_code) === session.identifyingCode) {
      clearTimeout(waiting.timer);
      this.#joinTimers.delete(waiting.timer);
      session.forwarded!.delete(conn.aid);
      session.joining?.delete(conn.aid);
      session.members.add(conn.aid);
      if (!this.#p.omitInviteAck()) inviteAck(this.#p, waiting.inviter, { requestId: waiting.requestId, sessionId: session.id, acceptor: conn.aid, status: 200, message: "success" });
    }
    const ok = session !== undefined && session.members.has(conn.aid);
    this.#p.send(conn, "join_session_ack", { ...(str(data.request_id) ? { request_id: data.request_id } : {}), session_id: str(data.session_id) ?? "", status_code: ok ? 200 : 404, message: ok ? "success" : "no such session" });
  }

  leave(conn: AgentSocket, data: Record<string, unknown>): void {
    const session = this.#sessions.get(str(data.session_id) ?? "");
    if (session) this.#removeMember(session, conn.aid);
  }

  /** `aid`'s socket is gone (closed or replaced): it leaves every session it was in over it. */
  endSessionsOf(aid: string, sessions: Set<string>): void {
    for (const id of sessions) {
      const session = this.#sessions.get(id);
      if (session) this.#removeMember(session, aid);
    }
    sessions.clear();
  }

  /** `aid` leaves `session`: the others hear of it, and a session no connected agent is in is gone. */
  #removeMember(session: Session, aid: string): void {
    if (!session.members.delete(aid)) return;
    this.#p.sockets.get(aid)?.sessions.delete(session.id);
    for (const member of session.members) {
      const agent = this.#p.agents.get(member);
      if (agent) callServiceAgent(this.#p.logger, agent, "onSessionEnd", () => agent.onSessionEnd({ sessionId: session.id, from: aid }));
    }
    if ([...session.members].some((m) => this.#p.sockets.has(m))) return;
    this.#sessions.delete(session.id);
  }

  #refuse(aid: string, what: "create" | "invite"): void {
    this.#p.counters.refusedSessions++;
    this.#p.logger.log("info", "message-service.session-refused", { aid, what, reason: "too many sessions", limit: this.#p.maxSessionsPerAid });
  }
}

/** The answer to an invite, to the inviter's socket. */
function inviteAck(p: SessionTableParams, inviter: AgentSocket, a: { requestId: string | undefined; sessionId: string; acceptor: string; status: number; message: string }): void {
  p.send(inviter, "invite_agent_ack", { ...(a.requestId ? { request_id: a.requestId } : {}), session_id: a.sessionId, acceptor_id: a.acceptor, status_code: a.status, message: a.message });
}

function newSession(members: string[]): Session {
  return { id: randomBytes(16).toString("hex"), identifyingCode: randomBytes(8).toString("hex"), members: new Set(members) };
}
