// Identities on disk, one folder per aid in the official TypeScript SDK's layout:
// `<dir>/private/<aid>.key` (PKCS#8, PBES2/AES-256-CBC, passphrase = sha256-hex of the seed
// password), `<dir>/private/<aid>.csr`, `<dir>/public/<aid>.crt`. Never writes an unencrypted
// key unless asked to.
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { writeFileAtomicSync } from "../state/atomic-file.ts";
import { NetworkError } from "./errors.ts";
import { buildCsr, commonName, generateIdentityKey, normalizePem, sdkPassphrase, summarizeCertificate, type CertificateSummary } from "./x509.ts";
import { createHttpClient, type HttpClient, type TlsOptions } from "./http-client.ts";
import { readRefusal } from "./sign-in.ts";
import { accessPointApi } from "./access-point.ts";

export interface Identity {
  readonly aid: string;
  readonly privateKey: KeyObject;
  /** SPKI PEM of the key, as sent in sign-in. */
  readonly publicKeyPem: string;
  readonly certPem: string;
  /** The folder it was read from, when it came from one. */
  readonly dir: string | undefined;
}

export interface IdentityPaths {
  dir: string;
  key: string;
  csr: string;
  cert: string;
}

export const identitiesRoot = (stateDir: string): string => join(stateDir, "identities");

export function identityPaths(params: { aid: string; stateDir?: string; identityDir?: string }): IdentityPaths {
  const dir = params.identityDir ?? (params.stateDir !== undefined ? join(identitiesRoot(params.stateDir), params.aid) : undefined);
  if (dir === undefined) throw new NetworkError("INVALID_OPTIONS", "Expected `stateDir` or `identityDir`", { aid: params.aid });
  return {
    dir,
    key: join(dir, "private", `${params.aid}.key`),
    csr: join(dir, "private", `${params.aid}.csr`),
    cert: join(dir, "public", `${params.aid}.crt`),
  };
}

/**
 * The passphrases a key is tried with: the SDK's sha256-hex of the seed password, the seed
 * password itself (the Python SDK's form), then the official SDK's default — its seed password
 * is "" unless one is given, so an identity made with the defaults is under sha256-hex("").
 */
function passphrasesFor(seedPassword: string | undefined): string[] {
  return [...(seedPassword ? [sdkPassphrase(seedPassword), seedPassword] : []), sdkPassphrase("")];
}

/** Decrypts a PEM key with the seed password (see passphrasesFor); which one opened it is returned too. */
export function openPrivateKey(params: { aid: string; pem: string; seedPassword?: string | undefined; file?: string }): { key: KeyObject; sdkDefaultSeed: boolean } {
  const pem = normalizePem(params.pem);
  if (!pem.includes("ENCRYPTED")) return { key: createPrivateKey(pem), sdkDefaultSeed: false };
  const tries = passphrasesFor(params.seedPassword);
  for (const passphrase of tries) {
    try {
      return { key: createPrivateKey({ key: pem, format: "pem", passphrase }), sdkDefaultSeed: passphrase === tries.at(-1) };
    } catch {
      // try the next form
    }
  }
  if (!params.seedPassword) {
    throw new NetworkError("IDENTITY_LOCKED", `The key of ${params.aid} is encrypted: set ACP_SEED_PASSWORD (or network.seedPassword)`, { aid: params.aid });
  }
  throw new NetworkError("IDENTITY_LOCKED", `The seed password does not open the key of ${params.aid}${params.file ? ` (${params.file})` : ""}`, { aid: params.aid });
}

/** Decrypts a PEM key: see openPrivateKey. */
export function readPrivateKey(params: { aid: string; pem: string; seedPassword?: string | undefined; file?: string }): KeyObject {
  return openPrivateKey(params).key;
}

/** Checks that the certificate names `aid` and belongs to `privateKey`; returns the SPKI PEM. */
function matchKeyAndCert(aid: string, privateKey: KeyObject, certPem: string): string {
  const cert = new X509Certificate(certPem);
  // Compared as keys (one export, for the sign-in, instead of two: a thousand identities load at start-up).
  if (!cert.publicKey.equals(createPublicKey(privateKey))) {
    throw new NetworkError("IDENTITY_REJECTED", `The certificate of ${aid} does not belong to its key`, { aid });
  }
  const publicKeyPem = cert.publicKey.export({ type: "spki", format: "pem" }).toString();
  const cn = commonName(cert.subject);
  if (cn !== aid) throw new NetworkError("IDENTITY_REJECTED", `The certificate names ${cn ?? "nobody"}, not ${aid}`, { aid });
  return publicKeyPem;
}

