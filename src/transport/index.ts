// The transport's public surface: a group connection behind an interface (the direct-`ws` one
// here; an ACP network-session one could replace it), its errors, and the wire helpers.
export { createGroupConnection } from "./connection.ts";
export type {
  ConnectionCounters,
  ConnectionStatus,
  GroupConnection,
  GroupConnectionEvents,
  GroupConnectionParams,
  GroupEvent,
} from "./connection-types.ts";
export { TransportError, type TransportErrorCode, type TransportErrorContext } from "./errors.ts";
export type { GroupFeedStatus } from "./group-feed.ts";
export { AUTH_HEADERS, RESULT_CODES, parseWireMessage, toWireMessage, type WireMessage } from "./protocol.ts";
export { computeBackoffDelay, type BackoffSettings } from "./backoff.ts";
