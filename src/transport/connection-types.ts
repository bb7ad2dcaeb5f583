// The public shape of a group connection: group frames over a PeerChannel (the session with
// `group.<ap>` that the network layer keeps up). Implemented in connection.ts.
import type { PeerChannel } from "../network/peer-channel.ts";
import type { GroupMessage, GroupSender, Logger } from "../types.ts";
import type { BackoffSettings } from "../util/backoff.ts";
import type { GroupFeedCounters, GroupFeedStatus } from "./group-feed.ts";
import type { Plain } from "../wire/plain.ts";

export type ConnectionStatus = "idle" | "connecting" | "syncing" | "open" | "reconnecting" | "closed";

/**
 * A notification from the group service. For an entry of its event log (a `group_event`, or one
 * pulled after `new_event`) `event` is its `event_type` (`member_joined`, `member_left`,
 * `announcement_updated`, …), `data` its data, and the id, actor and target come alongside.
 */
export interface GroupEvent {
  event: string;
  data: Plain;
  /** Server time, when the frame carried one. */
  timestamp: number | undefined;
  /** An event-log entry's id (each handed over once, in order). */
  eventId?: number;
  /** Who did it (event-log entries). */
  actor?: string;
  /** Whom it was done to (event-log entries about a member). */
  target?: string;
}

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

export interface ConnectionCounters extends GroupFeedCounters {
  framesIn: number;
  /** Not JSON, not an object, or a field of the wrong type (responses included). */
  malformedFrames: number;
  /** Invalid messages inside an otherwise valid batch push or pull page. */
  malformedMessages: number;
  unknownActions: number;
  oversizeFrames: number;
  /** Responses whose request_id matches no request in flight. */
  unmatchedResponses: number;
  /** Pushes and notifications for groups we did not subscribe to. */
  unknownGroups: number;
  reconnects: number;
  requestTimeouts: number;
  heartbeatFailures: number;
  rateLimitedRetries: number;
  /** register_online that failed or went unanswered (unanswered: retried within seconds; refused: at the next heartbeat). */
  registerFailures: number;
  /** Sessions that answered nothing for a whole request timeout while up, and were rebuilt. */
  silentSessions: number;
  /** Frames of a session we already left. */
  staleFrames: number;
}

export interface GroupConnectionEvents {
  status: { status: ConnectionStatus; previous: ConnectionStatus };
  /** The session went down; the network layer builds a new one. */
  disconnected: { reason: string };
}

export type Listener<E extends keyof GroupConnectionEvents> = (payload: GroupConnectionEvents[E]) => void;

export interface GroupConnection extends GroupSender {
  /** Resolves once a session is up and the initial pull of every group is done; rejects on close. */
  start(): Promise<void>;
  readonly status: ConnectionStatus;
  /** The group service's aid. */
  readonly peer: string;
  on<E extends keyof GroupConnectionEvents>(event: E, listener: Listener<E>): () => void;
  off<E extends keyof GroupConnectionEvents>(event: E, listener: Listener<E>): void;
  counters(): Readonly<ConnectionCounters>;
  /** Acknowledges, if it moved, min(last accepted, `ackCursor`) — call it when the settled cursor advances. */
  acknowledge(groupId: string): void;
  /** Highest msg id accepted by onMessages for the group (starts at the cursor). */
  lastFed(groupId: string): number | undefined;
  groupStatus(groupId: string): GroupFeedStatus | undefined;
  /** Any other group action (get_group_info, get_members, get_cursor …); returns `data`, throws on a non-zero code. */
  request(action: string, options?: { groupId?: string; params?: Plain }): Promise<unknown>;
  close(): Promise<void>;
}
