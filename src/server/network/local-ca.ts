// The local network's certificate authority: a P-384 CA created once in its state dir, issuing
// identity certificates from CSRs and the TLS certificate of the local access point.
import { createPrivateKey, createPublicKey, randomBytes, X509Certificate, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../../state/atomic-file.ts";
import { BoundedMap } from "../../util/bounded-map.ts";
import { IssuedCertificates } from "./issued-certificates.ts";
import { generateIdentityKey, normalizePem, SIGNING_ALGORITHM, toCryptoKeys, x509, commonName, type CryptoKey } from "../../network/x509.ts";

const DAY = 86_400_000;
/** About 13 months, like the network's own certificates. */
export const IDENTITY_CERT_DAYS = 395;
/** Certificates whose CA signature is remembered as checked: every agent of a large network, and then some. */
const VERIFIED_CERTIFICATES = 20_000;

/** A certificate this CA issued, with its key parsed once: `publicKey` to verify with, `spkiDer` to name and compare it by. */
export interface IssuedCertificate {
  ok: true;
  aid: string;
  cert: X509Certificate;
  publicKey: KeyObject;
  spkiDer: Buffer;
}

export type CertificateCheck = IssuedCertificate | { ok: false; reason: "unparsable" | "not-issued-here" | "expired" | "not-yet-valid" | "is-a-ca" | "no-aid" };

export interface LocalCa {
  readonly certFile: string;
  readonly certPem: string;
  /**
   * Issues a certificate for `publicKey` (CA:false, client+server auth) whose only CN is `aid`;
   * `attributes` (already validated, CNs ignored) come before it, as the SDKs' subjects have them.
   */
  issue(params: { aid: string; publicKey: CryptoKey | x509.PublicKey; attributes?: x509.JsonName; now: number; days?: number }): Promise<string>;
  /** A TLS server certificate for these names, with a fresh key. */
  issueServerCertificate(params: { dnsNames: string[]; ips: string[]; now: number }): Promise<{ certPem: string; keyPem: string }>;
  /** Was this certificate issued by this CA, and is it valid at `now`? */
  check(certPem: string, now: number): CertificateCheck;
}

const serial = (): string => {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString("hex");
};

export async function openLocalCa(params: { dir: string; domain: string; now: number }): Promise<LocalCa> {
  const certFile = join(params.dir, "ca.crt");
  const keyFile = join(params.dir, "ca.key");
  let caKey: KeyObject;
  let certPem: string;
  if (existsSync(certFile) && existsSync(keyFile)) {
    caKey = createPrivateKey(readFileSync(keyFile, "utf8"));
    certPem = normalizePem(readFileSync(certFile, "utf8"));
  } else {
    mkdirSync(params.dir, { recursive: true, mode: 0o700 });
    caKey = generateIdentityKey().privateKey;
    const keys = toCryptoKeys(caKey);
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: `CN=acp-group local CA (${params.domain}), O=acp-group-channel`,
      notBefore: new Date(params.now - DAY),
      notAfter: new Date(params.now + 3650 * DAY),
      keys,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    certPem = ca.toString("pem") + "\n";
    // The CA key stays unencrypted: it only ever signs for this local development network.
    writeFileAtomicSync(keyFile, caKey.export({ type: "pkcs8", format: "pem" }).toString());
    writeFileAtomicSync(certFile, certPem);
  }
  const caCert = new X509Certificate(certPem);
  const caSigningKey = toCryptoKeys(caKey).privateKey;
  const caPublic = createPublicKey(caKey);
  const caX509 = new x509.X509Certificate(certPem);
  /** What does not change with the time: a certificate's parse and CA signature, by its PEM as sent. */
  const verified = new BoundedMap<string, IssuedCertificate>(VERIFIED_CERTIFICATES);
  /** What this CA issued, also before a restart: taken by fingerprint, its signature not verified again. */
  const issued = new IssuedCertificates(params.dir);
  const verifyIssued = (pem: string): CertificateCheck => {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(normalizePem(pem));
    } catch {
      return { ok: false, reason: "unparsable" };
    }
    if (!issued.has(cert.fingerprint256) && (!cert.checkIssued(caCert) || !cert.verify(caPublic))) return { ok: false, reason: "not-issued-here" };
    if (cert.ca) return { ok: false, reason: "is-a-ca" };
    const aid = commonName(cert.subject);
    if (!aid) return { ok: false, reason: "no-aid" };
    const publicKey = cert.publicKey;
    return { ok: true, aid, cert, publicKey, spkiDer: publicKey.export({ type: "spki", format: "der" }) };
  };

  const sign = async (p: { subject: string | x509.JsonName; publicKey: CryptoKey | x509.PublicKey; now: number; days: number; extensions: x509.Extension[] }) => {
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: p.subject,
      issuer: caX509.subject,
      notBefore: new Date(p.now - 60_000),
      notAfter: new Date(p.now + p.days * DAY),
      publicKey: p.publicKey,
      signingKey: caSigningKey,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        await x509.AuthorityKeyIdentifierExtension.create(caX509),
        ...p.extensions,
      ],
    });
    return cert.toString("pem") + "\n";
  };

  return {
    certFile,
    certPem,
    issue: async (p) => {
      const pem = await sign({
        // A JSON name, never a string to parse, and the one CN is the aid itself.
        subject: [...(p.attributes ?? []).filter((rdn) => !("CN" in rdn) && !("2.5.4.3" in rdn)), { CN: [p.aid] }],
        publicKey: p.publicKey,
        now: p.now,
        days: p.days ?? IDENTITY_CERT_DAYS,
        extensions: [
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth, x509.ExtendedKeyUsage.serverAuth]),
        ],
      });
      // Handed out once it is on the list: sent back as it is, it is known without a verification.
      await issued.add(new X509Certificate(pem).fingerprint256);
      return pem;
    },
    async issueServerCertificate(p) {
      const key = generateIdentityKey().privateKey;
      const certPem2 = await sign({
        subject: `CN=${p.dnsNames[0] ?? "localhost"}`,
        publicKey: toCryptoKeys(key).publicKey,
        now: p.now,
        days: 365,
        extensions: [
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension([
            ...p.dnsNames.map((value) => ({ type: "dns" as const, value })),
            ...p.ips.map((value) => ({ type: "ip" as const, value })),
          ]),
        ],
      });
      return { certPem: certPem2, keyPem: key.export({ type: "pkcs8", format: "pem" }).toString() };
    },
    check(pem, now) {
      // An agent signs in three times per connection (access point, message service, presence)
      // and again after every drop, always with the same certificate: its signature is verified
      // once, the dates at every call. Only certificates of this CA are remembered: whatever else
      // is sent costs the sender a verification every time, never this process memory.
      let issued = verified.get(pem);
      if (issued === undefined) {
        const fresh = verifyIssued(pem);
        if (!fresh.ok) return fresh;
        verified.set(pem, (issued = fresh));
      }
      const { cert } = issued;
      if (cert.validFromDate.getTime() > now) return { ok: false, reason: "not-yet-valid" };
      if (cert.validToDate.getTime() <= now) return { ok: false, reason: "expired" };
      return issued;
    },
  };
}