export function loadIdentity(params: {
  aid: string;
  stateDir?: string;
  identityDir?: string;
  keyFile?: string;
  certFile?: string;
  seedPassword?: string | undefined;
}): Identity {
  const paths = identityPaths({ aid: params.aid, ...(params.stateDir !== undefined ? { stateDir: params.stateDir } : {}), ...(params.identityDir !== undefined ? { identityDir: params.identityDir } : {}) });
  const keyFile = params.keyFile ?? paths.key;
  const certFile = params.certFile ?? paths.cert;
  for (const f of [keyFile, certFile]) {
    if (!existsSync(f)) {
      throw new NetworkError("IDENTITY_NOT_FOUND", `No identity ${params.aid}: ${f} is missing (create one with \`acp-group id create ${params.aid}\`)`, { aid: params.aid });
    }
  }
  const privateKey = readPrivateKey({ aid: params.aid, pem: readFileSync(keyFile, "utf8"), seedPassword: params.seedPassword, file: keyFile });
  const certPem = normalizePem(readFileSync(certFile, "utf8"));
  const publicKeyPem = matchKeyAndCert(params.aid, privateKey, certPem);
  return { aid: params.aid, privateKey, publicKeyPem, certPem, dir: params.keyFile ? undefined : paths.dir };
}

/** How a key is written: under a seed password, as the official SDK writes it by default (under the empty seed password), or — only when asked — in the clear. */
export interface KeyProtection {
  seedPassword?: string | undefined;
  /** Under sha256-hex(""), the official SDK's default: opens without a password, as the SDK's own key did. */
  sdkDefaultSeed?: boolean | undefined;
  noPassphrase?: boolean | undefined;
}

function encodeKey(privateKey: KeyObject, protection: KeyProtection, aid: string): string {
  if (protection.seedPassword) {
    return privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: sdkPassphrase(protection.seedPassword) }).toString();
  }
  if (protection.sdkDefaultSeed) return privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: sdkPassphrase("") }).toString();
  if (protection.noPassphrase) return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  throw new NetworkError("PASSPHRASE_REQUIRED", `Refusing to write the key of ${aid} unencrypted: set ACP_SEED_PASSWORD or pass --no-passphrase`, { aid });
}

function writeIdentity(paths: IdentityPaths, files: { key: string; csr?: string; cert: string }): void {
  mkdirSync(join(paths.dir, "private"), { recursive: true, mode: 0o700 });
  mkdirSync(join(paths.dir, "public"), { recursive: true });
  // Atomic writes create files 0600; only the certificate is public.
  writeFileAtomicSync(paths.key, files.key);
  if (files.csr !== undefined) writeFileAtomicSync(paths.csr, files.csr);
  writeFileAtomicSync(paths.cert, files.cert);
  chmodSync(paths.cert, 0o644);
}

export interface CreateIdentityParams {
  aid: string;
  stateDir?: string;
  identityDir?: string;
  /** The access point base URL, e.g. `https://acp3.agentcp.io`. */
  accessPointUrl: string;
  seedPassword?: string | undefined;
  /** Allows writing the key unencrypted when no seed password is given. */
  noPassphrase?: boolean;
  tls?: TlsOptions;
  http?: HttpClient;
  /** Replace an identity already in the folder. Default false: IDENTITY_EXISTS. */
  overwrite?: boolean;
  /** Certify this key instead of a new one (renewing an expired certificate keeps the key). */
  privateKey?: KeyObject;
}

/** Makes a P-384 key and CSR, gets the certificate from `sign_cert`, writes the folder. */
export async function createIdentity(params: CreateIdentityParams): Promise<Identity> {
  const { aid } = params;
  const paths = identityPaths(params);
  if (!params.overwrite && (existsSync(paths.key) || existsSync(paths.cert))) {
    throw new NetworkError("IDENTITY_EXISTS", `${aid} already exists in ${paths.dir}: use it, or delete the folder to make a new one`, { aid });
  }
  const privateKey = params.privateKey ?? generateIdentityKey().privateKey;
  // Check the key can be stored before asking anyone for a certificate.
  const keyPem = encodeKey(privateKey, params, aid);
  const csr = await buildCsr(aid, privateKey);
  const http = params.http ?? createHttpClient(params.tls);
  const url = accessPointApi(params.accessPointUrl, "sign_cert");
  try {
    const reply = await http.postJson(url, { id: aid, csr });
    const body = reply.json as { certificate?: unknown } | undefined;
    if (reply.status !== 200 || typeof body?.certificate !== "string") {
      const why = readRefusal(reply).why;
      throw new NetworkError("CERT_REFUSED", `sign_cert refused ${aid}: ${why}`, { aid, url, status: reply.status });
    }
    const certPem = normalizePem(body.certificate);
    const publicKeyPem = matchKeyAndCert(aid, privateKey, certPem);
    writeIdentity(paths, { key: keyPem, csr, cert: certPem });
    return { aid, privateKey, publicKeyPem, certPem, dir: paths.dir };
  } finally {
    if (!params.http) http.close();
  }
}

