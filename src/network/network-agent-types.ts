// The options, status, counters and events of a NetworkAgent (network-agent.ts).
import type { Logger } from "../types.ts";
import type { NetworkError } from "./errors.ts";
import type { HttpClient, TlsOptions } from "./http-client.ts";
import type { Identity } from "./identity-store.ts";
import type { DirectMessage } from "./direct-link.ts";
import type { SignInPace } from "./sign-in-pace.ts";
import type { OpenPresenceSocket } from "./presence.ts";
import type { NonceSigner } from "./sign-in.ts";
import type { TurnBudget } from "../util/turn-budget.ts";

export interface ConnectAgentOptions {
  identity: Identity;
  /** e.g. `https://acp3.agentcp.io` (see accessPointUrlFor). */
  accessPointUrl: string;
  tls?: TlsOptions;
  logger?: Logger;
  /** WebSocket ping interval; a socket with no pong by the next ping is dead. Default 20000 ms. */
  pingIntervalMs?: number;
  /** Deadline for opening the message socket (the whole handshake). Default 15000 ms. */
  dialTimeoutMs?: number;
  /** Wait for a create_session/invite ack. Default 15000 ms. */
  ackTimeoutMs?: number;
  /** A new session is used without its invite_agent_ack after this long (with a warning). Default 5000 ms. */
  inviteAckWaitMs?: number;
  /** Redial backoff: from `baseMs` (default 1000) doubling up to `maxMs` (default 60000), half of each step random. */
  backoff?: { baseMs?: number; maxMs?: number };
  /** A socket open at least this long counts as stable: its drop redials at once. Default 30000 ms. */
  stableMs?: number;
  /** The `client_info` of the sign-ins (default the channel's agents; `acp-group chat` says it is a person's client). */
  clientInfo?: string;
  /**
   * The pace its sign-ins share with the process's other identities (default processSignInPace:
   * a few at once, the most urgent first, all woken when one gets back in); null: unpaced.
   */
  signInPace?: SignInPace | null;
  /** The turn budget its sessions are built under once the socket opens (default processTurnBudget). */
  turns?: TurnBudget;
  /** How urgently it needs its connection (higher first), read when a sign-in slot frees. */
  signInPriority?: () => number;
  /** UDP presence with the network's `heartbeat_server`, as the SDKs keep it (src/network/presence.ts). Default true. */
  presence?: boolean;
  /** The presence client's socket (tests script one). Default: dgram udp4. */
  openPresenceSocket?: OpenPresenceSocket;
  /** Signs the sign-in nonces (default: on libuv's thread pool, off the event loop; tests script one on their fake clock). */
  signer?: NonceSigner;
  /** Replaces the HTTP client (a scripted access point in tests). */
  http?: HttpClient;
  now?: () => number;
  random?: () => number;
}

export type NetworkAgentStatus = "signing-in" | "open" | "waiting" | "rejected" | "closed";

export interface NetworkAgentCounters {
  signIns: number;
  signInFailures: number;
  socketsOpened: number;
  /** session_messages from senders with no channel: direct messages, never group chat. */
  directMessages: number;
  /** session_messages from a channel's peer on a session that is not the current one, while the channel is down. */
  staleMessages: number;
  /** session_messages from a channel's peer on another session while the channel is up: delivered (routed by sender). */
  otherSessionMessages: number;
}

export interface NetworkAgentEvents {
  status: { status: NetworkAgentStatus };
  /** The key or certificate was refused: the agent has stopped. */
  rejected: { error: NetworkError };
  /** A session_message from a sender that is not a channel's peer: a direct message. */
  direct: DirectMessage;
}
