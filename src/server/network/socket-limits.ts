// What the local message service allows each socket and how it closes one: the `/session` paths,
// the close codes a client sees, and the size limits that keep a slow or hostile socket from
// growing the server (docs/network.md "Server and socket limits"). Frames in are refused past
// maxFrameBytes before being buffered whole; a socket is sent at most outputCreditBytes before a
// pong proves it reads (its requests wait meanwhile; past maxUnconfirmedBytes it is closed); a
// socket whose unsent output passes pauseBufferedBytes is not read until it drains (and is closed
// past maxBufferedBytes or when it stops draining); requests a socket sends in a burst are held and served
// round-robin across sockets (one per socket per turn); silent sockets are pinged and dropped; one socket per aid (a newer one replaces
// the older); guests, registered identities and configured members each have their own room.
import { MAX_SOCKET_FRAME_BYTES } from "../../wire/limits.ts";

export const SESSION_PATHS = new Set(["/api/message/session", "/session"]);
export { CLOSE_REPLACED, CLOSE_TOKEN_EXPIRED } from "../../wire/close-codes.ts";
/** Close code of a socket that stopped reading what it is sent. */
export const CLOSE_TOO_SLOW = 4008;

/** Whose socket it is: a guest, an identity registered here, or a member this network was configured with (never refused for room). */
export type AidKind = "guest" | "registered" | "member";

export interface SocketLimits {
  /** Largest frame a socket may send; a larger one closes it (1009) before it is buffered. Default 1 MiB. */
  maxFrameBytes: number;
  /** Unsent output past which the socket is not read (no new requests) until it drains. Default 256 KiB. */
  pauseBufferedBytes: number;
  /** Unsent output past which the socket is closed (4008). Default 2 MiB. */
  maxBufferedBytes: number;
  /**
   * Output a socket gets before it proves it reads: past it a ping goes out behind that output, and
   * its requests wait (in the backlog) until the pong comes back. Default 256 KiB.
   */
  outputCreditBytes: number;
  /** Output sent after a credit ping still unanswered (pushes go on while requests wait) past which the socket is closed as slow. Default 2 MiB. */
  maxUnconfirmedBytes: number;
  /**
   * Sockets of registered identities open at once; further upgrades answer 503. One per aid: a
   * newer one replaces the older. Guests and configured members do not count here. Default 1000.
   */
  maxConnections: number;
  /** Sockets of guests (`sign_guest_cert` identities) open at once, apart from maxConnections. Default 200. */
  maxGuestConnections: number;
  /** Guest sockets from one source address. Default 20. */
  maxGuestConnectionsPerSource: number;
  /** TCP connections (HTTP, upgrades and sockets) from one source address; past it a new one is dropped at once. Default 512. */
  maxConnectionsPerSource: number;
  /** An HTTP connection idle this long (no request, or a request that stalls) is closed; a /session socket is judged by pings instead. Default 10 s. */
  idleTimeoutMs: number;
  /**
   * First sign-in steps (nonce requests) one source address may make per 10 s for aids no key is
   * registered for; past it 429. A registered aid's first step is never refused for its address
   * (a nonce stores nothing); its completed sign-ins are rationed per aid instead. Default 1000.
   */
  signInsPerSourcePer10s: number;
  /** New aids `sign_cert` registers for one source address per 10 minutes (renewals and configured members not counted); past it 429. Default 20. */
  newAidsPerSource: number;
  /** A frame larger than clients read (the client's socket limit) is not sent but counted. */
  maxOutboundFrameBytes: number;
  /**
   * Sessions one signed-in aid may be in at once (created or invited into); past it
   * create_session_req and invites of it are answered 429. Service agents are not counted. Default 64.
   */
  maxSessionsPerAid: number;
  /** Frames of a paused or unconfirmed socket held unserved; past it the socket is closed. Default 64 KiB. */
  maxBacklogBytes: number;
}

export const DEFAULT_SOCKET_LIMITS: SocketLimits = {
  maxFrameBytes: 1024 * 1024,
  pauseBufferedBytes: 256 * 1024,
  maxBufferedBytes: 2 * 1024 * 1024,
  outputCreditBytes: 256 * 1024,
  maxUnconfirmedBytes: 2 * 1024 * 1024,
  maxConnections: 1000,
  maxGuestConnections: 200,
  maxGuestConnectionsPerSource: 20,
  maxConnectionsPerSource: 512,
  idleTimeoutMs: 10_000,
  signInsPerSourcePer10s: 1000,
  newAidsPerSource: 20,
  maxOutboundFrameBytes: MAX_SOCKET_FRAME_BYTES,
  maxBacklogBytes: 64 * 1024,
  maxSessionsPerAid: 64,
};
