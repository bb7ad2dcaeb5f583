// The two-step nonce sign-in (used for the access point and for the message service) and the
// access point's config. A 401/403 that says the key, certificate or identity is not accepted is a
// typed IDENTITY_REJECTED that callers must not retry. Anything else (a bare 403 from a proxy, a
// lost nonce) is SIGN_IN_FAILED: retried later.
import { randomUUID, sign } from "node:crypto";
import { NetworkError } from "./errors.ts";
import type { HttpClient, HttpReply } from "./http-client.ts";
import type { Identity } from "./identity-store.ts";
import { accessPointApi, messageApi } from "./access-point.ts";

export { AGENT_CLIENT_INFO as CLIENT_INFO } from "../wire/client-info.ts";
import { AGENT_CLIENT_INFO } from "../wire/client-info.ts";

/** Hex of the DER ECDSA-SHA256 signature over the nonce string. */
export const signNonce = (identity: Identity, nonce: string): string => sign("sha256", Buffer.from(nonce, "utf8"), identity.privateKey).toString("hex");

/** Makes the hex signature of a sign-in nonce (default {@link signNonceOffLoop}; tests script one on their own clock). */
export type NonceSigner = (identity: Identity, nonce: string) => Promise<string>;

/**
 * The same signature made on libuv's thread pool (crypto.sign with a callback): a P-384 signature
 * is 1–4 ms of CPU, and a thousand identities signing in at once, one nonce or three each, would
 * otherwise spend seconds of them on the event loop every other identity needs.
 */
export const signNonceOffLoop: NonceSigner = (identity, nonce) =>
  new Promise((resolve, reject) => sign("sha256", Buffer.from(nonce, "utf8"), identity.privateKey, (err, signature) => (err ? reject(err) : resolve(signature.toString("hex")))));

const REFUSES_IDENTITY = /certificate|cert\b|public.?key|signature|identity|reserved|not registered|unknown agent|revoked|banned|forbidden agent/i;
/** Error codes (the C++ SDK's numbers and names) that refuse the identity itself, whatever the status. */
const IDENTITY_CODES = new Set(["1001", "1003", "4000", "4002", "INVALID_SIGNATURE", "CERT_ERROR", "AID_NOT_FOUND", "AID_INVALID"]);

/** Longest field we accept from a sign-in answer: a nonce is tens of characters, a token a few hundred. */
export const MAX_SIGN_IN_FIELD_CHARS = 4096;

/**
 * What a refusal says: `{error: "…"}`, `{error: {code, message}}` (the C++ SDK's shape),
 * `{code, message}` or `{message}`, cut to one short line. The code is kept apart to decide on.
 */
export function readRefusal(reply: HttpReply): { why: string; code: string | undefined } {
  const body = (reply.json !== null && typeof reply.json === "object" ? reply.json : {}) as Record<string, unknown>;
  const inner = body.error !== null && typeof body.error === "object" ? (body.error as Record<string, unknown>) : body;
  const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v : undefined);
  const codeOf = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : undefined);
  const code = codeOf(inner.code) ?? codeOf(body.code);
  const message = text(body.error) ?? text(inner.message) ?? text(inner.msg) ?? text(body.message) ?? text(body.msg);
  const why = message !== undefined ? (code !== undefined ? `${message} (${code})` : message) : code !== undefined ? `HTTP ${reply.status} (${code})` : `HTTP ${reply.status}`;
  // One line, never a page of whatever the server sent.
  return { why: why.replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]+/g, " ").slice(0, 300), code: code?.toUpperCase() };
}

function refusal(identity: Identity, url: string, reply: HttpReply, step: string): NetworkError {
  const { why, code } = readRefusal(reply);
  // Only a refusal of the key, certificate or identity stops the identity; a bare 401/403 (a
  // proxy in the way, a nonce lost between two servers) may pass and is retried with backoff.
  const refusesIdentity = (code !== undefined && IDENTITY_CODES.has(code) && reply.status >= 400 && reply.status < 500) || ((reply.status === 401 || reply.status === 403) && REFUSES_IDENTITY.test(why));
  if (refusesIdentity) {
    return new NetworkError("IDENTITY_REJECTED", `${url} refused ${identity.aid} (${step}): ${why}`, { aid: identity.aid, url, status: reply.status });
  }
  return new NetworkError("SIGN_IN_FAILED", `${url} failed for ${identity.aid} (${step}): ${why}`, { aid: identity.aid, url, status: reply.status });
}

