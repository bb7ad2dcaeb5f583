import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHash, createPrivateKey, X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { checkCertificateExpiry, createIdentity, ensureIdentity, importIdentity, listIdentities, loadIdentity, NetworkError, resolveAgentConnection, warnExpiringCertificates } from "../../src/network/index.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { tempDir } from "./support.ts";

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return (err as NetworkError).code;
  }
  return undefined;
};

describe("identities on disk (real files, real crypto, certificates from a local CA)", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  beforeEach(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net` });
  });
  afterEach(async () => {
    await net.close();
    tmp.cleanup();
  });
  const state = () => `${tmp.dir}/state`;

  it("create: the SDK's folder layout, the key encrypted with sha256-hex(seed) (PBES2, AES-256-CBC), a P-384 CSR with the SDK's subject", async () => {
    const id = await createIdentity({ aid: "alice.acp.local", stateDir: state(), accessPointUrl: net.localUrl, seedPassword: "s3cret" });
    const dir = join(state(), "identities", "alice.acp.local");
    expect(id.dir).toBe(dir);
    const keyPem = readFileSync(join(dir, "private", "alice.acp.local.key"), "utf8");
    expect(keyPem).toContain("-----BEGIN ENCRYPTED PRIVATE KEY-----");
    const sdkPassphrase = createHash("sha256").update("s3cret").digest("hex");
    const key = createPrivateKey({ key: keyPem, format: "pem", passphrase: sdkPassphrase });
    expect(key.asymmetricKeyDetails?.namedCurve).toBe("secp384r1");
    expect(statSync(join(dir, "private", "alice.acp.local.key")).mode & 0o777).toBe(0o600);
    const csr = readFileSync(join(dir, "private", "alice.acp.local.csr"), "utf8");
    expect(csr).toContain("BEGIN CERTIFICATE REQUEST");
    const cert = new X509Certificate(readFileSync(join(dir, "public", "alice.acp.local.crt")));
    expect(cert.subject.split("\n")).toEqual(["C=CN", "ST=SomeState", "L=SomeCity", "O=SomeOrganization", "CN=alice.acp.local"]);
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(new X509Certificate(net.caPem))).toBe(true);
    const loaded = loadIdentity({ aid: "alice.acp.local", stateDir: state(), seedPassword: "s3cret" });
    expect(loaded.publicKeyPem).toBe(id.publicKeyPem);
  });

  it("refuses to write an unencrypted key unless --no-passphrase, before asking for a certificate", async () => {
    const err = await createIdentity({ aid: "bob.acp.local", stateDir: state(), accessPointUrl: net.localUrl }).then(() => undefined, (e: unknown) => e);
    expect((err as NetworkError).code).toBe("PASSPHRASE_REQUIRED");
    expect(net.counters().issuedCertificates).toBe(0);
    expect(existsSync(join(state(), "identities", "bob.acp.local"))).toBe(false);
    await createIdentity({ aid: "bob.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true });
    expect(readFileSync(join(state(), "identities", "bob.acp.local", "private", "bob.acp.local.key"), "utf8")).toContain("BEGIN PRIVATE KEY");
  });

  it("load: a missing identity, a missing or wrong seed password are typed errors naming the aid", async () => {
    await createIdentity({ aid: "alice.acp.local", stateDir: state(), accessPointUrl: net.localUrl, seedPassword: "right" });
    expect(codeOf(() => loadIdentity({ aid: "nobody.acp.local", stateDir: state() }))).toBe("IDENTITY_NOT_FOUND");
    expect(codeOf(() => loadIdentity({ aid: "alice.acp.local", stateDir: state() }))).toBe("IDENTITY_LOCKED");
    expect(codeOf(() => loadIdentity({ aid: "alice.acp.local", stateDir: state(), seedPassword: "wrong" }))).toBe("IDENTITY_LOCKED");
  });

  it("load: a key under the official SDK's default empty seed password (passphrase sha256-hex of \"\") opens without a seed password, or beside a wrong one", async () => {
    const made = await createIdentity({ aid: "dora.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true });
    // What acp-ts writes when its seed password is left at its default "": the key encrypted under sha256-hex("").
    const emptySeed = createHash("sha256").update("").digest("hex");
    const keyFile = join(state(), "identities", "dora.acp.local", "private", "dora.acp.local.key");
    writeFileSync(keyFile, made.privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: emptySeed }));
    expect(readFileSync(keyFile, "utf8")).toContain("BEGIN ENCRYPTED PRIVATE KEY");
    expect(loadIdentity({ aid: "dora.acp.local", stateDir: state() }).publicKeyPem).toBe(made.publicKeyPem);
    expect(loadIdentity({ aid: "dora.acp.local", stateDir: state(), seedPassword: "another identity's" }).publicKeyPem).toBe(made.publicKeyPem);
  });

  it("import: an SDK folder (CRLF PEMs, key under sha256-hex of the seed) and plain key + cert files", async () => {
    const made = await createIdentity({ aid: "carol.acp.local", stateDir: `${tmp.dir}/elsewhere`, accessPointUrl: net.localUrl, seedPassword: "pw" });
    // Rewrite it as the SDK writes: CRLF line endings.
    const sdkDir = join(tmp.dir, "sdk", "carol.acp.local");
    mkdirSync(join(sdkDir, "private"), { recursive: true });
    mkdirSync(join(sdkDir, "public"), { recursive: true });
    const crlf = (s: string) => s.replace(/\n/g, "\r\n");
    writeFileSync(join(sdkDir, "private", "carol.acp.local.key"), crlf(readFileSync(join(made.dir!, "private", "carol.acp.local.key"), "utf8")));
    writeFileSync(join(sdkDir, "public", "carol.acp.local.crt"), crlf(made.certPem));
    const imported = importIdentity({ stateDir: state(), sdkDir, seedPassword: "pw" });
    expect(imported.aid).toBe("carol.acp.local");
    expect(loadIdentity({ aid: "carol.acp.local", stateDir: state(), seedPassword: "pw" }).publicKeyPem).toBe(made.publicKeyPem);
    // Plain files, aid from the certificate's CN, stored unencrypted only when asked.
    const plain = await createIdentity({ aid: "dave.acp.local", stateDir: `${tmp.dir}/elsewhere`, accessPointUrl: net.localUrl, noPassphrase: true });
    expect(codeOf(() => importIdentity({ stateDir: state(), keyFile: join(plain.dir!, "private", "dave.acp.local.key"), certFile: join(plain.dir!, "public", "dave.acp.local.crt") }))).toBe("PASSPHRASE_REQUIRED");
    importIdentity({ stateDir: state(), keyFile: join(plain.dir!, "private", "dave.acp.local.key"), certFile: join(plain.dir!, "public", "dave.acp.local.crt"), seedPassword: "pw" });
    // A key that does not belong to the certificate is refused.
    expect(codeOf(() => importIdentity({ stateDir: state(), aid: "dave.acp.local", keyFile: join(made.dir!, "private", "carol.acp.local.key"), certFile: join(plain.dir!, "public", "dave.acp.local.crt"), seedPassword: "pw" }))).toBe("IDENTITY_REJECTED");
    expect(listIdentities(state()).map((l) => [l.aid, l.certificate?.commonName])).toEqual([
      ["carol.acp.local", "carol.acp.local"],
      ["dave.acp.local", "dave.acp.local"],
    ]);
  });

  it("expiry: warned when expired or within 30 days, quiet otherwise (literal dates)", async () => {
    const id = await createIdentity({ aid: "erin.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true });
    const cert = new X509Certificate(id.certPem);
    const to = cert.validToDate.getTime();
    const day = 86_400_000;
    expect(checkCertificateExpiry({ certPem: id.certPem, now: to - 100 * day })).toEqual({ warn: false, reason: "valid", daysLeft: 100 });
    expect(checkCertificateExpiry({ certPem: id.certPem, now: to - 10 * day })).toEqual({ warn: true, reason: "expiring-soon", daysLeft: 10 });
    expect(checkCertificateExpiry({ certPem: id.certPem, now: to + day })).toEqual({ warn: true, reason: "expired", daysLeft: -1 });
    const logger = createMemoryLogger();
    warnExpiringCertificates({ identities: [id], now: to - 3 * day, logger });
    expect(logger.entries.map((e) => [e.level, e.event, e.fields.aid, e.fields.daysLeft])).toEqual([["warn", "identity.certificate-expiring-soon", "erin.acp.local", 3]]);
  });

  it("create never overwrites; ensureIdentity loads a valid one and renews an expired certificate for the same key", async () => {
    const first = await createIdentity({ aid: "frank.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true });
    const again = await createIdentity({ aid: "frank.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true }).then(() => undefined, (e: unknown) => e);
    expect((again as NetworkError).code).toBe("IDENTITY_EXISTS");
    const loaded = await ensureIdentity({ aid: "frank.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true });
    expect(loaded.certPem).toBe(first.certPem);
    expect(net.counters().issuedCertificates).toBe(1);
    // Two years on, the certificate has expired: a new one for the same key (the local CA accepts it, the aid is that key's).
    const renewed = await ensureIdentity({ aid: "frank.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true, now: Date.now() + 2 * 365 * 86_400_000 });
    expect(renewed.certPem).not.toBe(first.certPem);
    expect(renewed.publicKeyPem).toBe(first.publicKeyPem);
    expect(net.counters().issuedCertificates).toBe(2);
    // A network whose state was reset has a new CA: the same key is certified by it.
    await net.close();
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net-reset` });
    const again2 = await ensureIdentity({ aid: "frank.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true, issuerCaPem: net.caPem });
    expect(new X509Certificate(again2.certPem).checkIssued(new X509Certificate(net.caPem))).toBe(true);
    expect(again2.publicKeyPem).toBe(first.publicKeyPem);
    expect((await ensureIdentity({ aid: "frank.acp.local", stateDir: state(), accessPointUrl: net.localUrl, noPassphrase: true, issuerCaPem: net.caPem })).certPem).toBe(again2.certPem);
  });

  it("resolveAgentConnection: identity from the state dir, access point from the aid, TLS from network settings", async () => {
    await createIdentity({ aid: "gina.acp.local", stateDir: state(), accessPointUrl: net.localUrl, seedPassword: "pw" });
    const r = resolveAgentConnection({ identity: { aid: "gina.acp.local" }, network: { insecureTls: false, caFile: "/ca.crt" }, stateDir: state(), env: { ACP_SEED_PASSWORD: "pw" } });
    expect([r.identity.aid, r.accessPointUrl, r.tls]).toEqual(["gina.acp.local", "https://acp3.acp.local", { caFile: "/ca.crt" }]);
    const local = resolveAgentConnection({ identity: { aid: "gina.acp.local", accessPointUrl: net.localUrl }, network: { insecureTls: true, seedPassword: "pw" }, stateDir: state(), env: {} });
    expect([local.accessPointUrl, local.tls]).toEqual([net.localUrl, { insecureTls: true }]);
    expect(codeOf(() => resolveAgentConnection({ identity: { aid: "gina.acp.local" }, network: { insecureTls: false }, stateDir: state(), env: {} }))).toBe("IDENTITY_LOCKED");
  });
});
