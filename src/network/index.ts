// The network layer's public surface: identities on disk, sign-in, one socket per identity with
// peer channels (sessions) on it. Knows nothing about groups.
export type { AgentLink, PeerChannel, PeerChannelEvents, PeerChannelStatus } from "./peer-channel.ts";
export { NetworkError, type NetworkErrorCode } from "./errors.ts";
export { accessPointUrlFor, aidDomain, groupServiceAid } from "./access-point.ts";
export { createHttpClient, type HttpClient, type HttpReply, type TlsOptions } from "./http-client.ts";
export {
  checkCertificateExpiry,
  createIdentity,
  ensureIdentity,
  identitiesRoot,
  identityPaths,
  importIdentity,
  listIdentities,
  loadIdentity,
  type CertificateExpiry,
  type CreateIdentityParams,
  type Identity,
  type IdentityListing,
} from "./identity-store.ts";
export { getAccessPointConfig, signIn, signInToNetwork } from "./sign-in.ts";
export { connectAgent, NetworkAgent, type ConnectAgentOptions, type NetworkAgentCounters, type NetworkAgentEvents, type NetworkAgentStatus } from "./network-agent.ts";
export { summarizeCertificate, sdkPassphrase, type CertificateSummary } from "./x509.ts";
export { warnExpiringCertificates } from "./expiry.ts";
export { resolveAgentConnection, type ResolvedAgentConnection } from "./from-config.ts";
