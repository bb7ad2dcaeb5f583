// The HTTP side of the local network: the access point API (`/api/accesspoint/*`) and the
// message service sign-in (`/api/message/sign_in`). Refuses what the real service refuses: a CSR
// for another domain, a bad signature, a certificate this CA did not issue or that has expired.
import { createPublicKey, randomBytes, verify } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../../state/atomic-file.ts";
import type { Logger } from "../../types.ts";
import { generateIdentityKey, normalizePem, toCryptoKeys, x509, csrSubject } from "../../network/x509.ts";
import type { LocalCa } from "./local-ca.ts";
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
  now: () => number;
  logger: Logger;
  counters: { refusedSignIns: number; issuedCertificates: number; refusedCertificates: number };
  secure: boolean;
}

const MAX_BODY = 64 * 1024;

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

/** Registered aids and the SHA-256 of their public key: an aid belongs to the first key that got it. */
class Registry {
  readonly #file: string;
  readonly #map: Record<string, string>;
  constructor(stateDir: string) {
    this.#file = join(stateDir, "ca", "registered.json");
    this.#map = existsSync(this.#file) ? (JSON.parse(readFileSync(this.#file, "utf8")) as Record<string, string>) : {};
  }
  owner(aid: string): string | undefined {
    return this.#map[aid];
  }
  register(aid: string, keyId: string): void {
    this.#map[aid] = keyId;
    writeFileAtomicSync(this.#file, JSON.stringify(this.#map, null, 2));
  }
}

export function createApiHandler(ctx: ApiContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const registry = new Registry(ctx.stateDir);
  const escaped = ctx.domain.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const aidPattern = new RegExp(`^[a-z0-9][a-z0-9_-]{0,62}\\.${escaped}$`, "i");

  async function signCert(body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const aid = str(body.id);
    const pem = str(body.csr);
    const refuse = (status: number, error: string) => {
      ctx.counters.refusedCertificates++;
      ctx.logger.log("info", "access-point.sign-cert-refused", { aid, error });
      send(res, status, { error });
    };
    if (!aid || !pem) return refuse(400, "expected id and csr");
    if (!aidPattern.test(aid)) return refuse(400, `aid must be <name>.${ctx.domain}`);
    if (ctx.reservedAids().has(aid.toLowerCase())) return refuse(403, `${aid} is reserved`);
    let csr: x509.Pkcs10CertificateRequest;
    try {
      csr = new x509.Pkcs10CertificateRequest(normalizePem(pem));
    } catch {
      return refuse(400, "csr is not a PEM certificate request");
    }
    if (!(await csr.verify())) return refuse(400, "csr signature does not verify");
    const cn = csr.subjectName.getField("CN")[0];
    if (cn !== aid) return refuse(400, `csr names ${cn ?? "nobody"}, not ${aid}`);
    const keyId = Buffer.from(await csr.publicKey.getThumbprint("SHA-256")).toString("hex");
    const owner = registry.owner(aid.toLowerCase());
    if (owner !== undefined && owner !== keyId) return refuse(409, `${aid} is already registered to another key`);
    const certificate = await ctx.ca.issue({ aid, publicKey: csr.publicKey, subject: csr.subject, now: ctx.now() });
    if (owner === undefined) registry.register(aid.toLowerCase(), keyId);
    ctx.counters.issuedCertificates++;
    ctx.logger.log("info", "access-point.sign-cert-issued", { aid });
    send(res, 200, { certificate });
  }

  async function signGuestCert(res: ServerResponse): Promise<void> {
    const aid = `guest-${randomBytes(5).toString("hex")}.${ctx.domain}`;
    const key = generateIdentityKey().privateKey;
    const cert = await ctx.ca.issue({ aid, publicKey: toCryptoKeys(key).publicKey, subject: csrSubject(aid), now: ctx.now() });
    ctx.counters.issuedCertificates++;
    send(res, 200, { guest_aid: aid, key: key.export({ type: "pkcs8", format: "pem" }).toString(), cert });
  }

  function signIn(body: Record<string, unknown>, res: ServerResponse, tokens: TokenStore, where: string): void {
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
      send(res, 200, { nonce: ctx.nonces.issue(aid, requestId, now), request_id: requestId });
      return;
    }
    const certPem = str(body.cert);
    const signature = str(body.signature);
    if (!certPem || !signature) return refuse(400, "expected cert and signature");
    if (!ctx.nonces.take(aid, requestId, nonce, now)) return refuse(401, "unknown or used nonce");
    const check = ctx.ca.check(certPem, now);
    if (!check.ok) return refuse(401, `certificate refused: ${check.reason}`);
    if (check.aid !== aid) return refuse(401, `certificate is for ${check.aid}, not ${aid}`);
    const publicKeyPem = str(body.public_key);
    if (publicKeyPem !== undefined) {
      let same = false;
      try {
        same = createPublicKey(normalizePem(publicKeyPem)).export({ type: "spki", format: "der" }).equals(check.cert.publicKey.export({ type: "spki", format: "der" }));
      } catch {
        same = false;
      }
      if (!same) return refuse(401, "public_key does not match the certificate");
    }
    let good = false;
    try {
      good = /^[0-9a-f]+$/i.test(signature) && verify("sha256", Buffer.from(nonce, "utf8"), check.cert.publicKey, Buffer.from(signature, "hex"));
    } catch {
      good = false;
    }
    if (!good) return refuse(401, "signature does not verify against the certificate's key");
    const { token, expiresAt } = tokens.issue(aid, now);
    ctx.logger.log("debug", "access-point.sign-in-ok", { where, aid });
    send(res, 200, { signature: token, agent_id: aid, expires_at: expiresAt });
  }

  function config(req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse): void {
    if (!str(body.agent_id)) return send(res, 400, { error: "expected agent_id" });
    // Built from the Host the client used, so `acp3.<domain>:P` and `127.0.0.1:P` both work.
    const base = `${ctx.secure ? "https" : "http"}://${req.headers.host ?? "127.0.0.1"}`;
    send(res, 200, { config: JSON.stringify({ message_server: `${base}/api/message`, heartbeat_server: `${base}/api/heartbeat` }) });
  }

  return async (req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname.replace(/\/+$/, "");
    try {
      if (path === "/api/accesspoint/sign_guest_cert") return await signGuestCert(res);
      if (req.method !== "POST") return send(res, 404, { error: "not found" });
      const body = await readJson(req);
      if (body === undefined) return send(res, 400, { error: "expected a JSON object of at most 64 KiB" });
      switch (path) {
        case "/api/accesspoint/sign_cert":
          return await signCert(body, res);
        case "/api/accesspoint/sign_in":
          return signIn(body, res, ctx.accessPointTokens, "accesspoint");
        case "/api/accesspoint/get_accesspoint_config":
          return config(req, body, res);
        case "/api/message/sign_in":
          return signIn(body, res, ctx.messageTokens, "message");
        default:
          return send(res, 404, { error: "not found" });
      }
    } catch (err) {
      ctx.logger.log("error", "access-point.request-failed", { path, error: (err as Error).message });
      if (!res.headersSent) send(res, 500, { error: "internal error" });
    }
  };
}