/** A string field of an answer, checked before we sign it, send it back or dial it. */
function field(reply: HttpReply, name: string, identity: Identity, url: string): string {
  const value = (reply.json as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== "string" || value === "") throw new NetworkError("BAD_REPLY", `${url} sent no ${name} for ${identity.aid}`, { aid: identity.aid, url });
  if (value.length > MAX_SIGN_IN_FIELD_CHARS) {
    throw new NetworkError("BAD_REPLY", `${url} sent a ${name} of ${value.length} characters for ${identity.aid} (at most ${MAX_SIGN_IN_FIELD_CHARS}): refused unsigned`, { aid: identity.aid, url });
  }
  return value;
}

/** Signs in at `<base>/sign_in`; returns the token (`signature` in the reply). */
/** What every sign-in takes: where, as whom, over which client, and who signs the nonce. */
export interface SignInParams {
  url: string;
  identity: Identity;
  http: HttpClient;
  clientInfo?: string | undefined;
  /** Default {@link signNonceOffLoop}. */
  signer?: NonceSigner | undefined;
}

export async function signIn(params: SignInParams): Promise<string> {
  const second = await signInReply(params);
  return field(second, "signature", params.identity, params.url);
}

/** The two-step sign-in at `url`; the second step's whole reply (a heartbeat server's carries where to beat). */
export async function signInReply(params: SignInParams): Promise<HttpReply> {
  const { url, identity, http } = params;
  const requestId = randomUUID();
  const first = await http.postJson(url, { agent_id: identity.aid, request_id: requestId, client_info: params.clientInfo ?? AGENT_CLIENT_INFO });
  if (first.status !== 200) throw refusal(identity, url, first, "nonce");
  const nonce = field(first, "nonce", identity, url);
  const signature = await (params.signer ?? signNonceOffLoop)(identity, nonce);
  const second = await http.postJson(url, {
    agent_id: identity.aid,
    request_id: requestId,
    nonce,
    public_key: identity.publicKeyPem,
    cert: identity.certPem,
    signature,
  });
  if (second.status !== 200) throw refusal(identity, url, second, "signature");
  return second;
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
  if (typeof c?.message_server !== "string" || c.message_server.length > MAX_SIGN_IN_FIELD_CHARS || !/^(https?|wss?):\/\//.test(c.message_server)) {
    throw new NetworkError("BAD_REPLY", `${url} gave no message_server for ${params.identity.aid}`, { aid: params.identity.aid, url });
  }
  return { messageServer: c.message_server, heartbeatServer: typeof c.heartbeat_server === "string" && c.heartbeat_server.length <= MAX_SIGN_IN_FIELD_CHARS ? c.heartbeat_server : undefined };
}

/** Where the access point's config sends an identity: its message server and heartbeat server. */
export interface NetworkRoute {
  messageServer: string;
  /** Where presence is kept (UDP heartbeats), when the access point names one. */
  heartbeatServer: string | undefined;
}

export interface NetworkSignIn {
  /** Undefined when the sign-in went to the message service alone (signInAgain with a route). */
  accessPointToken: string | undefined;
  messageServer: string;
  messageToken: string;
  /** Where presence is kept (UDP heartbeats), when the access point names one. */
  heartbeatServer: string | undefined;
}

/** The full sequence the SDK runs: access point sign-in, config, message-service sign-in. `clientInfo`: what signs in (default the channel's agents). */
export async function signInToNetwork(params: Omit<SignInParams, "url"> & { accessPointUrl: string }): Promise<NetworkSignIn> {
  const { clientInfo, signer } = params;
  const accessPointToken = await signIn({ url: accessPointApi(params.accessPointUrl, "sign_in"), identity: params.identity, http: params.http, clientInfo, signer });
  const { messageServer, heartbeatServer } = await getAccessPointConfig({ ...params, token: accessPointToken });
  const messageToken = await signIn({ url: messageApi(params.accessPointUrl, "sign_in"), identity: params.identity, http: params.http, clientInfo, signer });
  return { accessPointToken, messageServer, messageToken, heartbeatServer };
}

/**
 * Signing in again after a drop. With the route of the last sign-in whose socket opened, the
 * message service alone is signed in to (the access point's token serves only to read the config,
 * which names the same servers): one signed nonce instead of two and three requests fewer per
 * identity, which is most of a reconnect storm's CPU on both ends. Without one, the full sequence.
 */
export async function signInAgain(params: Omit<SignInParams, "url"> & { accessPointUrl: string; route: NetworkRoute | undefined }): Promise<NetworkSignIn> {
  const { route, ...rest } = params;
  if (route === undefined) return signInToNetwork(rest);
  const messageToken = await signIn({ url: messageApi(params.accessPointUrl, "sign_in"), identity: params.identity, http: params.http, clientInfo: params.clientInfo, signer: params.signer });
  return { accessPointToken: undefined, messageServer: route.messageServer, messageToken, heartbeatServer: route.heartbeatServer };
}
