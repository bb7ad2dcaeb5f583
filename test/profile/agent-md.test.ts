import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  AGENT_MD_MAX_BYTES,
  agentMdHash,
  buildAgentMd,
  checkAgentMd,
  descriptionFromPersona,
  loadAgentMdFile,
  packageVersion,
  parseAgentMd,
  ProfileError,
} from "../../src/profile/agent-md.ts";

describe("buildAgentMd", () => {
  it("writes the front matter fields, then a # heading and a short body", () => {
    const text = buildAgentMd({ aid: "alice.agentcp.io", name: "Alice", description: "Backend engineer on call.", tags: ["ops", "rust"], version: "0.1.0" });
    expect(text.split("\n").slice(0, 13)).toEqual([
      "---",
      'aid: "alice.agentcp.io"',
      'name: "Alice"',
      "type: agent",
      'version: "0.1.0"',
      'description: "Backend engineer on call."',
      "tags:",
      '  - "ops"',
      '  - "rust"',
      "---",
      "",
      "# Alice",
      "",
    ]);
    expect(text).toContain("Backend engineer on call.\n");
  });

  it("takes the description from the persona's first sentence when none is configured, and the aid's user part as name", () => {
    const text = buildAgentMd({ aid: "bob.agentcp.io", persona: "You are Bob, a careful reviewer. You never merge on Fridays.", version: "1.2.3" });
    const p = parseAgentMd(text);
    expect(p).toMatchObject({ aid: "bob.agentcp.io", name: "bob", type: "agent", version: "1.2.3", description: "You are Bob, a careful reviewer.", tags: [] });
    expect(text).toContain("\n# bob\n");
  });

  it("keeps a name with a colon, quotes or a line break inside one front matter value", () => {
    const text = buildAgentMd({ aid: "x.agentcp.io", name: 'Ev"il: name\n---\ntype: human', version: "0.1.0" });
    const p = parseAgentMd(text);
    expect(p.type).toBe("agent");
    expect(p.name).toBe('Ev"il: name --- type: human');
  });

  it("never exceeds 4 KB, even with the longest configured fields (CJK description, 20 long tags)", () => {
    const text = buildAgentMd({ aid: "a.agentcp.io", name: "名".repeat(100), description: "长".repeat(500), tags: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(40, "标")), version: "0.1.0" });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(AGENT_MD_MAX_BYTES);
    expect(checkAgentMd(text, { aid: "a.agentcp.io" }).ok).toBe(true);
  });

  it("property: whatever the fields, the result parses back to its aid, name, type and tags", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), fc.array(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 20 }), fc.string({ maxLength: 500 }), (name, tags, description) => {
        const text = buildAgentMd({ aid: "p.agentcp.io", name, tags, description, version: "0.1.0" });
        const p = parseAgentMd(text);
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(AGENT_MD_MAX_BYTES);
        expect(p.aid).toBe("p.agentcp.io");
        expect(p.type).toBe("agent");
        expect(p.name).toBeDefined();
        expect(p.tags.length).toBeLessThanOrEqual(tags.length);
      }),
    );
  });

  it("the package version is the one in package.json", () => {
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("descriptionFromPersona", () => {
  it("cuts at the first sentence of the first line, Latin or Chinese punctuation", () => {
    expect(descriptionFromPersona("You are Alice. You like Rust.")).toBe("You are Alice.");
    expect(descriptionFromPersona("你是小爱。你喜欢猫。")).toBe("你是小爱。");
    expect(descriptionFromPersona("First line without stop\nsecond line")).toBe("First line without stop");
    expect([...descriptionFromPersona("x".repeat(1000))]).toHaveLength(200);
  });
});

describe("parseAgentMd", () => {
  it("reads the SDK's layout with CRLF line ends, a BOM, block tags and single quotes", () => {
    const text = "\uFEFF---\r\naid: carol.agentcp.io\r\nname: 'Carol O''Neil'\r\ntype: human\r\nversion: 1.0\r\ndescription: Owner of alice # a comment\r\ntags:\r\n  - people\r\n  - \"ops\"\r\n---\r\n\r\n# Carol\r\n";
    expect(parseAgentMd(text)).toEqual({
      aid: "carol.agentcp.io",
      name: "Carol O'Neil",
      type: "human",
      version: "1.0",
      description: "Owner of alice",
      tags: ["people", "ops"],
      hasFrontMatter: true,
      declaredType: "human",
    });
  });

  it("reads flow-style tags and is case-insensitive about the type", () => {
    expect(parseAgentMd("---\ntype: Agent\ntags: [a, 'b', \"c\"]\n---\n")).toMatchObject({ type: "agent", tags: ["a", "b", "c"] });
  });

  it("the agent's framework as its type (evol writes `type: openclaw`) is an agent, kept as written", () => {
    expect(parseAgentMd("---\naid: evol.agentcp.io\ntype: openclaw\n---\n")).toMatchObject({ type: "agent", declaredType: "openclaw" });
    expect(parseAgentMd("---\ntype: robot\n---\n")).toMatchObject({ type: "agent", declaredType: "robot" });
    expect(checkAgentMd("---\naid: evol.agentcp.io\ntype: openclaw\n---\n", { aid: "evol.agentcp.io" })).toMatchObject({ ok: true, parsed: { type: "agent" } });
  });

  it("missing fields, no front matter, an unclosed one, a role or an empty type → unknown, never a throw", () => {
    expect(parseAgentMd("")).toEqual({ type: "unknown", tags: [], hasFrontMatter: false });
    expect(parseAgentMd("# Just a heading\n")).toEqual({ type: "unknown", tags: [], hasFrontMatter: false });
    expect(parseAgentMd("---\naid: x.agentcp.io\n")).toEqual({ type: "unknown", tags: [], hasFrontMatter: false });
    expect(parseAgentMd("---\ntype: member\n---\n")).toMatchObject({ type: "unknown", hasFrontMatter: true });
    expect(parseAgentMd("---\n---\n")).toMatchObject({ type: "unknown", hasFrontMatter: true });
  });

  it("property: never throws on any input", () => {
    fc.assert(fc.property(fc.string({ maxLength: 500 }), (s) => void parseAgentMd(`---\n${s}\n---\n`)));
  });
});

describe("checkAgentMd", () => {
  it("names the problem: too large, no front matter, bad type, other aid", () => {
    const big = `---\naid: a.agentcp.io\ntype: agent\n---\n${"x".repeat(AGENT_MD_MAX_BYTES)}`;
    expect(checkAgentMd(big)).toMatchObject({ ok: false, problem: "too-large" });
    expect(checkAgentMd("# hi")).toMatchObject({ ok: false, problem: "no-front-matter" });
    expect(checkAgentMd("---\naid: a.agentcp.io\n---\n")).toMatchObject({ ok: false, problem: "bad-type" });
    expect(checkAgentMd("---\naid: b.agentcp.io\ntype: agent\n---\n", { aid: "a.agentcp.io" })).toEqual({
      ok: false,
      problem: "aid-mismatch",
      detail: "expected aid a.agentcp.io, got b.agentcp.io",
    });
    expect(checkAgentMd("---\naid: A.agentcp.io\ntype: agent\n---\n", { aid: "a.agentcp.io" }).ok).toBe(true);
  });
});

describe("agentMdHash", () => {
  it("is stable for the same text and differs when one byte changes", () => {
    expect(agentMdHash("a")).toBe(agentMdHash("a"));
    expect(agentMdHash("a")).not.toBe(agentMdHash("b"));
    expect(agentMdHash("a")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("loadAgentMdFile (real files)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agentmd-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("returns a valid file as is", () => {
    const file = join(dir, "agent.md");
    writeFileSync(file, "---\naid: alice.agentcp.io\ntype: agent\n---\n# Alice\n");
    expect(loadAgentMdFile(file, "alice.agentcp.io")).toBe("---\naid: alice.agentcp.io\ntype: agent\n---\n# Alice\n");
  });

  it("a missing file or an invalid one is a ProfileError whose message starts with the path", () => {
    const missing = join(dir, "nope.md");
    expect(() => loadAgentMdFile(missing, "alice.agentcp.io")).toThrow(`${missing}: cannot read agent.md: ENOENT`);
    const bad = join(dir, "bad.md");
    writeFileSync(bad, "# no front matter\n");
    try {
      loadAgentMdFile(bad, "alice.agentcp.io");
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ProfileError);
      expect(err).toMatchObject({ code: "PROFILE_INVALID", file: bad, problem: "no-front-matter" });
      expect((err as Error).message).toBe(`${bad}: invalid agent.md: expected YAML front matter between two \`---\` lines at the start`);
    }
    const big = join(dir, "big.md");
    writeFileSync(big, `---\ntype: agent\n---\n${"y".repeat(5000)}`);
    expect(() => loadAgentMdFile(big, "alice.agentcp.io")).toThrow(`${big}: invalid agent.md: expected at most 4096 bytes, got 5020`);
  });
});
