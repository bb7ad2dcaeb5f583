// WebSocket close codes of the message service that the client acts on (the local network sends
// them; src/server/network/socket-limits.ts re-exports them).

/** The token behind the socket expired: sign in again. */
export const CLOSE_TOKEN_EXPIRED = 4001;
/** The same aid opened a newer socket, which replaced this one. */
export const CLOSE_REPLACED = 4002;
