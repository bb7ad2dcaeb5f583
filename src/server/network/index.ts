// The local ACP network's public surface: one call starts the access point and message service.
export { DEFAULT_LOCAL_DOMAIN, networkBanner, startLocalNetwork, type LocalNetwork, type LocalNetworkCounters, type LocalNetworkOptions } from "./local-network.ts";
export { CLOSE_TOKEN_EXPIRED, DEFAULT_SOCKET_LIMITS, type SocketLimits } from "./socket-limits.ts";
