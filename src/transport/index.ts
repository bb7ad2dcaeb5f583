// The transport's public surface: a group connection over a PeerChannel, its errors, and the
// wire helpers.
export { DEFAULT_HEARTBEAT_MS, DEFAULT_REGISTER_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, createGroupConnection } from "./connection.ts";
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
export { RESULT_CODES } from "../wire/result-codes.ts";
export { parseWireMessage, toWireMessage, type WireMessage } from "../wire/message.ts";
