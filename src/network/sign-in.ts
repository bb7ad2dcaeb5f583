// The two-step nonce sign-in (used for the access point and for the message service) and the
// access point's config. A 401/403 that says the key, certificate or identity is not accepted is a
// typed IDENTITY_REJECTED that callers must not retry. Anything else (a bare 403 from a proxy, a
// lost nonce) is SIGN_IN_FAILED: retried later.
import { randomUUID, sign } from "node:crypto";
import { NetworkError } from "./errors.ts";
import type { HttpClient, HttpReply } from "./http-client.ts";
import type { Identity } from "./identity-store.ts";
import { accessPointApi, messageApi } from "./access-point.ts";

export const CLIENT_INFO = "acp-group-channel";

/** Hex of the DER ECDSA-SHA256 signature over the nonce string. */
export const signNonce = (identity: Identity, nonce: string): string => sign("sha256", Buffer.from(nonce, "utf8"), identity.privateKey).toString("hex");

const REFUSES_IDENTITY = /certificate|cert\b|public.?key|signature|identity|reserved|not registered|unknown agent|revoked|banned|forbidden agent/i;

function refusal(identity: Identity, url: string, reply: HttpReply, step: string): NetworkError {
  const body = reply.json as { error?: unknown; message?: unknown } | undefined;
  const why = typeof body?.error === "string" ? body.error : typeof body?.message === "string" ? body.message : `HTTP ${reply.status}`;
  // Only a refusal of the key, certificate or identity stops the identity; a bare 401/403 (a
  // proxy in the way, a nonce lost between two servers) may pass and is retried with backoff.
  if ((reply.status === 401 || reply.status === 403) && REFUSES_IDENTITY.test(why)) {
    return new NetworkError("IDENTITY_REJECTED", `${url} refused ${identity.aid} (${step}): ${why}`, { aid: identity.aid, url, status: reply.status });
  }
  return new NetworkError("SIGN_IN_FAILED", `${url} failed for ${identity.aid} (${step}): ${why}`, { aid: identity.aid, url, status: reply.status });
}

/** Signs in at `<base>/sign_in`; returns the token (`signature` in the reply). */
export async function signIn(params: { url: string; identity: Identity; http: HttpClient }): Promise<string> {
  const { url, identity, http } = params;
  const requestId = randomUUID();
  const first = await http.postJson(url, { agent_id: identity.aid, request_id: requestId, client_info: CLIENT_INFO });
  const nonce = (first.json as { nonce?: unknown } | undefined)?.nonce;
  if (first.status !== 200) throw refusal(identity, url, first, "nonce");
  if (typeof nonce !== "string" || nonce === "") throw new NetworkError("BAD_REPLY", `${url} sent no nonce for ${identity.aid}`, { aid: identity.aid, url });
  const second = await http.postJson(url, {
    agent_id: identity.aid,
    request_id: requestId,
    nonce,
    public_key: identity.publicKeyPem,
    cert: identity.certPem,
    signature: signNonce(identity, nonce),
  });
  if (second.status !== 200) throw refusal(identity, url, second, "signature");
  const token = (second.json as { signature?: unknown } | undefined)?.signature;
  if (typeof token !== "string" || token === "") throw new NetworkError("BAD_REPLY", `${url} sent no token for ${identity.aid}`, { aid: identity.aid, url });
  return token;
}

export interface AccessPointConfig {
  messageServer: string;
  heartbeatServer: string | undefined;
}

/** `get_accesspoint_config`: `config` may be a JSON string (as the TypeScript SDK reads it) or an object. */
export async function getAccessPointConfig(params: { accessPointUrl: string; identity: Identity; http: HttpClient; token?: string }): Promise<AccessPointConfig> {
  const url = accessPointApi(params.accessPointUrl, "get_accesspoint_config");
  const reply = await params.http.postJson(url, { agent_id: params.identity.aid, ...(params.token ? { signature: params.token } : {}) });
  if (reply.status !== 200) throw refusal(params.identity, url, reply, "config");
  let config = (reply.json as { config?: unknown } | undefined)?.config;
  if (typeof config === "string") {
    try {
      config = JSON.parse(config);
    } catch {
      config = undefined;
    }
  }
  const c = config as { message_server?: unknown; heartbeat_server?: unknown } | undefined;
  if (typeof c?.message_server !== "string" || !/^(https?|wss?):\/\//.test(c.message_server)) {
    throw new NetworkError("BAD_REPLY", `${url} gave no message_server for ${params.identity.aid}`, { aid: params.identity.aid, url });
  }
  return { messageServer: c.message_server, heartbeatServer: typeof c.heartbeat_server === "string" ? c.heartbeat_server : undefined };
}

export interface NetworkSignIn {
  accessPointToken: string;
  messageServer: string;
  messageToken: string;
}

/** The full sequence the SDK runs: access point sign-in, config, message-service sign-in. */
export async function signInToNetwork(params: { accessPointUrl: string; identity: Identity; http: HttpClient }): Promise<NetworkSignIn> {
  const accessPointToken = await signIn({ url: accessPointApi(params.accessPointUrl, "sign_in"), identity: params.identity, http: params.http });
  const { messageServer } = await getAccessPointConfig({ ...params, token: accessPointToken });
  const messageToken = await signIn({ url: messageApi(params.accessPointUrl, "sign_in"), identity: params.identity, http: params.http });
  return { accessPointToken, messageServer, messageToken };
}
