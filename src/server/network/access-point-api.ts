// The HTTP side of the local network: the access point API (`/api/accesspoint/*`) and the
// message service sign-in (`/api/message/sign_in`). Refuses what the real service refuses: a CSR
// for another domain, a bad signature, a certificate this CA did not issue or that has expired.
import { createPublicKey, randomBytes, verify, type KeyObject } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../types.ts";
import { generateIdentityKey, normalizePem, toCryptoKeys, x509 } from "../../network/x509.ts";
import { keyIdOf, type AidRegistry } from "./aid-registry.ts";
import { SlidingWindowPerKey } from "./source-window.ts";
import type { ClientDeclarations } from "./client-declarations.ts";
import type { LocalCa } from "./local-ca.ts";
import { DEFAULT_SOCKET_LIMITS } from "./socket-limits.ts";
import type { NonceStore, TokenStore } from "./tokens.ts";

export interface ApiContext {
  domain: string;
  ca: LocalCa;
  stateDir: string;
  accessPointTokens: TokenStore;
  messageTokens: TokenStore;
  nonces: NonceStore;
  /** Aids that may not be issued to anyone (the hosted service agents). */
  reservedAids: () => Set<string>;
  /** First sign-in steps per source address per 10 s, for aids no key is registered for (they can never finish). */
  signInsPerSourcePer10s: number;
  /** New aids `sign_cert` registers per source address per NEW_AIDS_WINDOW_MS. */
  newAidsPerSource: number;
  /** Who owns which aid; sign-in checks certificates' keys against it. */
  registry: AidRegistry;
  now: () => number;
  logger: Logger;
  counters: { refusedSignIns: number; issuedCertificates: number; refusedCertificates: number };
  secure: boolean;
  /** Records each sign-in's `client_info` (who signed in with which program). */
  clients?: ClientDeclarations;
  /** The presence server: `heartbeat_server` in the config and its sign-in; absent → the network has no presence. */
  presence?: { host: string; port: number; issueCookie(aid: string): bigint };
  /** Tokens of the heartbeat server's sign-in. */
  heartbeatTokens?: TokenStore;
}

const MAX_BODY = 64 * 1024;
/** Guest certificates one source address gets per minute: guests cost nothing to make, so they are rationed. */
export const GUEST_CERTS_PER_SOURCE_PER_MINUTE = 20;
/** The window of `newAidsPerSource`: identities cost nothing to make either, so minting them is rationed per address. */
export const NEW_AIDS_WINDOW_MS = 10 * 60_000;
export const NEW_AIDS_PER_SOURCE = DEFAULT_SOCKET_LIMITS.newAidsPerSource;
/**
 * Completed sign-ins per aid per minute (each place: access point, message service). Only the key
 * holder can spend it — it is taken after the signature verified — so no flood denies a member;
 * it bounds the tokens one key can mint.
 */
export const SIGN_INS_PER_AID_PER_MINUTE = 120;

/** The peer's address, as the limits per source count it. */
export const sourceOf = (req: IncomingMessage): string => req.socket.remoteAddress ?? "unknown";

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * An ECDSA-SHA256 signature checked in libuv's thread pool: a P-384 verification costs about a
 * millisecond, and a thousand agents signing in three times each after a restart would otherwise
 * hold the event loop for seconds. A malformed signature is a false, never a throw.
 */
const verifyOffLoop = (data: Buffer, key: KeyObject, signature: Buffer): Promise<boolean> =>
  new Promise((resolve) => {
    try {
      verify("sha256", data, key, signature, (err, ok) => resolve(err === null && ok));
    } catch {
      resolve(false);
    }
  });

/**
 * Is `pem` the key whose SPKI DER is `spkiDer`? An SPKI PEM (what every client sends) is its DER
 * in base64, compared as it is; anything else is parsed as a key first.
 */
function samePublicKey(pem: string, spkiDer: Buffer): boolean {
  const body = /^\s*-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----\s*$/.exec(pem)?.[1];
  if (body !== undefined && Buffer.from(body.replace(/\s+/g, ""), "base64").equals(spkiDer)) return true;
  try {
    return createPublicKey(normalizePem(pem)).export({ type: "spki", format: "der" }).equals(spkiDer);
  } catch {
    return false;
  }
}