/**
 * Loads the identity when its folder holds one with a valid certificate (issued by
 * `issuerCaPem`, when given); otherwise certifies the same key again; creates the identity when
 * there is none.
 */
export async function ensureIdentity(params: CreateIdentityParams & { now?: number; issuerCaPem?: string }): Promise<Identity> {
  if (existsSync(identityPaths(params).cert)) {
    const loaded = loadIdentity(params);
    const cert = new X509Certificate(loaded.certPem);
    const now = params.now ?? Date.now();
    // A certificate from another CA (a local network whose state was reset) is re-certified too.
    const issuedHere = params.issuerCaPem === undefined || cert.verify(new X509Certificate(params.issuerCaPem).publicKey);
    if (issuedHere && cert.validToDate.getTime() > now && cert.validFromDate.getTime() <= now) return loaded;
    return createIdentity({ ...params, privateKey: loaded.privateKey, overwrite: true });
  }
  return createIdentity(params);
}

export interface IdentityListing {
  aid: string;
  dir: string;
  certificate?: CertificateSummary;
  problem?: string;
}

export function listIdentities(stateDir: string): IdentityListing[] {
  const root = identitiesRoot(stateDir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => {
      const paths = identityPaths({ aid: e.name, stateDir });
      try {
        return { aid: e.name, dir: paths.dir, certificate: summarizeCertificate(readFileSync(paths.cert, "utf8")) };
      } catch (err) {
        return { aid: e.name, dir: paths.dir, problem: (err as Error).message };
      }
    })
    .sort((a, b) => a.aid.localeCompare(b.aid));
}

/**
 * Copies an existing key + certificate into the state dir: from explicit files, or from an SDK
 * folder (`private/<aid>.key`, `public/<aid>.crt`). The aid defaults to the certificate's CN.
 */
export function importIdentity(params: {
  stateDir: string;
  aid?: string;
  keyFile?: string;
  certFile?: string;
  sdkDir?: string;
  seedPassword?: string | undefined;
  noPassphrase?: boolean;
}): Identity {
  let keyFile = params.keyFile;
  let certFile = params.certFile;
  let aid = params.aid;
  if (params.sdkDir !== undefined) {
    aid ??= basename(params.sdkDir);
    keyFile ??= join(params.sdkDir, "private", `${aid}.key`);
    certFile ??= join(params.sdkDir, "public", `${aid}.crt`);
  }
  if (!keyFile || !certFile) throw new NetworkError("INVALID_OPTIONS", "Expected `--key` and `--cert`, or `--sdk-dir`");
  const certPem = normalizePem(readFileSync(certFile, "utf8"));
  aid ??= commonName(new X509Certificate(certPem).subject);
  if (!aid) throw new NetworkError("INVALID_OPTIONS", `The certificate ${certFile} names no aid (no CN)`);
  const privateKey = readPrivateKey({ aid, pem: readFileSync(keyFile, "utf8"), seedPassword: params.seedPassword, file: keyFile });
  const csrFile = join(keyFile, "..", `${aid}.csr`);
  return storeIdentity({ stateDir: params.stateDir, aid, privateKey, certPem, ...(existsSync(csrFile) ? { csr: readFileSync(csrFile, "utf8") } : {}), protection: params });
}

/** Writes a key and its certificate into the state dir's store, after checking they belong together. */
export function storeIdentity(params: { stateDir: string; aid: string; privateKey: KeyObject; certPem: string; csr?: string; protection: KeyProtection }): Identity {
  const { aid, privateKey } = params;
  const certPem = normalizePem(params.certPem);
  const publicKeyPem = matchKeyAndCert(aid, privateKey, certPem);
  const paths = identityPaths({ aid, stateDir: params.stateDir });
  writeIdentity(paths, { key: encodeKey(privateKey, params.protection, aid), cert: certPem, ...(params.csr !== undefined ? { csr: params.csr } : {}) });
  return { aid, privateKey, publicKeyPem, certPem, dir: paths.dir };
}

export type CertificateExpiry =
  | { warn: false; reason: "valid"; daysLeft: number }
  | { warn: true; reason: "expired" | "expiring-soon" | "not-yet-valid"; daysLeft: number };

/** Pure: does this certificate deserve a warning at `now`? */
export function checkCertificateExpiry(params: { certPem: string; now: number; warnDays?: number }): CertificateExpiry {
  const cert = new X509Certificate(params.certPem);
  const daysLeft = Math.floor((cert.validToDate.getTime() - params.now) / 86_400_000);
  if (cert.validFromDate.getTime() > params.now) return { warn: true, reason: "not-yet-valid", daysLeft };
  if (cert.validToDate.getTime() <= params.now) return { warn: true, reason: "expired", daysLeft };
  if (daysLeft < (params.warnDays ?? 30)) return { warn: true, reason: "expiring-soon", daysLeft };
  return { warn: false, reason: "valid", daysLeft };
}
