// The local message service: the `/session` WebSocket (token checked at the upgrade), sessions
// (`create_session_req`, `invite_agent_req`) and `session_message` routing between connected
// agents and in-process service agents. Refuses a frame outside a session, a sender that is not
// the signed-in aid, and a socket whose token has expired. Every socket is bounded (socket-limits.ts).
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, WebSocket, type RawData } from "ws";
import type { Logger } from "../../types.ts";
import type { ServiceAgent, ServiceAgentHost } from "../service-agent.ts";
import type { TokenStore } from "./tokens.ts";
import { nextMessageId } from "../../network/message-id.ts";
import { CLOSE_REPLACED, CLOSE_TOKEN_EXPIRED, CLOSE_TOO_SLOW, DEFAULT_SOCKET_LIMITS, type AidKind, type SocketLimits } from "./socket-limits.ts";

export interface MessageServiceQuirks {
  /** Accept invite_agent_req without ever sending invite_agent_ack (the official SDK never waits for one). */
  omitInviteAck: boolean;
}

export interface MessageServiceCounters {
  connections: number;
  refusedUpgrades: number;
  refusedFrames: number;
  sessionsCreated: number;
  messagesRouted: number;
  undeliverable: number;
  /** Upgrades refused for room: maxConnections registered sockets, or the guests' caps. */
  refusedFull: number;
  /** Times a socket was not read because its unsent output passed pauseBufferedBytes. */
  pausedSockets: number;
  /** Sockets closed for not reading (maxBufferedBytes, or no progress while paused). */
  slowClosed: number;
  /** Sockets dropped for not answering a ping. */
  deadClosed: number;
  /** Frames not sent because they were larger than clients read. */
  oversizeOutbound: number;
  /** create_session_req and invites refused because an aid was in maxSessionsPerAid sessions. */
  refusedSessions: number;
}

interface Session {
  id: string;
  identifyingCode: string;
  members: Set<string>;
}

interface Connection {
  aid: string;
  kind: AidKind;
  /** The peer's address: guests are limited per source. */
  source: string;
  ws: WebSocket;
  /** False from a ping until its pong; a socket still false at the next sweep is dead. */
  alive: boolean;
  /** Closes the socket when its token expires; cleared on close. */
  expiryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Not read while its unsent output drains. */
  paused: boolean;
  /** Unsent bytes at the previous sweep while paused: no progress by the next one closes it. */
  pausedBuffered: number;
  /** Frames that arrived while paused or unconfirmed (already read off the socket): served later, in order. */
  backlog: string[];
  backlogBytes: number;
  /** Bytes sent that no pong has confirmed yet (see outputCreditBytes). */
  unconfirmed: number;
  /** The payload of the ping sent behind the output past its credit, and how much output it confirms; undefined when none is out. */
  creditPing: { payload: string; confirms: number } | undefined;
  /** The sessions this aid is in over this socket (bounded by maxSessionsPerAid); ended with it. */
  sessions: Set<string>;
  /** In the ready queue: it has held frames to be served, one per turn. */
  queued: boolean;
  /** Not read because its held frames passed maxBacklogBytes while it was served normally (read again once they are served). */
  heldFull: boolean;
}