/** Values a CSR subject may hold: what the SDKs put there, and nothing that changes meaning when printed. */
const SUBJECT_VALUE = /^[A-Za-z0-9 .'()\/:@_-]{0,64}$/;

/**
 * Why this CSR subject is refused, or undefined: exactly one CN, one attribute per RDN, plain
 * values only. The certificate never copies the subject; this only turns away requests that try
 * to smuggle a second name in.
 */
export function csrSubjectRefusal(name: x509.JsonName): string | undefined {
  let cns = 0;
  for (const rdn of name) {
    const types = Object.keys(rdn);
    if (types.length !== 1 || (rdn[types[0]!] ?? []).length !== 1) return "csr subject has a multi-valued name";
    for (const [type, values] of Object.entries(rdn)) {
      if (type === "CN" || type === "2.5.4.3") cns++;
      if (!values.every((v) => SUBJECT_VALUE.test(v))) return "csr subject has characters outside letters, digits and . ' ( ) / : @ _ -";
    }
  }
  return cns === 1 ? undefined : `csr subject must name exactly one CN, got ${cns}`;
}

export type CertifyResult = { status: 200; certificate: string } | { status: 400 | 403 | 409 | 429; error: string };

export interface ApiHandler {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  /**
   * `sign_cert` in-process, for the members this process was configured with: the only way a
   * reserved aid is certified (and re-certified to the configured key).
   */
  certifyConfigured(aid: string, csrPem: string): Promise<CertifyResult>;
}

export function createApiHandler(ctx: ApiContext): ApiHandler {
  const registry = ctx.registry;
  const guestCerts = new SlidingWindowPerKey({ limit: GUEST_CERTS_PER_SOURCE_PER_MINUTE, windowMs: 60_000 });
  const nonceRequests = new SlidingWindowPerKey({ limit: ctx.signInsPerSourcePer10s, windowMs: 10_000 });
  const escaped = ctx.domain.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const aidPattern = new RegExp(`^[a-z0-9][a-z0-9_-]{0,62}\\.${escaped}$`, "i");

  const newAids = new SlidingWindowPerKey({ limit: ctx.newAidsPerSource, windowMs: NEW_AIDS_WINDOW_MS });
  const proven = new SlidingWindowPerKey({ limit: SIGN_INS_PER_AID_PER_MINUTE, windowMs: 60_000 });

  /** `source` is the requesting address for `sign_cert` from outside; undefined for members this process certifies. */
  async function certify(aid: string, pem: string, configured: boolean, source?: string): Promise<CertifyResult> {
    if (!aidPattern.test(aid)) return { status: 400, error: `aid must be <name>.${ctx.domain}` };
    if (ctx.reservedAids().has(aid.toLowerCase()) || /^guest-/i.test(aid)) return { status: 403, error: `${aid} is reserved` };
    let csr: x509.Pkcs10CertificateRequest;
    try {
      csr = new x509.Pkcs10CertificateRequest(normalizePem(pem));
    } catch {
      return { status: 400, error: "csr is not a PEM certificate request" };
    }
    if (!(await csr.verify())) return { status: 400, error: "csr signature does not verify" };
    const subject = csr.subjectName.toJSON();
    const subjectRefusal = csrSubjectRefusal(subject);
    if (subjectRefusal !== undefined) return { status: 400, error: subjectRefusal };
    const cn = csr.subjectName.getField("CN")[0];
    if (cn !== aid) return { status: 400, error: `csr names ${cn ?? "nobody"}, not ${aid}` };
    const keyId = keyIdOf(new Uint8Array(csr.publicKey.rawData));
    const owner = registry.owner(aid);
    // Only a reserved aid certified by the process configured with it may change hands; everything else: first key wins.
    if (!(configured && registry.isReserved(aid))) {
      if (registry.isReserved(aid) && owner !== keyId) return { status: 403, error: `${aid} is reserved for a configured member` };
      if (owner !== undefined && owner !== keyId) return { status: 409, error: `${aid} is already registered to another key` };
    }
    // A new aid from outside is minted within its address's allowance; a renewal (same key) is not minting.
    if (owner === undefined && source !== undefined && !newAids.take(source, ctx.now())) {
      return { status: 429, error: `too many new identities from this address (${ctx.newAidsPerSource} per ${NEW_AIDS_WINDOW_MS / 60_000} minutes)` };
    }
    // The CN is the validated aid; the CSR's other (checked) attributes are kept as parsed values, never re-read from a string.
    const certificate = await ctx.ca.issue({ aid, publicKey: csr.publicKey, attributes: subject, now: ctx.now() });
    if (owner !== keyId) await registry.register(aid, keyId);
    return { status: 200, certificate };
  }

  async function signCert(req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const aid = str(body.id);
    const pem = str(body.csr);
    const source = sourceOf(req);
    const result: CertifyResult = !aid || !pem ? { status: 400, error: "expected id and csr" } : await certify(aid, pem, false, source);
    if (result.status !== 200) {
      ctx.counters.refusedCertificates++;
      ctx.logger.log("info", "access-point.sign-cert-refused", { aid, source, error: result.error });
      if (result.status === 429) res.setHeader("retry-after", String(NEW_AIDS_WINDOW_MS / 1000));
      return send(res, result.status, { error: result.error });
    }
    ctx.counters.issuedCertificates++;
    ctx.logger.log("info", "access-point.sign-cert-issued", { aid });
    send(res, 200, { certificate: result.certificate });
  }

  async function signGuestCert(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const source = sourceOf(req);
    if (!guestCerts.take(source, ctx.now())) {
      ctx.counters.refusedCertificates++;
      ctx.logger.log("info", "access-point.guest-refused", { source, reason: "rate", limit: GUEST_CERTS_PER_SOURCE_PER_MINUTE });
      res.setHeader("retry-after", "60");
      return send(res, 429, { error: "too many guest certificates from this address" });
    }
    const aid = `guest-${randomBytes(5).toString("hex")}.${ctx.domain}`;
    const key = generateIdentityKey().privateKey;
    const cert = await ctx.ca.issue({ aid, publicKey: toCryptoKeys(key).publicKey, now: ctx.now() });
    registry.registerGuest(aid, keyIdOf(createPublicKey(key).export({ type: "spki", format: "der" })));
    ctx.counters.issuedCertificates++;
    send(res, 200, { guest_aid: aid, key: key.export({ type: "pkcs8", format: "pem" }).toString(), cert });
  }

  async function signIn(req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse, tokens: TokenStore, where: string): Promise<void> {
    const aid = str(body.agent_id);
    const requestId = str(body.request_id);
    const now = ctx.now();
    const refuse = (status: number, error: string) => {
      ctx.counters.refusedSignIns++;
      ctx.logger.log("info", "access-point.sign-in-refused", { where, aid, error });
      send(res, status, { error });
    };
    if (!aid || !requestId) return refuse(400, "expected agent_id and request_id");
    const nonce = str(body.nonce);
    if (nonce === undefined) {
      const source = sourceOf(req);
      // A nonce stores nothing (see NonceStore), so handing one out is as cheap as the request.
      // Rationed per address only for an aid no key is registered for, which can never finish:
      // on one machine every client shares 127.0.0.1, and a flood from it must not stop a member
      // who can prove its key from getting the nonce to prove it with.
      if (registry.owner(aid) === undefined && !nonceRequests.take(source, now)) {
        ctx.counters.refusedSignIns++;
        ctx.logger.log("info", "access-point.sign-in-refused", { where, aid, source, error: "rate" });
        res.setHeader("retry-after", "10");
        return send(res, 429, { error: "too many sign-ins from this address" });
      }
      if (where === "message") ctx.clients?.noteNonce(aid, requestId, typeof body.client_info === "string" ? body.client_info : undefined);
      send(res, 200, { nonce: ctx.nonces.issue(aid, requestId, now), request_id: requestId });
      return;
    }
    const certPem = str(body.cert);
    const signature = str(body.signature);
    if (!certPem || !signature) return refuse(400, "expected cert and signature");
    if (!ctx.nonces.valid(aid, requestId, nonce, now)) return refuse(401, "unknown, expired or used nonce");
    const check = ctx.ca.check(certPem, now);
    if (!check.ok) return refuse(401, `certificate refused: ${check.reason}`);
    if (check.aid !== aid) return refuse(401, `certificate is for ${check.aid}, not ${aid}`);
    const keyRefusal = registry.keyRefusal(aid, keyIdOf(check.spkiDer));
    if (keyRefusal !== undefined) return refuse(401, keyRefusal);
    const publicKeyPem = str(body.public_key);
    if (publicKeyPem !== undefined && !samePublicKey(publicKeyPem, check.spkiDer)) return refuse(401, "public_key does not match the certificate");
    const good = /^[0-9a-f]+$/i.test(signature) && (await verifyOffLoop(Buffer.from(nonce, "utf8"), check.publicKey, Buffer.from(signature, "hex")));
    if (!good) return refuse(401, "signature does not verify against the certificate's key");
    // Proven: the key holder's own allowance, then the nonce is spent (a replay is refused).
    if (!proven.take(`${where}\n${aid.toLowerCase()}`, now)) {
      ctx.counters.refusedSignIns++;
      ctx.logger.log("info", "access-point.sign-in-refused", { where, aid, error: "rate-per-aid" });
      res.setHeader("retry-after", "60");
      return send(res, 429, { error: `too many sign-ins for ${aid} (${SIGN_INS_PER_AID_PER_MINUTE} a minute)` });
    }
    if (!ctx.nonces.spend(nonce, now)) return refuse(401, "unknown, expired or used nonce");
    const { token, expiresAt } = tokens.issue(aid, now);
    if (where === "message") ctx.clients?.signedIn(aid, requestId, "message");
    ctx.logger.log("debug", "access-point.sign-in-ok", { where, aid });
    // The heartbeat server's sign-in also says where to beat and with which cookie (numbers: the
    // Python SDK packs the cookie as it comes).
    const presence = where === "heartbeat" && ctx.presence ? { server_ip: ctx.presence.host, port: ctx.presence.port, sign_cookie: Number(ctx.presence.issueCookie(aid)) } : {};
    send(res, 200, { signature: token, agent_id: aid, expires_at: expiresAt, ...presence });
  }

  function config(req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse): void {
    if (!str(body.agent_id)) return send(res, 400, { error: "expected agent_id" });
    // Built from the Host the client used, so `acp3.<domain>:P` and `127.0.0.1:P` both work.
    const base = `${ctx.secure ? "https" : "http"}://${req.headers.host ?? "127.0.0.1"}`;
    send(res, 200, { config: JSON.stringify({ message_server: `${base}/api/message`, ...(ctx.presence ? { heartbeat_server: `${base}/api/heartbeat` } : {}) }) });
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://x").pathname.replace(/\/+$/, "");
    try {
      if (path === "/api/accesspoint/sign_guest_cert") return await signGuestCert(req, res);
      if (req.method !== "POST") return send(res, 404, { error: "not found" });
      const body = await readJson(req);
      if (body === undefined) return send(res, 400, { error: "expected a JSON object of at most 64 KiB" });
      switch (path) {
        case "/api/accesspoint/sign_cert":
          return await signCert(req, body, res);
        case "/api/accesspoint/sign_in":
          return await signIn(req, body, res, ctx.accessPointTokens, "accesspoint");
        case "/api/accesspoint/get_accesspoint_config":
          return config(req, body, res);
        case "/api/heartbeat/sign_in":
          if (!ctx.presence || !ctx.heartbeatTokens) return send(res, 404, { error: "not found" });
          return await signIn(req, body, res, ctx.heartbeatTokens, "heartbeat");
        case "/api/message/sign_in":
          return await signIn(req, body, res, ctx.messageTokens, "message");
        default:
          return send(res, 404, { error: "not found" });
      }
    } catch (err) {
      ctx.logger.log("error", "access-point.request-failed", { path, error: (err as Error).message });
      if (!res.headersSent) send(res, 500, { error: "internal error" });
    }
  };
  return Object.assign(handle, { certifyConfigured: (aid: string, csrPem: string) => certify(aid, csrPem, true) });
}
