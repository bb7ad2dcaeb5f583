// The seam inside the local network: the message service (src/server/: sign-in, the `/session`
// socket, session routing) hosts in-process service agents such as the group service
// `group.<domain>`. A service agent sees payloads and sessions, never sockets or certificates.

export interface ServiceAgentHost {
  /**
   * Sends `payload` to `to` as a `session_message` from the service agent on session
   * `sessionId`. False when that member's session or socket is gone (nothing sent).
   */
  send(params: { sessionId: string; to: string; payload: string }): boolean;
  /**
   * Opens a new session with `to` and invites it (as a real network's service may do, e.g. after a
   * restart): `invite_agent_req` over its socket, or with `via: "presence"` a UDP invite (259)
   * where it last beat. The session id, or undefined when `to` has no socket (or no presence).
   */
  invite?(params: { to: string; via?: "socket" | "presence" }): string | undefined;
}

export interface ServiceAgent {
  /** e.g. `group.acp.local`. */
  readonly aid: string;
  /** Called once when the message service starts hosting the agent. */
  attach(host: ServiceAgentHost): void;
  /** One payload from `from` (an authenticated aid) on a session that includes this agent. */
  onMessage(params: { sessionId: string; from: string; payload: string }): void;
  /** The session ended for `from` (socket closed, session closed): forget anything tied to it. */
  onSessionEnd(params: { sessionId: string; from: string }): void;
}
