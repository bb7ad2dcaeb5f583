// What the host's doctor, security audit and tool policy get from us, against real files: an
// identity folder with a key and a certificate issued by a real local CA (one planted expired).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectAcpGroupDoctorWarnings, collectAcpGroupSecurityWarnings, resolveAcpGroupToolPolicy } from "../../src/openclaw/admin.ts";
import { identityPaths } from "../../src/network/identity-store.ts";
import { generateIdentityKey, toCryptoKeys } from "../../src/network/x509.ts";
import { openLocalCa } from "../../src/server/network/local-ca.ts";

const DAY = 86_400_000;
let root: string;
let stateDir: string;
const NOW = Date.now();

/** Writes a key and a certificate valid from `from` for `days` into the state dir's identity folder. */
async function plantIdentity(aid: string, from: number, days: number): Promise<void> {
  const ca = await openLocalCa({ dir: join(root, "ca"), domain: "acp.local", now: NOW - 800 * DAY });
  const { privateKey } = generateIdentityKey();
  const certPem = await ca.issue({ aid, publicKey: toCryptoKeys(privateKey).publicKey, now: from, days });
  const paths = identityPaths({ aid, stateDir });
  mkdirSync(join(paths.dir, "private"), { recursive: true });
  mkdirSync(join(paths.dir, "public"), { recursive: true });
  writeFileSync(paths.key, privateKey.export({ type: "pkcs8", format: "pem" }).toString());
  writeFileSync(paths.cert, certPem);
}

const cfgWith = (section: Record<string, unknown>) => ({ channels: { "acp-group": section } });

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "acp-admin-"));
  stateDir = join(root, "state");
  // Expired five days ago; valid for another 200 days; expiring in 10 days.
  await plantIdentity("old.acp.local", NOW - 400 * DAY, 395);
  await plantIdentity("good.acp.local", NOW - DAY, 200);
  await plantIdentity("soon.acp.local", NOW - 385 * DAY, 395);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("doctor (collectPreviewWarnings)", () => {
  it("an expired certificate is reported with the command that renews it; a valid one is not", () => {
    const cfg = cfgWith({ stateDir, identities: { old: { aid: "old.acp.local", accessPointUrl: "https://127.0.0.1:4433", owner: "me.acp.local" }, good: { aid: "good.acp.local", accessPointUrl: "https://127.0.0.1:4433" } } });
    const lines = collectAcpGroupDoctorWarnings({ cfg, stateDir: "/unused", env: {}, now: NOW });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^- channels\.acp-group\.identities\.old \(old\.acp\.local\): the certificate expired on \d{4}-\d\d-\d\dT/);
    expect(lines[0]).toContain(`\`acp-group id renew old.acp.local --state-dir ${stateDir} --ap-url https://127.0.0.1:4433\``);
  });

  it("expiring soon, missing identity, insecureTls and a configured group never joined: each with its fix", () => {
    const cfg = cfgWith({
      stateDir,
      network: { insecureTls: true },
      identities: { soon: { aid: "soon.acp.local", accessPointUrl: "https://127.0.0.1:4433" }, none: { aid: "none.acp.local", accessPointUrl: "https://127.0.0.1:4433" } },
      groups: { lobby: {} },
    });
    const lines = collectAcpGroupDoctorWarnings({ cfg, stateDir: "/unused", env: {}, now: NOW });
    expect(lines).toEqual([
      expect.stringContaining("network.insecureTls is on"),
      expect.stringMatching(/identities\.soon .*expires on .* \(9 days\)\. Renew it \(same key\): `acp-group id renew soon\.acp\.local/),
      expect.stringContaining("group lobby is configured but the identity has not been in it yet. Join it: `acp-group join <invite link> --identity soon.acp.local"),
      expect.stringContaining(`identities.none (none.acp.local): no key and certificate in ${join(stateDir, "identities", "none.acp.local")}. Create them: \`acp-group id create none.acp.local`),
      expect.stringContaining("group lobby is configured but the identity has not been in it yet"),
    ]);
  });

  it("an encrypted key without the password: says which setting opens it", () => {
    const aid = "locked.acp.local";
    const { privateKey } = generateIdentityKey();
    const paths = identityPaths({ aid, stateDir });
    mkdirSync(join(paths.dir, "private"), { recursive: true });
    mkdirSync(join(paths.dir, "public"), { recursive: true });
    writeFileSync(paths.key, privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "pw" }).toString());
    writeFileSync(paths.cert, "not used");
    const lines = collectAcpGroupDoctorWarnings({ cfg: cfgWith({ stateDir, identities: { l: { aid } } }), stateDir, env: {}, now: NOW });
    expect(lines).toEqual([expect.stringContaining("the key does not open (The key of locked.acp.local is encrypted: set ACP_SEED_PASSWORD")]);
  });
});

