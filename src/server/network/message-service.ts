// The local message service: the `/session` WebSocket (token checked at the upgrade), sessions
// (`create_session_req`, `invite_agent_req`) and `session_message` routing between connected
// agents and in-process service agents. Refuses a frame outside a session, a sender that is not
// the signed-in aid, and a socket whose token has expired. Every socket is bounded (socket-limits.ts,
// socket-flow.ts); sessions live in session-table.ts.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket, type RawData } from "ws";
import type { Logger } from "../../types.ts";
import type { ServiceAgent, ServiceAgentHost } from "../service-agent.ts";
import type { TokenStore } from "./tokens.ts";
import { nextMessageId } from "../../network/message-id.ts";
import { newAgentSocket, type AgentSocket } from "./agent-socket.ts";
import type { MessageServiceCounters } from "./service-counters.ts";
import { SessionTable, callServiceAgent, str } from "./session-table.ts";
import { SocketFlow } from "./socket-flow.ts";
import { CLOSE_REPLACED, CLOSE_TOKEN_EXPIRED, DEFAULT_SOCKET_LIMITS, type AidKind, type SocketLimits } from "./socket-limits.ts";
import { wait } from "../../util/wait.ts";

export interface MessageServiceQuirks {
  /** Accept invite_agent_req without ever sending invite_agent_ack (the official SDK never waits for one). */
  omitInviteAck: boolean;
  /**
   * A strict service: an invited member joins the session (and invite_agent_ack goes out) this
   * many ms after the invite, and session frames sent to it before then are dropped without an
   * answer. Undefined: joins at once.
   */
  strictInviteDelayMs: number | undefined;
}

export type { MessageServiceCounters } from "./service-counters.ts";

