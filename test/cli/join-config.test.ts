// What `join` writes: a config file created when missing, extended when present (its own settings
// kept), one that always loads; and the access point `id create` remembers beside an identity.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../src/config/load.ts";
import { addJoinToConfig, readIdentityAccess, recordIdentityAccess } from "../../src/cli/join-config.ts";
import { tempDir } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});
const dir = () => {
  const d = tempDir("join-config");
  dirs.push(d);
  return d.dir;
};

describe("addJoinToConfig", () => {
  it("creates the file with the identity, the group, the access point URL, the CA and the state dir; a second join adds nothing", () => {
    const d = dir();
    const file = join(d, "sub", "dave.json");
    const entry = { aid: "dave.example.test", groupId: "lobby", groupAccessPoint: "example.test", accessPointUrl: "https://acp3.example.test:8443", caFile: join(d, "ca.crt"), stateDir: d };
    expect(addJoinToConfig(file, entry)).toEqual({
      identityId: "dave",
      created: true,
      added: ["identity dave (dave.example.test)", "group lobby", `network.caFile ${join(d, "ca.crt")}`, `stateDir ${d}`],
    });
    const config = loadConfigFile(file);
    expect(config.identities.dave).toMatchObject({ aid: "dave.example.test", accessPointUrl: "https://acp3.example.test:8443" });
    expect(config.network.caFile).toBe(join(d, "ca.crt"));
    expect(config.stateDir).toBe(d);
    const before = readFileSync(file, "utf8");
    expect(addJoinToConfig(file, entry)).toEqual({ identityId: "dave", created: false, added: [] });
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("adds to an existing file and keeps what is there; the default access point is not written; a group elsewhere names its access point", () => {
    const d = dir();
    const file = join(d, "config.json");
    writeFileSync(file, JSON.stringify({ humans: ["sam"], identities: { dave: { aid: "dave.agentcp.io", name: "Dave" } }, groups: { "*": { cooldownMs: 5 } }, network: { caFile: "/keep/me.crt" } }));
    const result = addJoinToConfig(file, { aid: "dave.agentcp.io", groupId: "g1", groupAccessPoint: "other.example", accessPointUrl: "https://acp3.agentcp.io", caFile: "/other.crt" });
    expect(result).toEqual({ identityId: "dave", created: false, added: ["group g1"] });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      humans: ["sam"],
      identities: { dave: { aid: "dave.agentcp.io", name: "Dave" } },
      groups: { "*": { cooldownMs: 5 }, g1: { accessPoint: "other.example" } },
      network: { caFile: "/keep/me.crt" },
    });
  });

  it("a second identity whose first label is taken is keyed by its aid", () => {
    const d = dir();
    const file = join(d, "config.json");
    writeFileSync(file, JSON.stringify({ identities: { dave: { aid: "dave.agentcp.io" } } }));
    expect(addJoinToConfig(file, { aid: "dave.example.test", groupId: "lobby", groupAccessPoint: "example.test" }).identityId).toBe("dave.example.test");
    expect(Object.keys(loadConfigFile(file).identities)).toEqual(["dave", "dave.example.test"]);
  });

  it("refuses to write a file that would not load, and leaves the old one", () => {
    const d = dir();
    const file = join(d, "config.json");
    writeFileSync(file, JSON.stringify({ identities: { dave: { aid: "dave.agentcp.io" } }, groups: { lobby: { cooldownMs: -1 } } }));
    const before = readFileSync(file, "utf8");
    expect(() => addJoinToConfig(file, { aid: "dave.agentcp.io", groupId: "g2", groupAccessPoint: "agentcp.io" })).toThrow(/cooldownMs/);
    expect(readFileSync(file, "utf8")).toBe(before);
  });
});

describe("identity access record", () => {
  it("round-trips the access point URL and the CA (made absolute); nothing recorded → undefined", () => {
    const d = dir();
    mkdirSync(join(d, "identities"), { recursive: true });
    expect(readIdentityAccess(d, "dave.example.test")).toBeUndefined();
    recordIdentityAccess(d, "dave.example.test", { accessPointUrl: "https://acp3.example.test:1234", caFile: join(d, "ca.crt") });
    expect(readIdentityAccess(d, "dave.example.test")).toEqual({ accessPointUrl: "https://acp3.example.test:1234", caFile: join(d, "ca.crt") });
  });
});
