// The documentation cannot drift from the code unnoticed: every deterministic generated block of
// README.md and docs/*.md (config reference, CLI help, replay output of the bundled logs, the
// log-event index) equals what `npm run docs` writes today; every block has a generator; every key
// of the host manifest's schema (openclaw.plugin.json) has a row in docs/configuration.md; the
// README stays short. Live blocks (the demo transcript, the server banner) change on every run and
// are rewritten by `npm run docs` only.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blocksOf, docFiles, isDeterministic, renderDeterministic, REPO } from "../../scripts/docs/blocks.ts";
import { configSections } from "../../scripts/docs/config-reference.ts";

const read = (file: string) => readFileSync(join(REPO, file), "utf8");
const LIVE_BLOCKS = new Set(["demo-transcript", "server-banner"]);

describe("generated documentation blocks", () => {
  const blocks = docFiles().flatMap((f) => blocksOf(f));

  it("exist where the pages promise them (the scan is not vacuous)", () => {
    const names = blocks.map((b) => `${b.file} ${b.name}`);
    for (const expected of [
      "docs/configuration.md config-reference",
      "docs/cli.md cli-usage",
      "docs/cli.md cli-help:replay",
      "docs/cli.md replay-example",
      "docs/evaluation.md replay-suite",
      "docs/operations.md log-events",
      "README.md demo-transcript",
    ]) {
      expect(names).toContain(expected);
    }
  });

  it("each has a generator", () => {
    expect(blocks.filter((b) => !isDeterministic(b.name) && !LIVE_BLOCKS.has(b.name)).map((b) => `${b.file}: ${b.name}`)).toEqual([]);
  });

  it("a live block is never empty (npm run docs has filled it)", () => {
    for (const b of blocks.filter((b) => LIVE_BLOCKS.has(b.name))) expect(b.text.trim(), `${b.file}: ${b.name}`).not.toBe("");
  });

  for (const b of blocks.filter((b) => isDeterministic(b.name))) {
    it(`${b.file}: ${b.name} is what the code prints today (else run npm run docs)`, async () => {
      expect(b.text).toBe(await renderDeterministic(b.name));
    }, 30_000);
  }
});

/** Every key path of a JSON Schema node: `a`, `a.b`, records as `<*>`; a union's object branch flattened. */
function keyPaths(node: Record<string, unknown>, path: string): string[] {
  const out: string[] = [];
  const props = node.properties as Record<string, Record<string, unknown>> | undefined;
  for (const [name, child] of Object.entries(props ?? {})) {
    const key = path ? `${path}.${name}` : name;
    out.push(key);
    const branch = (child.anyOf as Array<Record<string, unknown>> | undefined)?.find((b) => b.properties !== undefined) ?? child;
    out.push(...keyPaths(branch, key));
    const values = child.additionalProperties;
    if (typeof values === "object" && values !== null) out.push(...keyPaths(values as Record<string, unknown>, `${key}.<*>`));
  }
  return out;
}

describe("docs/configuration.md", () => {
  const manifest = JSON.parse(read("openclaw.plugin.json")) as { channelConfigs: Record<string, { schema: Record<string, unknown> }> };
  const schema = Object.values(manifest.channelConfigs)[0]!.schema;
  const page = read("docs/configuration.md");

  it("has a row for every key of the host manifest's schema, each with a description", () => {
    // configSections() throws naming every key of src/config/schema.ts without a .describe().
    const documented = new Set(configSections().flatMap((s) => s.rows.map((r) => `${s.prefix}${r.key}`)));
    const keys = keyPaths(schema, "");
    expect(keys.length).toBeGreaterThan(100);
    // A group's keys are documented once, under groups.<groupId>: they are the same under an identity.
    const normalise = (k: string) =>
      k
        .replace(/^identities\.<\*>\.groups\.<\*>\./, "groups.<groupId>.")
        .replace(/^identities\.<\*>\./, "identities.<id>.")
        .replace(/^groups\.<\*>\./, "groups.<groupId>.");
    // An object whose keys have rows is documented by them (`budget.addressed.5m` by `budget.addressed.5m.messages`).
    const rows = [...documented];
    const missing = keys
      .map(normalise)
      .filter((k) => !k.endsWith("<*>") && !documented.has(k) && !rows.some((r) => r.startsWith(`${k}.`)));
    expect(missing).toEqual([]);
  });

  it("shows every documented key on the page, with its description", () => {
    for (const s of configSections()) {
      for (const r of s.rows) {
        expect(r.description, `${s.prefix}${r.key}`).not.toBe("");
        expect(page).toContain(`| \`${r.key}\` |`);
      }
    }
  });
});

describe("README.md", () => {
  const readme = read("README.md");

  it("is at most 300 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
  });

  it("links every page of docs/, and every link into docs/ names a page that exists", () => {
    const pages = docFiles().filter((f) => f.startsWith("docs/"));
    expect(pages.length).toBeGreaterThanOrEqual(9);
    for (const p of pages) expect(readme, p).toContain(`](${p})`);
    const linked = [...readme.matchAll(/\]\((docs\/[^)#]+)(#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(linked.filter((l) => !pages.includes(l) && !l.endsWith(".png"))).toEqual([]);
  });

  it("names the test command CI runs (.ci/run)", () => {
    expect(readme).toMatch(/^npm test\b/m);
    expect(read(".ci/run")).toMatch(/^npm test\b/m);
    expect(readme).toMatch(/^npm install\b/m);
    expect(read(".ci/run")).toMatch(/^npm install\b/m);
  });
});
