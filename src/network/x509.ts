// Certificates and CSRs: Node's crypto makes keys, signs and verifies; @peculiar/x509 builds the
// ASN.1 structures Node cannot (CSR, issued certificates). Loaded once, here, for both sides.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { createHash, createPublicKey, generateKeyPairSync, webcrypto, X509Certificate, type KeyObject } from "node:crypto";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export type CryptoKey = webcrypto.CryptoKey;
export type CryptoKeyPair = webcrypto.CryptoKeyPair;

export { x509 };

/** ECDSA on P-384 with SHA-256 signatures: what the network's certificates use. */
export const EC_ALGORITHM = { name: "ECDSA", namedCurve: "P-384" } as const;
export const SIGNING_ALGORITHM = { name: "ECDSA", hash: "SHA-256" } as const;

/** The subject the SDKs put in every CSR; only CN (the aid) matters to the access point. */
export const csrSubject = (aid: string): string => `C=CN, ST=SomeState, L=SomeCity, O=SomeOrganization, CN=${aid}`;

export function generateIdentityKey(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync("ec", { namedCurve: "secp384r1" });
}

export function toCryptoKeys(privateKey: KeyObject): CryptoKeyPair {
  const publicKey = createPublicKey(privateKey);
  return {
    privateKey: privateKey.toCryptoKey(EC_ALGORITHM, true, ["sign"]) as unknown as CryptoKey,
    publicKey: publicKey.toCryptoKey(EC_ALGORITHM, true, ["verify"]) as unknown as CryptoKey,
  };
}

/** A PEM CSR for `aid` signed with `privateKey` (subject as the SDKs build it, CA:false). */
export async function buildCsr(aid: string, privateKey: KeyObject): Promise<string> {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: csrSubject(aid),
    keys: toCryptoKeys(privateKey),
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(false)],
  });
  return csr.toString("pem") + "\n";
}

/** PEM as the SDK writes it (CRLF) or as we do (LF): both read the same. */
export const normalizePem = (pem: string): string => pem.replace(/\r\n/g, "\n").trim() + "\n";

/** The CN of a distinguished name as Node prints it (`C=CN\nST=…\nCN=alice.x`). */
export function commonName(subject: string): string | undefined {
  for (const line of subject.split("\n")) if (line.startsWith("CN=")) return line.slice(3);
  return undefined;
}

export interface CertificateSummary {
  subject: string;
  issuer: string;
  commonName: string | undefined;
  validFrom: Date;
  validTo: Date;
  /** SHA-256 of the DER, colon-separated hex. */
  fingerprint256: string;
  serialNumber: string;
}

export function summarizeCertificate(certPem: string): CertificateSummary {
  const cert = new X509Certificate(normalizePem(certPem));
  return {
    subject: cert.subject.replace(/\n/g, ", "),
    issuer: cert.issuer.replace(/\n/g, ", "),
    commonName: commonName(cert.subject),
    validFrom: new Date(cert.validFrom),
    validTo: new Date(cert.validTo),
    fingerprint256: cert.fingerprint256,
    serialNumber: cert.serialNumber,
  };
}

/** The passphrase the TypeScript SDK encrypts keys with: sha256-hex of the seed password. */
export const sdkPassphrase = (seedPassword: string): string => createHash("sha256").update(seedPassword).digest("hex");