export class MessageService {
  readonly #tokens: TokenStore;
  readonly #now: () => number;
  readonly #logger: Logger;
  readonly #wss: WebSocketServer;
  readonly #agents = new Map<string, ServiceAgent>();
  readonly #connections = new Map<string, AgentSocket>();
  readonly #sessions: SessionTable;
  readonly #flow: SocketFlow;
  #lastMessageId = 0;
  readonly #limits: SocketLimits;
  readonly #kindOf: (aid: string) => AidKind;
  /** Sends an invite over the presence channel (set by the local network when it serves presence); false when `to` is not there. */
  presenceInvite: ((to: string, invite: { inviter: string; inviteCode: string; sessionId: string }) => boolean) | undefined;
  /** How this service may differ from the usual (tests play a real network's behaviour with it). */
  readonly quirks: MessageServiceQuirks = { omitInviteAck: false, strictInviteDelayMs: undefined };
  readonly counters: MessageServiceCounters = {
    connections: 0, refusedUpgrades: 0, refusedFrames: 0, sessionsCreated: 0, messagesRouted: 0, undeliverable: 0,
    refusedFull: 0, pausedSockets: 0, slowClosed: 0, deadClosed: 0, oversizeOutbound: 0, refusedSessions: 0,
    droppedBeforeJoin: 0,
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
    /** How long an invited agent has to join (join_session_req) before the inviter hears 408. Default 15000 ms. */
    inviteJoinTimeoutMs?: number;
  }) {
    this.#limits = { ...DEFAULT_SOCKET_LIMITS, ...params.limits };
    this.#kindOf = params.kindOf ?? (() => "registered");
    // maxPayload: ws refuses a larger frame from its header, before buffering it.
    // answerPings false simulates a half-open connection: the socket stays, pongs never come.
    // perMessageDeflate off: compression would hold a zlib context per socket.
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: this.#limits.maxFrameBytes, autoPong: params.answerPings !== false, perMessageDeflate: false });
    if (params.pingIntervalMs !== 0) {
      this.#sweepTimer = setInterval(() => this.#flow.sweep(this.#connections.values()), params.pingIntervalMs ?? 30_000);
      this.#sweepTimer.unref?.();
    }
    this.#tokens = params.tokens;
    this.#now = params.now;
    this.#logger = params.logger;
    this.#flow = new SocketFlow({ limits: this.#limits, logger: this.#logger, counters: this.counters, onFrame: (conn, text) => this.#onFrame(conn, text) });
    this.#sessions = new SessionTable({
      logger: this.#logger,
      counters: this.counters,
      maxSessionsPerAid: this.#limits.maxSessionsPerAid,
      omitInviteAck: () => this.quirks.omitInviteAck,
      strictInviteDelayMs: () => this.quirks.strictInviteDelayMs,
      sockets: this.#connections,
      agents: this.#agents,
      joinTimeoutMs: params.inviteJoinTimeoutMs ?? 15_000,
      send: (conn, cmd, data) => this.#flow.send(conn, cmd, data),
    });
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
      invite: ({ to, via }) =>
        via === "presence"
          ? this.#sessions.openFromService(agent.aid, to, (s) => this.presenceInvite?.(to, { inviter: agent.aid, inviteCode: s.identifyingCode, sessionId: s.id }) ?? false)
          : this.#sessions.openFromService(agent.aid, to),
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
    const { aid } = who;
    const previous = this.#connections.get(aid);
    if (previous) {
      // The older socket may be half-open: its sessions end now, not whenever TCP notices.
      this.#connections.delete(aid);
      this.#sessions.endSessionsOf(aid, previous.sessions);
      previous.ws.close(CLOSE_REPLACED, "replaced by a newer connection");
    }
    const conn = newAgentSocket(who, ws);
    ws.on("pong", (data: Buffer) => this.#flow.pong(conn, data));
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
      this.#flow.receive(conn, data.toString());
    });
    ws.on("close", () => {
      if (conn.expiryTimer) clearTimeout(conn.expiryTimer);
      conn.expiryTimer = undefined;
      if (this.#connections.get(aid) === conn) {
        this.#connections.delete(aid);
        this.#sessions.endSessionsOf(aid, conn.sessions);
      }
      this.#logger.log("info", "message-service.disconnected", { aid });
    });
    ws.on("error", (err) => this.#logger.log("debug", "message-service.socket-error", { aid, error: err.message }));
  }

  /** Ends the socket of `aid` (or every socket) as if its token expired now. */
  expire(aid: string | undefined): void {
    for (const conn of this.#connections.values()) if (aid === undefined || conn.aid === aid) conn.ws.close(CLOSE_TOKEN_EXPIRED, "token expired");
  }

  /** Drops the socket of `aid` (or every socket) without a close frame, like a network failure. */
  drop(aid: string | undefined): void {
    for (const conn of this.#connections.values()) if (aid === undefined || conn.aid === aid) conn.ws.terminate();
  }

  #refuse(conn: AgentSocket, why: string, requestId?: string): void {
    this.counters.refusedFrames++;
    this.#logger.log("info", "message-service.frame-refused", { aid: conn.aid, why });
    this.#flow.send(conn, "error", { ...(requestId ? { request_id: requestId } : {}), status_code: 400, message: why });
  }

  #onFrame(conn: AgentSocket, text: string): void {
    let frame: { cmd?: unknown; data?: unknown };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return this.#refuse(conn, "not JSON");
    }
    const data = (frame?.data !== null && typeof frame?.data === "object" ? frame.data : {}) as Record<string, unknown>;
    switch (frame?.cmd) {
      case "create_session_req":
        return this.#sessions.create(conn, data);
      case "invite_agent_req":
        this.#sessions.invite(conn, data);
        return;
      case "session_message":
        return this.#sessionMessage(conn, data);
      case "join_session_req":
        return this.#sessions.join(conn, data);
      case "close_session_req":
      case "leave_session_req":
        return this.#sessions.leave(conn, data);
      default:
        return this.#refuse(conn, typeof frame?.cmd === "string" ? `unknown cmd ${frame.cmd}` : "a frame outside a session (expected cmd)");
    }
  }

  #sessionMessage(conn: AgentSocket, data: Record<string, unknown>): void {
    const sessionId = str(data.session_id) ?? "";
    const session = this.#sessions.get(sessionId);
    if (!session || !session.members.has(conn.aid)) return this.#refuse(conn, "session_message outside a session");
    if (str(data.sender) !== conn.aid) return this.#refuse(conn, "sender is not the signed-in agent");
    const to = (str(data.receiver) ?? "");
    if (this.#sessions.isJoining(session, to)) {
      // Sent before the invited member joined: lost without a word, as on a strict service.
      this.counters.droppedBeforeJoin++;
      this.#logger.log("debug", "message-service.dropped-before-join", { aid: conn.aid, to, sessionId });
      return;
    }
    if (!session.members.has(to)) return this.#refuse(conn, "receiver is not in the session");
    const payload = typeof data.message === "string" ? data.message : "";
    const agent = this.#agents.get(to);
    if (agent) {
      this.counters.messagesRouted++;
      callServiceAgent(this.#logger, agent, "onMessage", () => agent.onMessage({ sessionId, from: conn.aid, payload }));
      return;
    }
    this.#deliver({ sessionId, from: conn.aid, to, payload });
  }

  #deliver(p: { sessionId: string; from: string; to: string; payload: string }): boolean {
    const session = this.#sessions.get(p.sessionId);
    const conn = this.#connections.get(p.to);
    if (!session || !session.members.has(p.to) || !session.members.has(p.from) || !conn) {
      this.counters.undeliverable++;
      return false;
    }
    const now = this.#now();
    const sent = this.#flow.send(conn, "session_message", {
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
    this.#sessions.close();
    this.#flow.close();
    for (const conn of this.#connections.values()) {
      if (conn.expiryTimer) clearTimeout(conn.expiryTimer);
      conn.ws.close(1001, "server closing");
    }
    // Give close frames a moment, then drop whatever is left.
    await wait(50);
    for (const conn of this.#connections.values()) conn.ws.terminate();
    this.#connections.clear();
    await new Promise<void>((r) => this.#wss.close(() => r()));
  }
}
