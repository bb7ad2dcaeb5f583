// `acp-group import-evol` and `id import --from-acp-ts` on identities laid out as the official SDK
// (acp-ts) lays them out — AIDs/<aid>/{private/<aid>.key under sha256-hex of the seed password,
// private/<aid>.csr, public/<aid>.crt}, groups/_index.json — certified by a real local network,
// with an OpenClaw config in JSON5 as evol's guide writes it. (The same path with identities the
// SDK itself made is test/conformance/evol-import.test.ts.)
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importEvolCommand } from "../../src/cli/import-evol.ts";
import { idCommand } from "../../src/cli/id.ts";
import { loadIdentity, createIdentity } from "../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { tempDir } from "../network/support.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s) }, out, err };
}

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

describe("import-evol (SDK-layout identities from a real local network, real files)", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let storage: string;
  let openclaw: string;
  const made = new Map<string, string>();

  /** An identity as acp-ts stores it: the key under sha256-hex(seed) ("" is the SDK's default). */
  async function sdkIdentity(aid: string, seed: string): Promise<void> {
    const id = await createIdentity({ aid, stateDir: join(tmp.dir, "made"), accessPointUrl: net.localUrl, noPassphrase: true, tls: { caFile: net.caFile } });
    const dir = join(storage, "AIDs", aid);
    mkdirSync(join(dir, "private"), { recursive: true });
    mkdirSync(join(dir, "public"), { recursive: true });
    writeFileSync(join(dir, "private", `${aid}.key`), id.privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: sha256hex(seed) }));
    writeFileSync(join(dir, "private", `${aid}.csr`), readFileSync(join(id.dir!, "private", `${aid}.csr`)));
    writeFileSync(join(dir, "public", `${aid}.crt`), id.certPem);
    made.set(aid, id.publicKeyPem);
  }

  beforeAll(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: "acp.evol", stateDir: join(tmp.dir, "net"), tls: true });
    storage = join(tmp.dir, "home", ".acp-storage");
    await sdkIdentity("work-bot.acp.evol", "w-seed");
    await sdkIdentity("home-bot.acp.evol", "");
    await sdkIdentity("spare.acp.evol", "");
    // The groups the SDK's group store recorded for work-bot: one here, one on another access point.
    mkdirSync(join(storage, "AIDs", "work-bot.acp.evol", "groups"), { recursive: true });
    writeFileSync(
      join(storage, "AIDs", "work-bot.acp.evol", "groups", "_index.json"),
      JSON.stringify([
        { groupId: "lobby", groupName: "The Lobby", targetAid: "group.acp.evol", lastMsgId: 12 },
        { groupId: "far", groupName: "far", targetAid: "group.other.example", lastMsgId: 3 },
      ]),
    );
    openclaw = join(tmp.dir, "home", ".openclaw", "openclaw.json");
    mkdirSync(join(tmp.dir, "home", ".openclaw"), { recursive: true });
    writeFileSync(
      openclaw,
      `// evol, several identities
{
  channels: { evol: {
    enabled: true, domain: "acp.evol",
    identities: {
      work: { agentId: "work-bot", seedPassword: "w-seed", ownerAid: "boss.acp.evol" },
      home: { agentId: "home-bot" },
      ghost: { agentId: "ghost" },
    },
  } },
}
`,
    );
  });
  afterAll(async () => {
    await net.close();
    tmp.cleanup();
  });

  const args = (config: string, state: string, ...extra: string[]) => ["--config", config, "--openclaw-config", openclaw, "--acp-storage", storage, "--state-dir", state, "--ap-url", net.localUrl, "--ca-file", net.caFile, ...extra];

  it("imports what evol names and the storage holds, writes the config run takes, names the one it could not find (exit 1)", async () => {
    const c = capture();
    const state = join(tmp.dir, "s1");
    const config = join(tmp.dir, "s1.json");
    expect(await importEvolCommand(args(config, state), c.io, {})).toBe(1);
    expect(c.out[0]).toBe(`channels.evol in ${openclaw}: work-bot.acp.evol, home-bot.acp.evol, ghost.acp.evol`);
    expect(c.out[1]).toBe(`imported work-bot.acp.evol from ${join(storage, "AIDs", "work-bot.acp.evol")} as identities.work → ${join(state, "identities", "work-bot.acp.evol")} (key kept under evol's seed password: set ACP_SEED_PASSWORD to it to run)`);
    expect(c.out[2]).toMatch(/^imported home-bot\.acp\.evol .* as identities\.home → .* \(key kept as the SDK stored it: under the SDK's default EMPTY seed password/);
    expect(c.out[3]).toBe(`wrote ${config}: 2 identities; groups work:lobby, work:far`);
    expect(c.err).toEqual([
      "acp-group: ghost.acp.evol (in the evol config) is not in the SDK's storage: not imported (pass --acp-storage DIR)",
      expect.stringMatching(/^acp-group: WARNING: evol still runs work-bot\.acp\.evol, home-bot\.acp\.evol, ghost\.acp\.evol \(channels\.evol\.enabled is true in /),
    ]);
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({
      identities: {
        work: { aid: "work-bot.acp.evol", owner: "boss.acp.evol", groups: { lobby: { subject: "The Lobby" }, far: { accessPoint: "other.example" } }, accessPointUrl: net.localUrl },
        home: { aid: "home-bot.acp.evol", accessPointUrl: net.localUrl },
      },
      network: { caFile: net.caFile },
      stateDir: state,
    });
    // The keys open as stored: work's with evol's seed password, home's without any (the SDK's default).
    expect(loadIdentity({ aid: "work-bot.acp.evol", stateDir: state, seedPassword: "w-seed" }).publicKeyPem).toBe(made.get("work-bot.acp.evol"));
    expect(loadIdentity({ aid: "home-bot.acp.evol", stateDir: state }).publicKeyPem).toBe(made.get("home-bot.acp.evol"));
    expect(statSync(join(state, "identities", "home-bot.acp.evol", "private", "home-bot.acp.evol.key")).mode & 0o777).toBe(0o600);
    // `join` and `chat` find the access point from there, as after `id create`.
    expect(JSON.parse(readFileSync(join(state, "identities", "work-bot.acp.evol", "access-point.json"), "utf8"))).toEqual({ accessPointUrl: net.localUrl, caFile: net.caFile });
  });

  it("with ACP_SEED_PASSWORD: every key re-encrypted with it; an existing config only with --force; --dry-run changes nothing", async () => {
    const state = join(tmp.dir, "s2");
    const config = join(tmp.dir, "s2.json");
    writeFileSync(config, "{}\n");
    const refused = capture();
    await expect(importEvolCommand(args(config, state), refused.io, { ACP_SEED_PASSWORD: "ours" })).rejects.toThrow(`${config} exists: give a new file, or --force to overwrite it`);
    const dry = capture();
    expect(await importEvolCommand(args(config, state, "--dry-run"), dry.io, { ACP_SEED_PASSWORD: "ours" })).toBe(1);
    expect(dry.out[1]).toBe(`would import work-bot.acp.evol from ${join(storage, "AIDs", "work-bot.acp.evol")} as identities.work`);
    expect(existsSync(join(state, "identities"))).toBe(false);
    expect(readFileSync(config, "utf8")).toBe("{}\n");
    const c = capture();
    expect(await importEvolCommand(args(config, state, "--force"), c.io, { ACP_SEED_PASSWORD: "ours" })).toBe(1);
    expect(c.out[1]).toMatch(/ \(key encrypted with ACP_SEED_PASSWORD\)$/);
    expect(c.out[2]).toMatch(/ \(key encrypted with ACP_SEED_PASSWORD\)$/);
    for (const aid of ["work-bot.acp.evol", "home-bot.acp.evol"]) {
      expect(loadIdentity({ aid, stateDir: state, seedPassword: "ours" }).publicKeyPem).toBe(made.get(aid));
      expect(() => loadIdentity({ aid, stateDir: state })).toThrow(/encrypted: set ACP_SEED_PASSWORD/);
    }
  });

  it("without an evol section: every identity of the storage, each under its first label", async () => {
    const state = join(tmp.dir, "s3");
    const bare = join(tmp.dir, "bare.json");
    writeFileSync(bare, "{ channels: { telegram: {} } }");
    const c = capture();
    expect(await importEvolCommand(["--config", join(tmp.dir, "s3.json"), "--openclaw-config", bare, "--acp-storage", storage, "--state-dir", state, "--seed-password", "w-seed"], c.io, {})).toBe(0);
    expect(c.out[0]).toBe(`${bare} has no channels.evol or channels.acp: importing the identities of the SDK's storage alone`);
    expect(c.out.filter((l) => l.startsWith("imported ")).map((l) => l.split(" ")[1])).toEqual(["home-bot.acp.evol", "spare.acp.evol", "work-bot.acp.evol"]);
    expect(Object.keys(JSON.parse(readFileSync(join(tmp.dir, "s3.json"), "utf8")).identities)).toEqual(["home-bot", "spare", "work-bot"]);
    expect(c.out).not.toContain("carried over:");
  });

  it("an identity already in our store under another key is never replaced (a network knows an aid by one key)", async () => {
    const state = join(tmp.dir, "s4");
    // Another network (its own CA) certified a different key for home-bot in our store.
    const net2 = await startLocalNetwork({ domain: "acp.evol", stateDir: join(tmp.dir, "net2"), tls: true });
    try {
      await createIdentity({ aid: "home-bot.acp.evol", stateDir: state, accessPointUrl: net2.localUrl, noPassphrase: true, tls: { caFile: net2.caFile } });
    } finally {
      await net2.close();
    }
    const before = readFileSync(join(state, "identities", "home-bot.acp.evol", "private", "home-bot.acp.evol.key"), "utf8");
    await expect(importEvolCommand(args(join(tmp.dir, "s4.json"), state), capture().io, {})).rejects.toThrow(
      `home-bot.acp.evol is in ${join(state, "identities", "home-bot.acp.evol")} already, with another key: move that folder away first (a network knows an aid by one key)`,
    );
    expect(readFileSync(join(state, "identities", "home-bot.acp.evol", "private", "home-bot.acp.evol.key"), "utf8")).toBe(before);
  });

  it("id import --from-acp-ts: a storage folder (all, or the aids named) or one identity's folder", async () => {
    const state = join(tmp.dir, "s5");
    const d = capture();
    expect(await idCommand(["import", "--from-acp-ts", storage, "work-bot.acp.evol", "--seed-password", "w-seed", "--state-dir", state], d.io, {})).toBe(0);
    expect(d.out[0]).toBe(`imported work-bot.acp.evol from ${join(storage, "AIDs", "work-bot.acp.evol")} into ${join(state, "identities", "work-bot.acp.evol")} (key kept under the seed password that opened it)`);
    expect(d.out[1]).toBe("subject:     C=CN, ST=SomeState, L=SomeCity, O=SomeOrganization, CN=work-bot.acp.evol");
    expect(existsSync(join(state, "identities", "home-bot.acp.evol"))).toBe(false);
    const e = capture();
    expect(await idCommand(["import", "--from-acp-ts", join(storage, "AIDs", "spare.acp.evol"), "--state-dir", state], e.io, {})).toBe(0);
    expect(e.out[0]).toMatch(/^imported spare\.acp\.evol .*\(key kept as the SDK stored it: under its default EMPTY seed password/);
    expect(loadIdentity({ aid: "spare.acp.evol", stateDir: state }).publicKeyPem).toBe(made.get("spare.acp.evol"));
    await expect(idCommand(["import", "--from-acp-ts", storage, "nobody.acp.evol", "--state-dir", state], capture().io, {})).rejects.toThrow(
      "nobody.acp.evol: not in",
    );
    // A key the seed passwords given do not open: named, nothing written.
    await expect(idCommand(["import", "--from-acp-ts", storage, "work-bot.acp.evol", "--state-dir", join(tmp.dir, "s6")], capture().io, {})).rejects.toThrow(/work-bot\.acp\.evol is encrypted/);
    expect(existsSync(join(tmp.dir, "s6", "identities", "work-bot.acp.evol"))).toBe(false);
  });
});
