import { describe, expect, it } from "vitest";
import { ConfigError, parseChannelConfig } from "../../src/config/load.ts";

function issues(raw: unknown): readonly string[] {
  try {
    parseChannelConfig(raw);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

describe("identity and network settings", () => {
  it("accepts an aid with an identity folder, key/cert files, an access point domain or URL", () => {
    const config = parseChannelConfig({
      identities: {
        a: { aid: "a.agentcp.io", identityDir: "/keys/a.agentcp.io", accessPoint: "agentcp.io" },
        b: { aid: "b.acp.local", keyFile: "/k/b.key", certFile: "/k/b.crt", accessPointUrl: "https://127.0.0.1:8443" },
        c: { aid: "c.acp.local", accessPoint: "acp.local:8443" },
      },
      network: { caFile: "/state/ca/ca.crt", seedPassword: "pw" },
    });
    expect(config.network).toEqual({ caFile: "/state/ca/ca.crt", insecureTls: false, presence: true, seedPassword: "pw" });
    expect(config.identities.b!.keyFile).toBe("/k/b.key");
  });

  it("defaults: TLS verified, no CA file", () => {
    expect(parseChannelConfig({}).network).toEqual({ insecureTls: false, presence: true });
  });

  it.each([
    [{ identities: { a: { aid: "a.x.io", keyFile: "/k" } } }, "identities.a.certFile: expected keyFile and certFile together"],
    [{ identities: { a: { aid: "a.x.io", certFile: "/c" } } }, "identities.a.keyFile: expected keyFile and certFile together"],
    [{ identities: { a: { aid: "a.x.io", keyFile: "/k", certFile: "/c", identityDir: "/d" } } }, 'identities.a.identityDir: expected identityDir or keyFile/certFile, not both, got "/d"'],
    [{ identities: { a: { aid: "a.x.io", accessPoint: "x.io", accessPointUrl: "https://acp3.x.io" } } }, 'identities.a.accessPointUrl: expected accessPoint or accessPointUrl, not both, got "https://acp3.x.io"'],
    [{ identities: { a: { aid: "a.x.io", accessPointUrl: "ftp://x" } } }, 'identities.a.accessPointUrl: expected an http:// or https:// URL, got "ftp://x"'],
    [{ identities: { a: { aid: "a.x.io", accessPoint: "https://x.io" } } }, 'identities.a.accessPoint: expected an access point domain such as agentcp.io (optionally :port), got "https://x.io"'],
    [{ identities: { a: { aid: "a.x.io", token: "t" } } }, "identities.a: unknown key `token`"],
    [{ network: { insecureTls: "yes" } }, 'network.insecureTls: expected true or false, got "yes"'],
    [{ network: { ca: "/x" } }, "network: unknown key `ca`"],
  ])("%j", (raw, expected) => {
    expect(issues(raw)).toEqual([expected]);
  });
});
