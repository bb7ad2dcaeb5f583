// network.seedPassword as a reference (the OpenClaw host's SecretRef shape) instead of plain text:
// a real encrypted key opens with the password from the named variable or file.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseChannelConfig } from "../../src/config/load.ts";
import { resolveSeedPassword, SecretRefError } from "../../src/config/secret-ref.ts";
import { checkIdentityHealth } from "../../src/openclaw/admin.ts";
import { identityPaths } from "../../src/network/identity-store.ts";
import { generateIdentityKey, sdkPassphrase, toCryptoKeys } from "../../src/network/x509.ts";
import { openLocalCa } from "../../src/server/network/local-ca.ts";

const root = mkdtempSync(join(tmpdir(), "acp-secret-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("seedPassword as a secret reference", () => {
  it("env and file references resolve; plain text still works; ACP_SEED_PASSWORD is the fallback", () => {
    const file = join(root, "seed.txt");
    writeFileSync(file, "from-file\n");
    expect(resolveSeedPassword({ seedPassword: { source: "env", provider: "default", id: "MY_SEED" } }, { MY_SEED: "from-env" })).toBe("from-env");
    expect(resolveSeedPassword({ seedPassword: { source: "file", provider: "default", id: file } }, {})).toBe("from-file");
    expect(resolveSeedPassword({ seedPassword: "plain" }, { ACP_SEED_PASSWORD: "x" })).toBe("plain");
    expect(resolveSeedPassword({}, { ACP_SEED_PASSWORD: "fallback" })).toBe("fallback");
    expect(() => resolveSeedPassword({ seedPassword: { source: "file", provider: "default", id: join(root, "missing") } }, {})).toThrow(SecretRefError);
  });

  it("the config accepts the host's SecretRef shape (env, file, exec, store) and refuses any other source", () => {
    expect(parseChannelConfig({ network: { seedPassword: { source: "env", provider: "default", id: "MY_SEED" } } }).network.seedPassword).toEqual({ source: "env", provider: "default", id: "MY_SEED" });
    // exec and store exist only in the OpenClaw gateway, which resolves them before the channel starts.
    expect(parseChannelConfig({ network: { seedPassword: { source: "exec", provider: "vault", id: "acp/seed" } } }).network.seedPassword).toEqual({ source: "exec", provider: "vault", id: "acp/seed" });
    expect(parseChannelConfig({ network: { seedPassword: { source: "store", provider: "default", id: "ACP_SEED" } } }).network.seedPassword).toMatchObject({ source: "store" });
    expect(() => parseChannelConfig({ network: { seedPassword: { source: "vault", provider: "default", id: "x" } } })).toThrow(/network\.seedPassword/);
  });

  it("an exec or store reference that reaches us unresolved (no gateway) stops with the path and what to use instead", () => {
    for (const source of ["exec", "store"] as const) {
      const attempt = () => resolveSeedPassword({ seedPassword: { source, provider: "vault", id: "ACP_SEED" } }, { ACP_SEED_PASSWORD: "ignored" });
      expect(attempt).toThrow(SecretRefError);
      expect(attempt).toThrow(`network.seedPassword: a \`${source}\` reference is resolved by the OpenClaw gateway (secrets.providers.vault); here use an env or file reference, or ACP_SEED_PASSWORD`);
    }
  });

  it("an encrypted key on disk opens with the password from the referenced variable", async () => {
    const stateDir = join(root, "state");
    const aid = "enc.acp.local";
    const ca = await openLocalCa({ dir: join(root, "ca"), domain: "acp.local", now: Date.now() });
    const { privateKey } = generateIdentityKey();
    const paths = identityPaths({ aid, stateDir });
    mkdirSync(join(paths.dir, "private"), { recursive: true });
    mkdirSync(join(paths.dir, "public"), { recursive: true });
    writeFileSync(paths.key, privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: sdkPassphrase("s3cret") }).toString());
    writeFileSync(paths.cert, await ca.issue({ aid, publicKey: toCryptoKeys(privateKey).publicKey, now: Date.now() }));
    const config = parseChannelConfig({ network: { seedPassword: { source: "env", id: "MY_SEED" } }, identities: { e: { aid } } });
    const health = (env: NodeJS.ProcessEnv) => checkIdentityHealth({ accountId: "e", identity: config.identities.e!, config, stateDir, env, now: Date.now() }).key;
    expect(health({ MY_SEED: "s3cret" })).toBe("ok");
    expect(health({})).toBe("locked");
  });
});
