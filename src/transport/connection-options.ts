// What a group connection is given: its parameters, and each tunable's default, filled in once
// when the connection is made.
import type { PeerChannel } from "../network/peer-channel.ts";
import type { GroupMessage, Logger } from "../types.ts";
import { silentLogger } from "../log.ts";
import type { BackoffSettings } from "../util/backoff.ts";
import { MAX_INBOUND_PAYLOAD_BYTES, MAX_MESSAGE_BYTES } from "../wire/limits.ts";
import type { GroupEvent } from "./group-event-feed.ts";

/** The service's online TTL is 5 minutes; the SDK beats every 3. */
export const DEFAULT_HEARTBEAT_MS = 180_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** register_online unanswered this long is asked again (on backoff from 1 s): pushes start within seconds. */
export const DEFAULT_REGISTER_TIMEOUT_MS = 10_000;

export interface GroupConnectionParams {
  /** The session with the group service (`group.<ap>`); rebuilt by the network layer after every drop. */
  channel: PeerChannel;
  /** Our agent id (request ids start with it). */
  aid: string;
  groups: readonly string[];
  /** Close the channel on close(). Default true (the connection owns it). */
  closeChannel?: boolean;
  /** Persisted cursor: everything after it is pulled on every (re)connect. */
  getCursor(groupId: string): number;
  /**
   * Highest msg id it is safe to acknowledge to the server: everything at or below it has been
   * dispatched or dropped for good. Default: everything accepted by `onMessages`. Acking a
   * message that is still buffered would let the server's cursor pass it, and a restart with no
   * saved cursor (which pulls from the server's cursor) would never see it again.
   */
  ackCursor?(groupId: string): number;
  /** Accepted (resolved) → ack_messages(last msg id). Throwing → re-pulled later with backoff. */
  onMessages(groupId: string, messages: GroupMessage[]): void | Promise<void>;
  onEvent?(groupId: string, event: GroupEvent): void;
  logger?: Logger;
  /**
   * Interval of group `heartbeat` requests, each followed by register_online renewing the
   * registration; a failed one is logged, never drops anything nor stops the next. 0 disables. Default 180000.
   */
  heartbeatMs?: number;
  /** Default 30000. */
  requestTimeoutMs?: number;
  /** register_online unanswered this long is asked again on `registerRetry` backoff. Default 10000 (at most requestTimeoutMs). */
  registerTimeoutMs?: number;
  /** Backoff of an unanswered register_online. Default { baseMs: 1000, maxMs: 30000, jitter: 0.3 }. */
  registerRetry?: BackoffSettings;
  /** Back-off of a group's re-pull after a failed pull or handler. Default { baseMs: 500, maxMs: 30000, jitter: 0.3 }. */
  reconnect?: BackoffSettings;
  /** Retries of send_message answered 1010. Default { maxAttempts: 5, baseMs: 1000, maxMs: 30000, jitter: 0.3 }. */
  sendRetry?: BackoffSettings & { maxAttempts: number };
  /** pull_messages page size. Default 50. */
  pageSize?: number;
  /** Larger inbound frames are counted and dropped (a pull answered so is retried smaller); the connection stays up. Default 2 MiB (wire/limits.ts). */
  maxFrameBytes?: number;
  /** send_message with more content plus metadata (as JSON bytes) fails with MESSAGE_TOO_LARGE before sending. Default 64 KiB (wire/limits.ts). */
  maxMessageBytes?: number;
  random?: () => number;
  /** Clock for the request-id prefix (unique across restarts). Default Date.now. */
  now?: () => number;
}

/** The tunables of {@link GroupConnectionParams}, defaults filled in. */
export interface ConnectionSettings {
  logger: Logger;
  random: () => number;
  requestTimeoutMs: number;
  heartbeatMs: number;
  /** Never longer than the request timeout. */
  registerTimeoutMs: number;
  registerRetry: BackoffSettings;
  reconnect: BackoffSettings;
  sendRetry: BackoffSettings & { maxAttempts: number };
  maxFrameBytes: number;
  maxMessageBytes: number;
}

export function connectionSettings(p: GroupConnectionParams): ConnectionSettings {
  const requestTimeoutMs = p.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return {
    logger: p.logger ?? silentLogger,
    random: p.random ?? Math.random,
    requestTimeoutMs,
    heartbeatMs: p.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    registerTimeoutMs: Math.min(p.registerTimeoutMs ?? DEFAULT_REGISTER_TIMEOUT_MS, requestTimeoutMs),
    registerRetry: p.registerRetry ?? { baseMs: 1000, maxMs: 30_000, jitter: 0.3 },
    reconnect: p.reconnect ?? { baseMs: 500, maxMs: 30_000, jitter: 0.3 },
    sendRetry: p.sendRetry ?? { maxAttempts: 5, baseMs: 1000, maxMs: 30_000, jitter: 0.3 },
    maxFrameBytes: p.maxFrameBytes ?? MAX_INBOUND_PAYLOAD_BYTES,
    maxMessageBytes: p.maxMessageBytes ?? MAX_MESSAGE_BYTES,
  };
}
