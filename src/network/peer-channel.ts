// The seam between the network layer (src/network/: identity, sign-in, the message socket,
// sessions) and the group layer (src/transport/: group frames). The network hands up a durable
// channel to one peer agent (e.g. `group.agentcp.io`); the group layer knows nothing about
// certificates, tokens or session ids beyond what this file names.

export type PeerChannelStatus = "connecting" | "up" | "down" | "closed";

export interface PeerChannelEvents {
  /**
   * A new session with the peer is ready to carry payloads: the first time, and again after every
   * reconnect (a fresh session each time). Everything session-scoped must be redone on it
   * (register_online, the pull after the cursor).
   */
  up: { sessionId: string; reconnect: boolean };
  /** The session is gone (socket dropped, token refused, peer unreachable). Requests in flight on it get no answer. */
  down: { reason: string };
  /** One payload from the peer: the `message` string of a `session_message` whose sender is the peer. */
  message: { payload: string; sessionId: string };
}

export interface PeerChannel {
  /** The peer's aid, e.g. `group.agentcp.io`. */
  readonly peer: string;
  readonly status: PeerChannelStatus;
  /** The current session id while `up`. */
  readonly sessionId: string | undefined;
  /**
   * Sends one payload to the peer as a `session_message` on the current session. Returns false and
   * sends nothing when no session is up; never throws for a closed socket.
   */
  send(payload: string): boolean;
  on<E extends keyof PeerChannelEvents>(event: E, listener: (payload: PeerChannelEvents[E]) => void): () => void;
  /**
   * The session went silent while the socket is up (the peer answers nothing): drop it (`down`
   * with `reason`) and build a new one (`up` again). A no-op unless `up`.
   */
  renew(reason: string): void;
  /** Stops using the channel; the identity's socket stays for its other channels. */
  close(): void;
}

/** An identity signed in to the network: one message socket, any number of peer channels. */
export interface AgentLink {
  readonly aid: string;
  /** A channel to `peer`, created on first use; sessions are (re)built by the network layer. */
  channel(peer: string): PeerChannel;
}
