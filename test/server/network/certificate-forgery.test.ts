// Nobody gets a certificate for someone else's aid (real sockets, real keys, the local network):
// sign_cert issues from the validated aid alone, never from the CSR's subject as a string, and
// refuses subjects with a second CN or characters that change meaning when re-parsed; sign-in
// takes a certificate only with the key registered for its aid.
import { createPublicKey, X509Certificate } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClient, createIdentity, signIn, type Identity } from "../../../src/network/index.ts";
import { commonName, generateIdentityKey, SIGNING_ALGORITHM, toCryptoKeys, x509 } from "../../../src/network/x509.ts";
import { openLocalCa } from "../../../src/server/network/local-ca.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { tempDir } from "../../network/support.ts";

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
afterEach(async () => {
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

async function csrWithName(name: x509.JsonName, key = generateIdentityKey().privateKey): Promise<string> {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name, keys: toCryptoKeys(key), signingAlgorithm: SIGNING_ALGORITHM });
  return csr.toString("pem");
}

const http = createHttpClient();
const signCert = async (id: string, csr: string) => http.postJson(`${net!.localUrl}/api/accesspoint/sign_cert`, { id, csr });

describe("sign_cert and sign-in refuse a certificate for someone else's aid (real sockets)", () => {
  it("a CSR whose subject hides a second CN behind a trailing backslash gets no certificate for that CN", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net") });
    await createIdentity({ aid: "alice.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    // The attack: O="z\" swallows mallory's CN when the subject is printed and parsed back.
    const attack = await csrWithName([{ O: ["z\\"] }, { CN: ["mallory.acp.local"] }, { CN: ["alice.acp.local"] }]);
    const reply = await signCert("mallory.acp.local", attack);
    const certificate = (reply.json as { certificate?: string }).certificate;
    // Whatever comes back never names alice.
    if (certificate !== undefined) expect(commonName(new X509Certificate(certificate).subject)).toBe("mallory.acp.local");
    expect(reply.status).toBe(400);
    expect((reply.json as { error: string }).error).toMatch(/^csr subject has characters outside/);
  });

  it("subjects with two CNs, a multi-valued CN or escaping characters are refused; the SDK's subject is accepted and the certificate's one CN is the aid", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net") });
    const refused: x509.JsonName[] = [
      [{ CN: ["eve.acp.local"] }, { CN: ["eve.acp.local"] }],
      [{ O: ["x"], CN: ["eve.acp.local"] }],
      [{ O: ['a", CN=bob.acp.local'] }, { CN: ["eve.acp.local"] }],
      [{ O: ["line\nCN=bob.acp.local"] }, { CN: ["eve.acp.local"] }],
    ];
    for (const name of refused) expect((await signCert("eve.acp.local", await csrWithName(name))).status).toBe(400);
    const ok = await signCert("eve.acp.local", await csrWithName([{ C: ["CN"] }, { ST: ["SomeState"] }, { L: ["SomeCity"] }, { O: ["SomeOrganization"] }, { CN: ["eve.acp.local"] }]));
    expect(ok.status).toBe(200);
    expect(new X509Certificate((ok.json as { certificate: string }).certificate).subject.split("\n")).toEqual(["C=CN", "ST=SomeState", "L=SomeCity", "O=SomeOrganization", "CN=eve.acp.local"]);
  });

  it("sign-in refuses a certificate of this CA for an aid registered to another key (a certificate issued before the fix)", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net") });
    const alice = await createIdentity({ aid: "alice.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    // The same CA, opened from its files, certifies mallory's key as alice.
    const ca = await openLocalCa({ dir: join(tmp.dir, "net", "ca"), domain: "acp.local", now: Date.now() });
    const malloryKey = generateIdentityKey().privateKey;
    const forged = await ca.issue({ aid: "alice.acp.local", publicKey: toCryptoKeys(malloryKey).publicKey, now: Date.now() });
    const mallory: Identity = { aid: "alice.acp.local", privateKey: malloryKey, publicKeyPem: createPublicKey(malloryKey).export({ type: "spki", format: "pem" }).toString(), certPem: forged, dir: undefined };
    for (const where of ["accesspoint", "message"]) {
      await expect(signIn({ url: `${net.localUrl}/api/${where}/sign_in`, identity: mallory, http })).rejects.toThrow(/registered to another key/);
      await expect(signIn({ url: `${net.localUrl}/api/${where}/sign_in`, identity: alice, http })).resolves.toMatch(/^[0-9a-f]+$/);
    }
    expect(net.counters().refusedSignIns).toBe(2);
  });
});
