// How the runtime signs an identity in to the network when no link is injected: its key and
// certificate from the state dir (or the configured files), its access point, and the TLS trust
// from `network`. The network layer does the rest (sign-in, socket, sessions).
import { accessPointUrlFor, connectAgent, loadIdentity, warnExpiringCertificates, type NetworkAgent } from "./network/index.ts";
import { defaultStateDir } from "./state/file-store.ts";
import type { ChannelConfig, Logger } from "./types.ts";

export function connectConfiguredIdentity(params: { config: ChannelConfig; identityId: string; logger: Logger; now?: () => number }): NetworkAgent {
  const { config, identityId, logger } = params;
  const configured = config.identities[identityId]!;
  const seedPassword = config.network.seedPassword ?? process.env.ACP_SEED_PASSWORD;
  const identity = loadIdentity({
    aid: configured.aid,
    stateDir: config.stateDir ?? defaultStateDir(),
    ...(configured.identityDir ? { identityDir: configured.identityDir } : {}),
    ...(configured.keyFile ? { keyFile: configured.keyFile } : {}),
    ...(configured.certFile ? { certFile: configured.certFile } : {}),
    ...(seedPassword !== undefined ? { seedPassword } : {}),
  });
  warnExpiringCertificates({ identities: [{ aid: identity.aid, certPem: identity.certPem }], now: (params.now ?? Date.now)(), logger });
  const accessPointUrl = accessPointUrlFor({ aid: configured.aid, accessPoint: configured.accessPoint, accessPointUrl: configured.accessPointUrl });
  if (config.network.insecureTls) logger.log("warn", "runtime.insecure_tls", { aid: configured.aid, accessPointUrl, note: "TLS certificates are NOT verified (network.insecureTls)" });
  return connectAgent({
    identity,
    accessPointUrl,
    tls: {
      ...(config.network.caFile ? { caFile: config.network.caFile } : {}),
      ...(config.network.insecureTls ? { insecureTls: true } : {}),
    },
    logger,
  });
}
