import { describe, expect, it } from "vitest";
import { parseChannelConfig } from "../../src/config/load.ts";

function problems(raw: unknown): string[] {
  try {
    parseChannelConfig(raw);
    return [];
  } catch (err) {
    return (err as { issues?: string[] }).issues ?? [String(err)];
  }
}

describe("config: agents and profile", () => {
  it("agents defaults to []; profile is optional and publishes by default", () => {
    const c = parseChannelConfig({ identities: { a: { aid: "alice.agentcp.io", profile: { tags: ["ops"] } } } });
    expect(c.agents).toEqual([]);
    expect(c.identities.a!.profile).toEqual({ publish: true, tags: ["ops"] });
    expect(parseChannelConfig({ identities: { a: { aid: "alice.agentcp.io" } } }).identities.a!.profile).toBeUndefined();
  });

  it("names the path of a sender listed as both human and agent, and of an owner listed as agent", () => {
    expect(problems({ humans: ["bob.agentcp.io"], agents: ["x.agentcp.io", "Bob.agentcp.io"] })).toEqual(["agents.1: `Bob.agentcp.io` is also listed in humans"]);
    expect(problems({ agents: ["carol.agentcp.io"], identities: { a: { aid: "alice.agentcp.io", owner: "carol.agentcp.io" } } })).toEqual([
      "agents.0: `carol.agentcp.io` is the owner of identities.a, and an owner is always human",
    ]);
  });

  it("rejects a profile file combined with generated-profile fields, unknown keys and bad values, by path", () => {
    expect(problems({ identities: { a: { aid: "alice.agentcp.io", profile: { file: "a.md", description: "x" } } } })).toEqual([
      "identities.a.profile: `file` cannot be combined with `description` or `tags` (the file is published as is)",
    ]);
    const unknown = problems({ identities: { a: { aid: "alice.agentcp.io", profile: { colour: "red" } } } });
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toContain("identities.a.profile");
    expect(unknown[0]).toContain("colour");
    const long = problems({ identities: { a: { aid: "alice.agentcp.io", profile: { tags: ["x".repeat(41)] } } } });
    expect(long).toHaveLength(1);
    expect(long[0]).toMatch(/^identities\.a\.profile\.tags\.0: /);
  });
});
