// What the message service counts (its `counters`): kept apart from the socket code so the
// service's public types need no WebSocket types.

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
  /** session_messages dropped because their receiver had not joined yet (strict invites). */
  droppedBeforeJoin: number;
}

/** The socket flow's share of the counters. */
export type SocketFlowCounters = Pick<MessageServiceCounters, "pausedSockets" | "slowClosed" | "deadClosed" | "oversizeOutbound">;

/** The session table's share of the counters. */
export type SessionCounters = Pick<MessageServiceCounters, "sessionsCreated" | "refusedSessions">;
