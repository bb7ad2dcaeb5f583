// Resolving every (identity, group) of a large config reads the identities record a constant
// number of times, not once per pair: a thousand identities in five groups must not cost a
// million look-ups. The record is wrapped in a Proxy that counts each full enumeration of it.
import { describe, expect, it } from "vitest";
import { listGroupsForIdentity, parseChannelConfig, resolveGroupSettings, resolveIdentityGroups } from "../../src/config/load.ts";
import type { ChannelConfig } from "../../src/types.ts";

function fleetConfig(n: number, groups: number): { config: ChannelConfig; enumerations: () => number } {
  const groupIds = Array.from({ length: groups }, (_, g) => `room-${g}`);
  const parsed = parseChannelConfig({
    groups: Object.fromEntries(groupIds.map((g) => [g, {}])),
    identities: Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`a${i}`, { aid: `a${i}.acp.test`, groups: i % 2 === 0 ? { "room-0": { bufferGateMs: 2000 } } : { "room-1": {} } }]),
    ),
  });
  let enumerations = 0;
  const identities = new Proxy(parsed.identities, {
    ownKeys(target) {
      enumerations++;
      return Reflect.ownKeys(target);
    },
  });
  return { config: { ...parsed, identities }, enumerations: () => enumerations };
}

describe("config resolution is linear in identities × groups", () => {
  it("every pair of 200 identities × 5 groups resolves with the identities enumerated at most once", () => {
    const { config, enumerations } = fleetConfig(200, 5);
    let pairs = 0;
    for (const identity of Object.values(config.identities)) {
      for (const groupId of listGroupsForIdentity(config, identity)) {
        resolveGroupSettings(config, identity, groupId);
        pairs++;
      }
    }
    expect(pairs).toBe(1000);
    // One Object.values above, one index built on the first look-up: never one per pair.
    expect(enumerations()).toBeLessThanOrEqual(2);
  });

  it("resolveIdentityGroups gives each enabled group with the settings resolveGroupSettings gives", () => {
    const { config } = fleetConfig(4, 3);
    const identity = config.identities.a0!;
    const resolved = resolveIdentityGroups(config, identity);
    expect([...resolved.keys()]).toEqual(["room-0", "room-1", "room-2"]);
    expect(resolved.get("room-0")!.bufferGateMs).toBe(2000);
    for (const [groupId, settings] of resolved) expect(settings).toEqual(resolveGroupSettings(config, identity, groupId));
  });

  it("an identity added to the record after the first look-up is still found (the index is rebuilt once)", () => {
    const parsed = parseChannelConfig({ groups: { lobby: { bufferGateMs: 4000, bufferGateMaxWaitMs: 5000 } }, identities: { a: { aid: "a.acp.test" } } });
    resolveGroupSettings(parsed, parsed.identities.a!, "lobby");
    // A late identity whose own layer breaks a cross-field rule: the error names its key.
    const late = { ...parsed.identities.a!, aid: "late.acp.test", groups: { lobby: { bufferGateMaxWaitMs: 1000 } } };
    parsed.identities.late = late as (typeof parsed.identities)["a"];
    expect(() => resolveGroupSettings(parsed, parsed.identities.late!, "lobby")).toThrow(/identities\.late\.groups\.lobby\.bufferGateMaxWaitMs/);
  });
});