describe("tool policy (groups.resolveToolPolicy)", () => {
  const cfg = cfgWith({
    identities: { bot: { aid: "bot.acp.local", owner: "me.acp.local" } },
    groups: { open: {}, team: { allowFrom: ["*.team.example"] }, lab: { tools: { allow: ["web_search"] } } },
  });
  it("a group where anyone may talk gets no tools; a closed group keeps the host's policy; a group's own tools win", () => {
    expect(resolveAcpGroupToolPolicy({ cfg, accountId: "bot", groupId: "open" })).toEqual({ deny: ["*"] });
    expect(resolveAcpGroupToolPolicy({ cfg, accountId: "bot", groupId: "never-configured" })).toEqual({ deny: ["*"] });
    expect(resolveAcpGroupToolPolicy({ cfg, accountId: "bot", groupId: "team" })).toBeUndefined();
    expect(resolveAcpGroupToolPolicy({ cfg, accountId: "bot", groupId: "lab" })).toEqual({ allow: ["web_search"] });
  });
  it("a config that does not parse never opens the tools", () => {
    expect(resolveAcpGroupToolPolicy({ cfg: cfgWith({ groups: { g: { bufferGateMs: -1 } } }), groupId: "g" })).toEqual({ deny: ["*"] });
  });
});

describe("security warnings (security.collectWarnings)", () => {
  it("no owner, insecureTls, and an open group with tools are each named", () => {
    const cfg = cfgWith({ network: { insecureTls: true }, identities: { bot: { aid: "bot.acp.local" } }, groups: { lab: { tools: { allow: ["exec"] } }, team: { allowFrom: ["a.acp.local"], tools: { allow: ["exec"] } } } });
    expect(collectAcpGroupSecurityWarnings({ cfg, accountId: "bot" })).toEqual([
      expect.stringContaining("identities.bot: no owner set"),
      expect.stringContaining("insecureTls is on"),
      expect.stringContaining("commands.ownerAllowFrom is empty"),
      expect.stringContaining("channels.acp-group.groups.lab: open group (no allowFrom) whose tools allow exec"),
    ]);
    const safe = { ...cfgWith({ identities: { bot: { aid: "bot.acp.local", owner: "me.acp.local" } }, groups: { lab: {} } }), commands: { ownerAllowFrom: ["acp-group:me.acp.local"] } };
    expect(collectAcpGroupSecurityWarnings({ cfg: safe, accountId: "bot" })).toEqual([]);
  });

  it("direct messages: an open policy is named; under the host's pairing, an empty commands.ownerAllowFrom is named with the command that fixes it", () => {
    const open = cfgWith({ identities: { bot: { aid: "bot.acp.local", owner: "me.acp.local", dmPolicy: "open" } }, groups: { lab: {} } });
    expect(collectAcpGroupSecurityWarnings({ cfg: open, accountId: "bot" })).toEqual([expect.stringContaining("identities.bot.dmPolicy is open: anyone on the network may message the agent directly")]);
    const pairing = cfgWith({ identities: { bot: { aid: "bot.acp.local", owner: "me.acp.local" } }, groups: { lab: {} } });
    expect(collectAcpGroupSecurityWarnings({ cfg: pairing, accountId: "bot" })).toEqual([
      "commands.ownerAllowFrom is empty: the first sender approved with `openclaw pairing approve acp-group` becomes the host's command owner; openclaw config set commands.ownerAllowFrom '[\"acp-group:me.acp.local\"]'.",
    ]);
    const allowlist = cfgWith({ identities: { bot: { aid: "bot.acp.local", owner: "me.acp.local", dmPolicy: "allowlist" } }, groups: { lab: {} } });
    expect(collectAcpGroupSecurityWarnings({ cfg: allowlist, accountId: "bot" })).toEqual([]);
  });
});

describe("setup flags", () => {
  it("package.json openclaw.channel.setup.fields is the projection of the setup contract's fields (the host reads it without loading the plugin)", async () => {
    const { readFileSync } = await import("node:fs");
    const { ACP_GROUP_SETUP_FIELDS } = await import("../../src/openclaw/setup.ts");
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { openclaw: { channel: { setup: { fields: unknown[] } } } };
    expect(pkg.openclaw.channel.setup.fields).toEqual(Object.entries(ACP_GROUP_SETUP_FIELDS).map(([key, f]) => ({ key, ...f })));
    // The host's rule: each key is the camelCased long flag.
    for (const [key, f] of Object.entries(ACP_GROUP_SETUP_FIELDS)) {
      const flag = /^--([a-z-]+)/.exec(f.cli.flags)![1]!;
      expect(flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())).toBe(key);
    }
  });
});

describe("doctor with a password only the gateway resolves (exec/store reference)", () => {
  it("reports the expired certificate and no false key finding: the doctor cannot open the key outside the gateway", () => {
    const cfg = cfgWith({
      stateDir,
      network: { seedPassword: { source: "exec", provider: "vault", id: "acp/seed" } },
      identities: { old: { aid: "old.acp.local", accessPointUrl: "https://127.0.0.1:4433" }, good: { aid: "good.acp.local", accessPointUrl: "https://127.0.0.1:4433" } },
    });
    const lines = collectAcpGroupDoctorWarnings({ cfg, stateDir: "/unused", env: {}, now: NOW });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^- channels\.acp-group\.identities\.old \(old\.acp\.local\): the certificate expired on /);
  });
});