/** Held frames served per turn (one per socket, round-robin) before reading sockets again. */
const FRAMES_PER_TURN = 16;

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export class MessageService {
  readonly #tokens: TokenStore;
  readonly #now: () => number;
  readonly #logger: Logger;
  readonly #wss: WebSocketServer;
  readonly #agents = new Map<string, ServiceAgent>();
  readonly #connections = new Map<string, Connection>();
  readonly #sessions = new Map<string, Session>();
  #lastMessageId = 0;
  /** Numbers the credit pings, so a pong is matched to its own ping. */
  #creditPings = 0;
  /** Sockets with held frames to serve, in round-robin order. */
  #ready: Connection[] = [];
  /** Sockets that had a frame served since the last turn: their next frames wait for their turn. */
  readonly #servedThisTurn = new Set<Connection>();
  #turnTimer: ReturnType<typeof setImmediate> | undefined;
  readonly #limits: SocketLimits;
  readonly #kindOf: (aid: string) => AidKind;
  /** How this service may differ from the usual (tests play a real network's behaviour with it). */
  readonly quirks: MessageServiceQuirks = { omitInviteAck: false };
  readonly counters: MessageServiceCounters = {
    connections: 0, refusedUpgrades: 0, refusedFrames: 0, sessionsCreated: 0, messagesRouted: 0, undeliverable: 0,
    refusedFull: 0, pausedSockets: 0, slowClosed: 0, deadClosed: 0, oversizeOutbound: 0, refusedSessions: 0,
  };

  /** Pings every socket and drops the ones that did not answer the previous ping; cleared on close. */
  readonly #sweepTimer: ReturnType<typeof setInterval> | undefined;

  constructor(params: {
    tokens: TokenStore;
    now: () => number;
    logger: Logger;
    answerPings?: boolean;
    pingIntervalMs?: number;
    limits?: Partial<SocketLimits>;
    /** Default: every aid is "registered". */
    kindOf?: (aid: string) => AidKind;
  }) {
    this.#limits = { ...DEFAULT_SOCKET_LIMITS, ...params.limits };
    this.#kindOf = params.kindOf ?? (() => "registered");
    // maxPayload: ws refuses a larger frame from its header, before buffering it.
    // answerPings false simulates a half-open connection: the socket stays, pongs never come.
    // perMessageDeflate off: compression would hold a zlib context per socket.
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: this.#limits.maxFrameBytes, autoPong: params.answerPings !== false, perMessageDeflate: false });
    if (params.pingIntervalMs !== 0) {
      this.#sweepTimer = setInterval(() => this.#sweep(), params.pingIntervalMs ?? 30_000);
      this.#sweepTimer.unref?.();
    }
    this.#tokens = params.tokens;
    this.#now = params.now;
    this.#logger = params.logger;
  }

  serviceAgentAids(): Set<string> {
    return new Set(this.#agents.keys());
  }

  addServiceAgent(agent: ServiceAgent): void {
    const aid = agent.aid;
    if (this.#agents.has(aid)) throw new Error(`Expected one service agent per aid, got a second \`${agent.aid}\``);
    this.#agents.set(aid, agent);
    const host: ServiceAgentHost = {
      send: (p) => this.#deliver({ sessionId: p.sessionId, from: agent.aid, to: p.to, payload: p.payload }),
      invite: ({ to }) => {
        const conn = this.#connections.get(to);
        if (!conn) return undefined;
        const session: Session = { id: randomBytes(16).toString("hex"), identifyingCode: randomBytes(8).toString("hex"), members: new Set([agent.aid, to]) };
        this.#sessions.set(session.id, session);
        this.counters.sessionsCreated++;
        this.#send(conn, "invite_agent_req", { request_id: randomBytes(16).toString("hex"), session_id: session.id, inviter_id: agent.aid, acceptor_id: to, invite_code: session.identifyingCode });
        return session.id;
      },
    };
    agent.attach(host);
  }

  connectedAids(): string[] {
    return [...this.#connections.keys()];
  }

  /** Monotonic ms-based ids: unique even for two frames in the same millisecond. */
  #messageId(): string {
    this.#lastMessageId = nextMessageId(this.#lastMessageId, this.#now());
    return String(this.#lastMessageId);
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://x");
    const aid = url.searchParams.get("agent_id") ?? "";
    const token = url.searchParams.get("signature") ?? "";
    const check = aid && token ? this.#tokens.check(aid, token, this.#now()) : ({ ok: false, reason: "unknown-token" } as const);
    if (!check.ok) {
      this.counters.refusedUpgrades++;
      this.#logger.log("info", "message-service.upgrade-refused", { aid, reason: check.reason });
      socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${JSON.stringify({ error: check.reason })}`);
      return;
    }
    const kind = this.#kindOf(aid);
    const source = req.socket.remoteAddress ?? "unknown";
    const full = this.#connections.has(aid) ? undefined : this.#noRoom(kind, source);
    if (full !== undefined) {
      this.counters.refusedFull++;
      this.#logger.log("warn", "message-service.upgrade-refused", { aid, kind, source, reason: full });
      socket.end(`HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\nConnection: close\r\n\r\n${JSON.stringify({ error: "too many connections" })}`);
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept({ aid, kind, source }, ws, check.expiresAt));
  }

  /**
   * Why a new socket of this kind from `source` finds no room, or undefined. Each kind has its own
   * room, so guests (free to make) never take a member's place; configured members are never refused.
   */
  #noRoom(kind: AidKind, source: string): string | undefined {
    if (kind === "member") return undefined;
    let registered = 0;
    let guests = 0;
    let guestsHere = 0;
    for (const conn of this.#connections.values()) {
      if (conn.kind === "registered") registered++;
      else if (conn.kind === "guest") {
        guests++;
        if (conn.source === source) guestsHere++;
      }
    }
    if (kind === "registered") return registered >= this.#limits.maxConnections ? "full" : undefined;
    if (guests >= this.#limits.maxGuestConnections) return "guests-full";
    return guestsHere >= this.#limits.maxGuestConnectionsPerSource ? "guests-per-source" : undefined;
  }

  #accept(who: { aid: string; kind: AidKind; source: string }, ws: WebSocket, expiresAt: number): void {
    const { aid, kind, source } = who;
    const previous = this.#connections.get(aid);
    if (previous) {
      // The older socket may be half-open: its sessions end now, not whenever TCP notices.
      this.#connections.delete(aid);
      this.#endSessionsOf(aid, previous.sessions);
      previous.ws.close(CLOSE_REPLACED, "replaced by a newer connection");
    }
    const conn: Connection = { aid, kind, source, ws, alive: true, expiryTimer: undefined, paused: false, pausedBuffered: 0, backlog: [], backlogBytes: 0, sessions: new Set(), unconfirmed: 0, creditPing: undefined, queued: false, heldFull: false };
    ws.on("pong", (data: Buffer) => {
      conn.alive = true;
      if (conn.creditPing === undefined || data.toString() !== conn.creditPing.payload) return;
      // It has read everything sent before the ping: that much output is confirmed.
      conn.unconfirmed = Math.max(0, conn.unconfirmed - conn.creditPing.confirms);
      conn.creditPing = undefined;
      this.#enqueue(conn);
    });
    const left = expiresAt - this.#now();
    conn.expiryTimer = setTimeout(() => {
      conn.expiryTimer = undefined;
      ws.close(CLOSE_TOKEN_EXPIRED, "token expired");
    }, Math.max(0, Math.min(left, 2 ** 31 - 1)));
    conn.expiryTimer.unref?.();
    this.#connections.set(aid, conn);
    this.counters.connections++;
    this.#logger.log("info", "message-service.connected", { aid });
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (isBinary) return this.#refuse(conn, "binary frame");
      const text = data.toString();
      const stuck = conn.paused || conn.creditPing !== undefined;
      if (stuck || conn.backlog.length > 0 || this.#servedThisTurn.has(conn)) {
        // Held: served in its turn (one frame per socket per turn), not while its output is stuck or unconfirmed.
        conn.backlog.push(text);
        conn.backlogBytes += text.length;
        if (conn.backlogBytes > this.#limits.maxBacklogBytes) {
          // A socket whose output is stuck is closed; one that is merely busy is not read until it is served.
          if (stuck) return this.#closeSlow(conn, "backlog limit");
          if (!conn.heldFull) {
            conn.heldFull = true;
            ws.pause();
          }
        }
        this.#enqueue(conn);
        return;
      }
      this.#servedThisTurn.add(conn);
      this.#scheduleTurn();
      this.#onFrame(conn, text);
    });
    ws.on("close", () => {
      if (conn.expiryTimer) clearTimeout(conn.expiryTimer);
      conn.expiryTimer = undefined;
      if (this.#connections.get(aid) === conn) {
        this.#connections.delete(aid);
        this.#endSessionsOf(aid, conn.sessions);
      }
      this.#logger.log("info", "message-service.disconnected", { aid });
    });
    ws.on("error", (err) => this.#logger.log("debug", "message-service.socket-error", { aid, error: err.message }));
  }

  #sweep(): void {
    for (const conn of this.#connections.values()) {
      if (conn.paused) {
        // Its pongs wait unread behind the pause: judge it by whether its output drains.
        const buffered = conn.ws.bufferedAmount;
        if (buffered >= conn.pausedBuffered) {
          this.#closeSlow(conn, "not draining");
          continue;
        }
        conn.pausedBuffered = buffered;
        continue;
      }
      if (!conn.alive) {
        this.counters.deadClosed++;
        this.#logger.log("info", "message-service.socket-dead", { aid: conn.aid });
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }

  /** Ends the socket of `aid` (or every socket) as if its token expired now. */
  expire(aid: string | undefined): void {
    for (const conn of this.#connections.values()) if (aid === undefined || conn.aid === aid) conn.ws.close(CLOSE_TOKEN_EXPIRED, "token expired");
  }

  /** Drops the socket of `aid` (or every socket) without a close frame, like a network failure. */
  drop(aid: string | undefined): void {
    for (const conn of this.#connections.values()) if (aid === undefined || conn.aid === aid) conn.ws.terminate();
  }

  #endSessionsOf(aid: string, sessions: Set<string>): void {
    for (const id of sessions) {
      const session = this.#sessions.get(id);
      if (session) this.#removeMember(session, aid);
    }
    sessions.clear();
  }

  /** `aid` leaves `session`: the others hear of it, and a session no connected agent is in is gone. */
  #removeMember(session: Session, aid: string): void {
    if (!session.members.delete(aid)) return;
    this.#connections.get(aid)?.sessions.delete(session.id);
    for (const member of session.members) {
      const agent = this.#agents.get(member);
      if (agent) this.#safely(agent, "onSessionEnd", () => agent.onSessionEnd({ sessionId: session.id, from: aid }));
    }
    if ([...session.members].some((m) => this.#connections.has(m))) return;
    this.#sessions.delete(session.id);
  }

  #safely(agent: ServiceAgent, what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#logger.log("error", "message-service.service-agent-failed", { agent: agent.aid, what, error: (err as Error).message });
    }
  }

  #send(conn: Connection, cmd: string, data: Record<string, unknown>): boolean {
    const ws = conn.ws;
    if (ws.readyState !== WebSocket.OPEN) return false;
    const text = JSON.stringify({ cmd, data });
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > this.#limits.maxOutboundFrameBytes) {
      this.counters.oversizeOutbound++;
      this.#logger.log("warn", "message-service.frame-not-sent", { aid: conn.aid, cmd, reason: "oversize", bytes, limit: this.#limits.maxOutboundFrameBytes });
      return false;
    }
    // One frame (up to maxOutboundFrameBytes) always fits into an empty buffer: only a backlog behind it counts.
    if (ws.bufferedAmount > 0 && ws.bufferedAmount + bytes > this.#limits.maxBufferedBytes) {
      this.#closeSlow(conn, "output limit");
      return false;
    }
    // Counted from the credit ping on: one large frame before it is not held against a socket still reading it.
    if (conn.creditPing !== undefined && conn.unconfirmed - conn.creditPing.confirms > this.#limits.maxUnconfirmedBytes) {
      this.#closeSlow(conn, "output unconfirmed");
      return false;
    }
    ws.send(text, () => this.#drained(conn));
    conn.unconfirmed += bytes;
    if (conn.creditPing === undefined && conn.unconfirmed >= this.#limits.outputCreditBytes) {
      // Past its credit: a ping behind this output; its pong says the socket read all of it.
      conn.creditPing = { payload: `c${++this.#creditPings}`, confirms: conn.unconfirmed };
      ws.ping(conn.creditPing.payload);
    }
    if (!conn.paused && ws.bufferedAmount > this.#limits.pauseBufferedBytes) {
      // Stop serving it: no new requests are read until what it was sent has gone out.
      conn.paused = true;
      // Judged from the next sweep on: a full ping interval without progress closes it.
      conn.pausedBuffered = Number.POSITIVE_INFINITY;
      this.counters.pausedSockets++;
      this.#logger.log("debug", "message-service.socket-paused", { aid: conn.aid, buffered: ws.bufferedAmount });
      ws.pause();
    }
    // Stuck now with a full backlog (it sent more than it reads): nothing more of it will be served soon.
    if ((conn.paused || conn.creditPing !== undefined) && conn.backlogBytes > this.#limits.maxBacklogBytes) this.#closeSlow(conn, "backlog limit");
    return true;
  }

  /** A write went out: a paused socket is read again once half its pause limit is left. */
  #drained(conn: Connection): void {
    if (!conn.paused || conn.ws.readyState !== WebSocket.OPEN) return;
    if (conn.ws.bufferedAmount > this.#limits.pauseBufferedBytes / 2) return;
    conn.paused = false;
    conn.alive = true;
    if (!conn.heldFull) conn.ws.resume();
    this.#enqueue(conn);
  }

  /** Puts a socket with held frames in the ready queue (once) and makes sure a turn comes. */
  #enqueue(conn: Connection): void {
    if (conn.queued || conn.backlog.length === 0) return;
    conn.queued = true;
    this.#ready.push(conn);
    this.#scheduleTurn();
  }

  #scheduleTurn(): void {
    this.#turnTimer ??= setImmediate(() => this.#turn());
  }

  /**
   * One turn, after the sockets were read: one held frame of each ready socket in order, at most
   * FRAMES_PER_TURN of them, each socket back at the end of the queue while it has more. So a socket
   * that sends a burst is served one frame at a time between everyone else's, and sockets are read
   * again between turns (a frame from a socket with nothing held is served as soon as it is read).
   */
  #turn(): void {
    this.#turnTimer = undefined;
    this.#servedThisTurn.clear();
    let served = 0;
    while (served < FRAMES_PER_TURN && this.#ready.length > 0) {
      const conn = this.#ready.shift()!;
      conn.queued = false;
      // Stuck sockets leave the queue; their pong or drain puts them back.
      if (conn.paused || conn.creditPing !== undefined || conn.ws.readyState !== WebSocket.OPEN || conn.backlog.length === 0) continue;
      const text = conn.backlog.shift()!;
      conn.backlogBytes -= text.length;
      if (conn.heldFull && conn.backlogBytes <= this.#limits.maxBacklogBytes / 2) {
        conn.heldFull = false;
        if (!conn.paused) conn.ws.resume();
      }
      this.#servedThisTurn.add(conn);
      served++;
      this.#onFrame(conn, text);
      this.#enqueue(conn);
    }
    if (this.#ready.length > 0 || this.#servedThisTurn.size > 0) this.#scheduleTurn();
  }

  #closeSlow(conn: Connection, why: string): void {
    this.counters.slowClosed++;
    this.#logger.log("warn", "message-service.socket-slow", { aid: conn.aid, why, buffered: conn.ws.bufferedAmount });
    conn.backlog = [];
    conn.backlogBytes = 0;
    // terminate, not close: a close frame would queue behind everything it did not read.
    conn.ws.terminate();
  }

  #refuse(conn: Connection, why: string, requestId?: string): void {
    this.counters.refusedFrames++;
    this.#logger.log("info", "message-service.frame-refused", { aid: conn.aid, why });
    this.#send(conn, "error", { ...(requestId ? { request_id: requestId } : {}), status_code: 400, message: why });
  }

  #onFrame(conn: Connection, text: string): void {
    let frame: { cmd?: unknown; data?: unknown };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return this.#refuse(conn, "not JSON");
    }
    const data = (frame?.data !== null && typeof frame?.data === "object" ? frame.data : {}) as Record<string, unknown>;
    switch (frame?.cmd) {
      case "create_session_req":
        return this.#createSession(conn, data);
      case "invite_agent_req":
        this.#invite(conn, data);
        return;
      case "session_message":
        return this.#sessionMessage(conn, data);
      case "join_session_req":
        return this.#join(conn, data);
      case "close_session_req":
      case "leave_session_req":
        return this.#leave(conn, data);
      default:
        return this.#refuse(conn, typeof frame?.cmd === "string" ? `unknown cmd ${frame.cmd}` : "a frame outside a session (expected cmd)");
    }
  }

  #createSession(conn: Connection, data: Record<string, unknown>): void {
    const requestId = str(data.request_id) ? { request_id: data.request_id } : {};
    if (conn.sessions.size >= this.#limits.maxSessionsPerAid) {
      this.#refuseSession(conn.aid, "create");
      this.#send(conn, "create_session_ack", { ...requestId, session_id: "", identifying_code: "", status_code: 429, message: "too many sessions" });
      return;
    }
    const session: Session = { id: randomBytes(16).toString("hex"), identifyingCode: randomBytes(8).toString("hex"), members: new Set([conn.aid]) };
    this.#sessions.set(session.id, session);
    conn.sessions.add(session.id);
    this.counters.sessionsCreated++;
    this.#send(conn, "create_session_ack", { ...requestId, session_id: session.id, identifying_code: session.identifyingCode, status_code: 200, message: "success" });
  }

  #refuseSession(aid: string, what: "create" | "invite"): void {
    this.counters.refusedSessions++;
    this.#logger.log("info", "message-service.session-refused", { aid, what, reason: "too many sessions", limit: this.#limits.maxSessionsPerAid });
  }

  #invite(conn: Connection, data: Record<string, unknown>): void {
    const requestId = str(data.request_id);
    const sessionId = str(data.session_id) ?? "";
    const acceptor = (str(data.acceptor_id) ?? "");
    const ack = (status: number, message: string) =>
      this.#send(conn, "invite_agent_ack", { ...(requestId ? { request_id: requestId } : {}), session_id: sessionId, acceptor_id: acceptor, status_code: status, message });
    const session = this.#sessions.get(sessionId);
    if (!session || !session.members.has(conn.aid)) return void ack(404, "no such session");
    if (str(data.invite_code) !== session.identifyingCode) return void ack(403, "invite_code does not match the session");
    const invited = this.#connections.get(acceptor);
    if (!this.#agents.has(acceptor) && !invited) return void ack(404, `${acceptor} is not online`);
    if (invited && !session.members.has(acceptor)) {
      if (invited.sessions.size >= this.#limits.maxSessionsPerAid) {
        this.#refuseSession(acceptor, "invite");
        return void ack(429, `${acceptor} is in too many sessions`);
      }
      invited.sessions.add(session.id);
    }
    session.members.add(acceptor);
    if (!this.quirks.omitInviteAck) ack(200, "success");
  }

  /** An invited member accepts (the official SDKs answer an invite with join_session_req). */
  #join(conn: Connection, data: Record<string, unknown>): void {
    const session = this.#sessions.get(str(data.session_id) ?? "");
    const ok = session !== undefined && session.members.has(conn.aid);
    this.#send(conn, "join_session_ack", { ...(str(data.request_id) ? { request_id: data.request_id } : {}), session_id: str(data.session_id) ?? "", status_code: ok ? 200 : 404, message: ok ? "success" : "no such session" });
  }

  #sessionMessage(conn: Connection, data: Record<string, unknown>): void {
    const sessionId = str(data.session_id) ?? "";
    const session = this.#sessions.get(sessionId);
    if (!session || !session.members.has(conn.aid)) return this.#refuse(conn, "session_message outside a session");
    if (str(data.sender) !== conn.aid) return this.#refuse(conn, "sender is not the signed-in agent");
    const to = (str(data.receiver) ?? "");
    if (!session.members.has(to)) return this.#refuse(conn, "receiver is not in the session");
    const payload = typeof data.message === "string" ? data.message : "";
    const agent = this.#agents.get(to);
    if (agent) {
      this.counters.messagesRouted++;
      this.#safely(agent, "onMessage", () => agent.onMessage({ sessionId, from: conn.aid, payload }));
      return;
    }
    this.#deliver({ sessionId, from: conn.aid, to, payload });
  }

  #leave(conn: Connection, data: Record<string, unknown>): void {
    const session = this.#sessions.get(str(data.session_id) ?? "");
    if (session) this.#removeMember(session, conn.aid);
  }

  #deliver(p: { sessionId: string; from: string; to: string; payload: string }): boolean {
    const session = this.#sessions.get(p.sessionId);
    const conn = this.#connections.get(p.to);
    if (!session || !session.members.has(p.to) || !session.members.has(p.from) || !conn) {
      this.counters.undeliverable++;
      return false;
    }
    const now = this.#now();
    const sent = this.#send(conn, "session_message", {
      message_id: this.#messageId(),
      session_id: p.sessionId,
      ref_msg_id: "",
      sender: p.from,
      receiver: p.to,
      message: p.payload,
      timestamp: String(now),
    });
    if (sent) this.counters.messagesRouted++;
    else this.counters.undeliverable++;
    return sent;
  }

  async close(): Promise<void> {
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    if (this.#turnTimer) clearImmediate(this.#turnTimer);
    this.#turnTimer = undefined;
    this.#ready = [];
    for (const conn of this.#connections.values()) {
      if (conn.expiryTimer) clearTimeout(conn.expiryTimer);
      conn.ws.close(1001, "server closing");
    }
    // Give close frames a moment, then drop whatever is left.
    await new Promise((r) => setTimeout(r, 50).unref?.());
    for (const conn of this.#connections.values()) conn.ws.terminate();
    this.#connections.clear();
    await new Promise<void>((r) => this.#wss.close(() => r()));
  }
}
