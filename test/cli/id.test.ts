import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writePublishedProfile } from "../../src/profile/profile-sync.ts";
import { main } from "../../src/cli/index.ts";
import { idCommand } from "../../src/cli/id.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { tempDir } from "../network/support.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s) }, out, err };
}

describe("acp-group id (real local network over TLS, real files)", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  beforeAll(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: "acp.cli", stateDir: `${tmp.dir}/net`, tls: true });
  });
  afterAll(async () => {
    await net.close();
    tmp.cleanup();
  });
  const state = () => `${tmp.dir}/state`;

  it("create without a seed password and without --no-passphrase: refused, nothing written", async () => {
    const c = capture();
    const code = await main(["id", "create", "alice.acp.cli", "--ap-url", net.localUrl, "--ca-file", net.caFile, "--state-dir", state()], c.io);
    expect(code).toBe(1);
    expect(c.err.join("\n")).toContain("Refusing to write the key of alice.acp.cli unencrypted: set ACP_SEED_PASSWORD or pass --no-passphrase (PASSPHRASE_REQUIRED)");
  });

  it("create with ACP_SEED_PASSWORD, then list and show", async () => {
    const env = { ACP_SEED_PASSWORD: "pw" };
    const c = capture();
    expect(await idCommand(["create", "alice.acp.cli", "--ap-url", net.localUrl, "--ca-file", net.caFile, "--state-dir", state()], c.io, env)).toBe(0);
    expect(c.out[0]).toBe(`created alice.acp.cli (certificate from ${net.localUrl})`);
    expect(c.out[1]).toBe(`folder:      ${join(state(), "identities", "alice.acp.cli")} (key encrypted with the seed password)`);
    expect(c.out[2]).toBe("subject:     C=CN, ST=SomeState, L=SomeCity, O=SomeOrganization, CN=alice.acp.cli");
    expect(c.out[3]).toMatch(/^issuer: {6}CN=acp-group local CA \(acp\.cli\)/);
    expect(c.out[4]).toMatch(/\(valid, 39[45] days left\)$/);
    expect(c.out[5]).toMatch(/^fingerprint: SHA256 ([0-9A-F]{2}:){31}[0-9A-F]{2}$/);

    const l = capture();
    expect(await idCommand(["list", "--state-dir", state()], l.io, env)).toBe(0);
    expect(l.out).toHaveLength(1);
    expect(l.out[0]).toMatch(/^alice\.acp\.cli {2}\d{4}-\d{2}-\d{2} {2}valid, 39[45] days left {2}issuer: CN=acp-group local CA/);

    const s = capture();
    expect(await idCommand(["show", "alice.acp.cli", "--state-dir", state()], s.io, env)).toBe(0);
    expect(s.out[0]).toBe("aid:         alice.acp.cli");
    // The last line is now the published agent.md (none before the first sign-in), so the key line moved up one.
    expect(s.out.at(-3)).toBe(`key:         ${join(state(), "identities", "alice.acp.cli", "private", "alice.acp.cli.key")} (key opens and matches the certificate)`);
    expect(s.out.at(-1)).toBe("agent.md: not published yet (it is published after the next sign-in)");
    const wrong = capture();
    await idCommand(["show", "alice.acp.cli", "--state-dir", state()], wrong.io, { ACP_SEED_PASSWORD: "nope" });
    expect(wrong.out.at(-3)).toContain("The seed password does not open the key of alice.acp.cli");

    // After a publish (recorded by whichever identity id ran it), show prints what was published.
    writePublishedProfile(state(), "alice", { version: 1, aid: "alice.acp.cli", hash: "ab".repeat(32), publishedAt: Date.UTC(2026, 0, 2), text: "---\naid: alice.acp.cli\ntype: agent\n---\n# Alice\n" });
    const shown = capture();
    expect(await idCommand(["show", "alice.acp.cli", "--state-dir", state()], shown.io, env)).toBe(0);
    expect(shown.out.at(-1)).toBe("agent.md published 2026-01-02T00:00:00.000Z (sha256 abababababab):\n---\naid: alice.acp.cli\ntype: agent\n---\n# Alice");
  });

  it("show in npm start's <state>/local-network finds what the runtime recorded in <state>", async () => {
    const root = `${tmp.dir}/demo`;
    const c = capture();
    expect(await idCommand(["create", "dora.acp.cli", "--ap-url", net.localUrl, "--ca-file", net.caFile, "--no-passphrase", "--state-dir", join(root, "local-network")], c.io, {})).toBe(0);
    const s = capture();
    expect(await idCommand(["show", "dora.acp.cli", "--state-dir", join(root, "local-network")], s.io, {})).toBe(0);
    expect(s.out.at(-1)).toBe("agent.md: not published yet (it is published after the next sign-in)");
    writePublishedProfile(root, "dora", { version: 1, aid: "dora.acp.cli", hash: "cd".repeat(32), publishedAt: Date.UTC(2026, 0, 3), text: "---\naid: dora.acp.cli\ntype: agent\n---\n# Dora\n" });
    const again = capture();
    expect(await idCommand(["show", "dora.acp.cli", "--state-dir", join(root, "local-network"), "--json"], again.io, {})).toBe(0);
    expect(JSON.parse(again.out[0]!)).toMatchObject({ aid: "dora.acp.cli", agentMd: { aid: "dora.acp.cli", hash: "cd".repeat(32), text: "---\naid: dora.acp.cli\ntype: agent\n---\n# Dora\n" } });
  });

  it("import an SDK folder; show of an unknown aid is a usage error", async () => {
    const env = { ACP_SEED_PASSWORD: "pw" };
    const other = `${tmp.dir}/sdk`;
    await idCommand(["create", "bob.acp.cli", "--ap-url", net.localUrl, "--ca-file", net.caFile, "--state-dir", other], capture().io, env);
    const c = capture();
    expect(await idCommand(["import", "--sdk-dir", join(other, "identities", "bob.acp.cli"), "--state-dir", state()], c.io, env)).toBe(0);
    expect(c.out[0]).toBe(`imported bob.acp.cli into ${join(state(), "identities", "bob.acp.cli")}`);
    expect(readFileSync(join(state(), "identities", "bob.acp.cli", "public", "bob.acp.cli.crt"), "utf8")).toContain("BEGIN CERTIFICATE");
    const u = capture();
    expect(await main(["id", "show", "nobody.acp.cli", "--state-dir", state()], u.io)).toBe(2);
    expect(u.err[0]).toContain("no identity `nobody.acp.cli`");
  });

  it("an access point whose CA is not trusted: a clear error, no identity", async () => {
    const c = capture();
    const code = await main(["id", "create", "carol.acp.cli", "--ap-url", net.localUrl, "--no-passphrase", "--state-dir", state()], c.io);
    expect(code).toBe(1);
    expect(c.err).toEqual([`acp-group: certificate not trusted: pass --ca-file or set network.caFile (${net.localUrl}: SELF_SIGNED_CERT_IN_CHAIN); a local network's CA is the \`ca:\` line its server printed`]);
  });
});
