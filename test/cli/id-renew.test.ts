// `acp-group id renew`: an expired certificate (planted, from the network's own CA) is certified
// again by the real local network's access point, with the same key — the fix doctor names.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicKey, X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { idCommand } from "../../src/cli/id.ts";
import { identityPaths, loadIdentity } from "../../src/network/identity-store.ts";
import { generateIdentityKey, toCryptoKeys } from "../../src/network/x509.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { openLocalCa } from "../../src/server/network/local-ca.ts";
import { tempDir } from "../network/support.ts";

const DAY = 86_400_000;

describe("acp-group id renew (real local network over TLS)", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  beforeAll(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: "acp.renew", stateDir: `${tmp.dir}/net`, tls: true });
  });
  afterAll(async () => {
    await net.close();
    tmp.cleanup();
  });

  it("an expired certificate: renewed from the access point, same key, valid again", async () => {
    const stateDir = `${tmp.dir}/state`;
    const aid = "old.acp.renew";
    const ca = await openLocalCa({ dir: dirname(net.caFile), domain: "acp.renew", now: Date.now() });
    const { privateKey } = generateIdentityKey();
    const paths = identityPaths({ aid, stateDir });
    mkdirSync(join(paths.dir, "private"), { recursive: true });
    mkdirSync(join(paths.dir, "public"), { recursive: true });
    writeFileSync(paths.key, privateKey.export({ type: "pkcs8", format: "pem" }).toString());
    writeFileSync(paths.cert, await ca.issue({ aid, publicKey: toCryptoKeys(privateKey).publicKey, now: Date.now() - 400 * DAY, days: 395 }));
    expect(new X509Certificate(readFileSync(paths.cert, "utf8")).validToDate.getTime()).toBeLessThan(Date.now());

    const out: string[] = [];
    const code = await idCommand(["renew", aid, "--ap-url", net.localUrl, "--ca-file", net.caFile, "--state-dir", stateDir], { out: (s) => out.push(s), err: (s) => out.push(s) }, {});
    expect(code).toBe(0);
    expect(out[0]).toBe(`renewed ${aid} (same key, certificate from ${net.localUrl})`);
    expect(out.find((l) => l.startsWith("valid:"))).toMatch(/\(valid, 39[45] days left\)$/);
    const renewed = loadIdentity({ aid, stateDir });
    expect(createPublicKey(renewed.privateKey).export({ type: "spki", format: "pem" })).toBe(createPublicKey(privateKey).export({ type: "spki", format: "pem" }));
  });
});
