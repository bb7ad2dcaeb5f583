// One agent's socket as the message service holds it: whose it is, its flow-control state (what
// it was sent and has not confirmed, what it sent that waits to be served) and the sessions it is
// in. Plain data: socket-flow.ts runs the flow control, session-table.ts the sessions.
import type { WebSocket } from "ws";
import type { AidKind } from "./socket-limits.ts";

export interface AgentSocket {
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

/** A freshly accepted socket: alive, nothing sent, nothing held, in no session. */
export function newAgentSocket(who: { aid: string; kind: AidKind; source: string }, ws: WebSocket): AgentSocket {
  return { ...who, ws, alive: true, expiryTimer: undefined, paused: false, pausedBuffered: 0, backlog: [], backlogBytes: 0, sessions: new Set(), unconfirmed: 0, creditPing: undefined, queued: false, heldFull: false };
}
