// The transport's public surface: a group connection over a PeerChannel, its errors, and the
// wire helpers.
export { createGroupConnection, type ConnectionCounters, type ConnectionStatus, type GroupConnection, type GroupConnectionEvents } from "./connection.ts";
export { DEFAULT_HEARTBEAT_MS, DEFAULT_REGISTER_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, type GroupConnectionParams } from "./connection-options.ts";
export type { GroupEvent } from "./group-event-feed.ts";
export { TransportError, type TransportErrorCode, type TransportErrorContext } from "./errors.ts";
export type { GroupFeedStatus } from "./group-feed.ts";
export { RESULT_CODES } from "../wire/result-codes.ts";
export { parseWireMessage, toWireMessage, type WireMessage } from "../wire/message.ts";
