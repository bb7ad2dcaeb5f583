// From a validated identity config to what connectAgent needs: the identity from disk, the access
// point URL and the TLS rules. The one place config shapes meet the network layer.
import type { IdentityConfig, NetworkSettings } from "../config/schema.ts";
import { accessPointUrlFor } from "./access-point.ts";
import { resolveSeedPassword } from "../config/secret-ref.ts";
import type { TlsOptions } from "./http-client.ts";
import { join } from "node:path";
import { NetworkError } from "./errors.ts";
import { loadIdentity, type Identity } from "./identity-store.ts";

export interface ResolvedAgentConnection {
  identity: Identity;
  accessPointUrl: string;
  tls: TlsOptions;
  /** `network.presence`: UDP presence with the network's heartbeat server. */
  presence: boolean;
}

/** Throws NetworkError IDENTITY_NOT_FOUND / IDENTITY_LOCKED / IDENTITY_REJECTED naming the aid. */
export function resolveAgentConnection(params: {
  identity: Pick<IdentityConfig, "aid" | "identityDir" | "keyFile" | "certFile" | "accessPoint" | "accessPointUrl">;
  network: Omit<NetworkSettings, "presence"> & { presence?: boolean };
  stateDir: string;
  env?: NodeJS.ProcessEnv;
}): ResolvedAgentConnection {
  const { identity: c, network } = params;
  const seedPassword = resolveSeedPassword(network, params.env ?? process.env);
  const accessPointUrl = accessPointUrlFor({ aid: c.aid, accessPoint: c.accessPoint, accessPointUrl: c.accessPointUrl });
  let identity: Identity;
  try {
    identity = loadIdentity({
      aid: c.aid,
      stateDir: params.stateDir,
      ...(c.identityDir !== undefined ? { identityDir: c.identityDir } : {}),
      ...(c.keyFile !== undefined ? { keyFile: c.keyFile } : {}),
      ...(c.certFile !== undefined ? { certFile: c.certFile } : {}),
      seedPassword,
    });
  } catch (err) {
    // Where we looked and the whole command that puts the identity there (the OpenClaw gateway
    // and the CLI print this one line).
    if (!(err instanceof NetworkError) || err.code !== "IDENTITY_NOT_FOUND" || c.identityDir !== undefined || c.keyFile !== undefined) throw err;
    const defaultUrl = accessPointUrlFor({ aid: c.aid });
    const command = [
      `acp-group id create ${c.aid} --state-dir ${params.stateDir}`,
      ...(accessPointUrl !== defaultUrl ? [`--ap-url ${accessPointUrl}`] : []),
      ...(network.caFile !== undefined ? [`--ca-file ${network.caFile}`] : []),
    ].join(" ");
    throw new NetworkError("IDENTITY_NOT_FOUND", `No identity ${c.aid} in ${join(params.stateDir, "identities")} (the state dir): create it with \`${command}\``, { aid: c.aid });
  }
  return { identity, accessPointUrl, tls: tlsFromNetwork(network), presence: network.presence !== false };
}

/** The TLS rules of the config's `network` section (a private CA, or the explicit opt-out). */
export function tlsFromNetwork(network: Pick<NetworkSettings, "caFile" | "insecureTls">): TlsOptions {
  return {
    ...(network.caFile !== undefined ? { caFile: network.caFile } : {}),
    ...(network.insecureTls ? { insecureTls: true } : {}),
  };
}
