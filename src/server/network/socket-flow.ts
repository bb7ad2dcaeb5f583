// Flow control of the message service's sockets: what a socket is sent (bounded by its unsent
// output and by what a pong confirmed it read), what it sends (held while its output is stuck,
// then served one frame per socket per turn, round-robin), and the ping sweep that drops dead
// and stuck sockets. Knows frames as text and `{ cmd, data }`; sessions are the service's business.
import { WebSocket } from "ws";
import type { Logger } from "../../types.ts";
import type { AgentSocket } from "./agent-socket.ts";
import type { SocketFlowCounters } from "./service-counters.ts";
import type { SocketLimits } from "./socket-limits.ts";

/** Held frames served per turn (one per socket, round-robin) before reading sockets again. */
const FRAMES_PER_TURN = 16;

export class SocketFlow {
  readonly #limits: SocketLimits;
  readonly #logger: Logger;
  readonly #counters: SocketFlowCounters;
  /** Serves one frame a socket sent. */
  readonly #onFrame: (conn: AgentSocket, text: string) => void;
  /** Numbers the credit pings, so a pong is matched to its own ping. */
  #creditPings = 0;
  /** Sockets with held frames to serve, in round-robin order. */
  #ready: AgentSocket[] = [];
  /** Sockets that had a frame served since the last turn: their next frames wait for their turn. */
  readonly #servedThisTurn = new Set<AgentSocket>();
  /** Armed while frames wait for a turn; cleared by the turn and on close. */
  #turnTimer: ReturnType<typeof setImmediate> | undefined;

  constructor(p: { limits: SocketLimits; logger: Logger; counters: SocketFlowCounters; onFrame: (conn: AgentSocket, text: string) => void }) {
    this.#limits = p.limits;
    this.#logger = p.logger;
    this.#counters = p.counters;
    this.#onFrame = p.onFrame;
  }

  /** A text frame read off `conn`: served now, or held for its turn. */
  receive(conn: AgentSocket, text: string): void {
    const stuck = conn.paused || conn.creditPing !== undefined;
    if (stuck || conn.backlog.length > 0 || this.#servedThisTurn.has(conn)) {
      // Held: served in its turn (one frame per socket per turn), not while its output is stuck or unconfirmed.
      conn.backlog.push(text);
      conn.backlogBytes += text.length;
      if (conn.backlogBytes > this.#limits.maxBacklogBytes) {
        // A socket whose output is stuck is closed; one that is merely busy is not read until it is served.
        if (stuck) return this.closeSlow(conn, "backlog limit");
        if (!conn.heldFull) {
          conn.heldFull = true;
          conn.ws.pause();
        }
      }
      this.#enqueue(conn);
      return;
    }
    this.#servedThisTurn.add(conn);
    this.#scheduleTurn();
    this.#onFrame(conn, text);
  }

  /** A pong from `conn`: it is alive, and a pong to its credit ping confirms the output before it. */
  pong(conn: AgentSocket, data: Buffer): void {
    conn.alive = true;
    if (conn.creditPing === undefined || data.toString() !== conn.creditPing.payload) return;
    // It has read everything sent before the ping: that much output is confirmed.
    conn.unconfirmed = Math.max(0, conn.unconfirmed - conn.creditPing.confirms);
    conn.creditPing = undefined;
    this.#enqueue(conn);
  }

  /** Sends `{ cmd, data }` within the socket's limits; false when nothing was sent (the socket may be closed as slow). */
  send(conn: AgentSocket, cmd: string, data: Record<string, unknown>): boolean {
    const ws = conn.ws;
    if (ws.readyState !== WebSocket.OPEN) return false;
    const text = JSON.stringify({ cmd, data });
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > this.#limits.maxOutboundFrameBytes) {
      this.#counters.oversizeOutbound++;
      this.#logger.log("warn", "message-service.frame-not-sent", { aid: conn.aid, cmd, reason: "oversize", bytes, limit: this.#limits.maxOutboundFrameBytes });
      return false;
    }
    // One frame (up to maxOutboundFrameBytes) always fits into an empty buffer: only a backlog behind it counts.
    if (ws.bufferedAmount > 0 && ws.bufferedAmount + bytes > this.#limits.maxBufferedBytes) {
      this.closeSlow(conn, "output limit");
      return false;
    }
    // Counted from the credit ping on: one large frame before it is not held against a socket still reading it.
    if (conn.creditPing !== undefined && conn.unconfirmed - conn.creditPing.confirms > this.#limits.maxUnconfirmedBytes) {
      this.closeSlow(conn, "output unconfirmed");
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
      this.#counters.pausedSockets++;
      this.#logger.log("debug", "message-service.socket-paused", { aid: conn.aid, buffered: ws.bufferedAmount });
      ws.pause();
    }
    // Stuck now with a full backlog (it sent more than it reads): nothing more of it will be served soon.
    if ((conn.paused || conn.creditPing !== undefined) && conn.backlogBytes > this.#limits.maxBacklogBytes) this.closeSlow(conn, "backlog limit");
    return true;
  }

  /** Pings every socket; drops the ones that did not answer the previous ping and paused ones that stopped draining. */
  sweep(sockets: Iterable<AgentSocket>): void {
    for (const conn of sockets) {
      if (conn.paused) {
        // Its pongs wait unread behind the pause: judge it by whether its output drains.
        const buffered = conn.ws.bufferedAmount;
        if (buffered >= conn.pausedBuffered) {
          this.closeSlow(conn, "not draining");
          continue;
        }
        conn.pausedBuffered = buffered;
        continue;
      }
      if (!conn.alive) {
        this.#counters.deadClosed++;
        this.#logger.log("info", "message-service.socket-dead", { aid: conn.aid });
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }

  closeSlow(conn: AgentSocket, why: string): void {
    this.#counters.slowClosed++;
    this.#logger.log("warn", "message-service.socket-slow", { aid: conn.aid, why, buffered: conn.ws.bufferedAmount });
    conn.backlog = [];
    conn.backlogBytes = 0;
    // terminate, not close: a close frame would queue behind everything it did not read.
    conn.ws.terminate();
  }

  /** No more turns: the pending one is cancelled and the ready queue emptied. */
  close(): void {
    if (this.#turnTimer) clearImmediate(this.#turnTimer);
    this.#turnTimer = undefined;
    this.#ready = [];
  }

  /** A write went out: a paused socket is read again once half its pause limit is left. */
  #drained(conn: AgentSocket): void {
    if (!conn.paused || conn.ws.readyState !== WebSocket.OPEN) return;
    if (conn.ws.bufferedAmount > this.#limits.pauseBufferedBytes / 2) return;
    conn.paused = false;
    conn.alive = true;
    if (!conn.heldFull) conn.ws.resume();
    this.#enqueue(conn);
  }

  /** Puts a socket with held frames in the ready queue (once) and makes sure a turn comes. */
  #enqueue(conn: AgentSocket): void {
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
}
