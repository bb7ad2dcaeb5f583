// How the runtime signs an identity in to the network when no link is injected: its key and
// certificate from the state dir (or the configured files), its access point, and the TLS trust
// from `network`. The network layer does the rest (sign-in, socket, sessions).
import { connectAgent, resolveAgentConnection, warnExpiringCertificates, type NetworkAgent } from "../network/index.ts";
import { defaultStateDir } from "../state/file-store.ts";
import type { ChannelConfig, Logger } from "../types.ts";

export function connectConfiguredIdentity(params: { config: ChannelConfig; identityId: string; logger: Logger; now?: () => number; clientInfo?: string; signInPriority?: () => number }): NetworkAgent {
  const { config, identityId, logger } = params;
  const resolved = resolveAgentConnection({
    identity: config.identities[identityId]!,
    network: config.network,
    stateDir: config.stateDir ?? defaultStateDir(),
  });
  warnExpiringCertificates({ identities: [{ aid: resolved.identity.aid, certPem: resolved.identity.certPem }], now: (params.now ?? Date.now)(), logger });
  // network.insecureTls is logged at warn by connectAgent itself.
  return connectAgent({
    ...resolved,
    logger,
    ...(params.clientInfo !== undefined ? { clientInfo: params.clientInfo } : {}),
    // The process's shared sign-in pace (network/sign-in-pace.ts), most urgent first.
    ...(params.signInPriority ? { signInPriority: params.signInPriority } : {}),
  });
}
