import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { channelConfigSchema, groupOverridesSchema, identitySchema } from "../../src/config/schema.ts";
import { MANIFEST_PATH, UI_HINTS, buildManifest, renderManifest, stripDefaults } from "../../scripts/gen-manifest.ts";

type Node = Record<string, unknown>;
const committed = JSON.parse(readFileSync(MANIFEST_PATH, "utf8")) as Node;
const channelEntry = (committed.channelConfigs as Record<string, Node>)["acp-group"]!;
const schema = channelEntry.schema as Node;

/** The schema node for a config path; `*` is any key of a record. */
function nodeAt(root: Node, path: string): Node | undefined {
  let node: Node | undefined = root;
  for (const segment of path.split(".")) {
    if (!node) return undefined;
    if (segment === "*") node = node.additionalProperties as Node | undefined;
    else node = (node.properties as Record<string, Node> | undefined)?.[segment];
  }
  return node;
}

/** Every [path, node] pair in the schema, records as `*`. */
function walk(node: Node, path: string[] = []): Array<[string, Node]> {
  const out: Array<[string, Node]> = [[path.join("."), node]];
  for (const [k, v] of Object.entries((node.properties as Record<string, Node> | undefined) ?? {})) out.push(...walk(v, [...path, k]));
  if (typeof node.additionalProperties === "object" && node.additionalProperties) out.push(...walk(node.additionalProperties as Node, [...path, "*"]));
  if (typeof node.items === "object" && node.items && !Array.isArray(node.items)) out.push(...walk(node.items as Node, [...path, "[]"]));
  return out;
}

describe("openclaw.plugin.json", () => {
  it("is exactly what scripts/gen-manifest.ts generates from the zod schema (one source of truth)", () => {
    expect(readFileSync(MANIFEST_PATH, "utf8"), "openclaw.plugin.json is stale: run node scripts/gen-manifest.ts").toBe(renderManifest());
    expect(committed).toEqual(buildManifest());
  });

  it("declares the acp-group channel, an empty plugin config and a draft-07 channel schema", () => {
    expect(committed).toMatchObject({ id: "acp-group", channels: ["acp-group"] });
    expect(committed.configSchema).toEqual({ type: "object", additionalProperties: false, properties: {} });
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
  });

  it("has the zod schema's keys and rejects unknown keys at every object level", () => {
    expect(Object.keys(schema.properties as Node).sort()).toEqual(Object.keys(channelConfigSchema.shape).sort());
    expect(Object.keys(nodeAt(schema, "identities.*")!.properties as Node).sort()).toEqual(Object.keys(identitySchema.shape).sort());
    expect(Object.keys(nodeAt(schema, "groups.*")!.properties as Node).sort()).toEqual(Object.keys(groupOverridesSchema.shape).sort());
    const objects = walk(schema).filter(([, n]) => n.type === "object" && n.properties !== undefined);
    expect(objects.length).toBeGreaterThan(20);
    for (const [path, n] of objects) expect([path, n.additionalProperties]).toEqual([path, false]);
    expect(nodeAt(schema, "identities.*")!.required).toEqual(["aid"]);
  });

  it("carries no `default`: the host would write defaults into per-group overrides and clobber the \"*\" group", () => {
    expect(JSON.stringify(schema)).not.toContain('"default"');
  });

  it("marks every secret sensitive, and every uiHints key names a real config path", () => {
    for (const key of Object.keys(UI_HINTS)) expect([key, nodeAt(schema, key) !== undefined]).toEqual([key, true]);
    const secretPaths = walk(schema)
      // A secret may also be a reference (`anyOf` of the text and a SecretRef object): still a secret.
      .filter(([path, n]) => (n.type === "string" || (n.anyOf as Node[] | undefined)?.some((a) => a.type === "string") === true) && /(token|apikey|secret|password)$/i.test(path))
      .map(([path]) => path)
      .sort();
    expect(secretPaths).toEqual(["llm.apiKey", "network.seedPassword"]);
    const sensitive = Object.entries(channelEntry.uiHints as Record<string, { sensitive?: boolean }>)
      .filter(([, h]) => h.sensitive)
      .map(([k]) => k)
      .sort();
    expect(sensitive).toEqual(secretPaths);
  });
});

describe("stripDefaults", () => {
  it("drops the keyword, keeps config keys that happen to be named `default`", () => {
    const input = {
      type: "object",
      default: {},
      properties: { default: { type: "string", default: "x" }, n: { type: "integer", default: 3 } },
      additionalProperties: { type: "object", properties: { a: { default: 1, type: "number" } } },
      items: [{ default: 1 }],
      anyOf: [{ default: 2, type: "string" }],
      enum: [{ default: "value, not keyword" }],
      required: ["default"],
    };
    expect(stripDefaults(input)).toEqual({
      type: "object",
      properties: { default: { type: "string" }, n: { type: "integer" } },
      additionalProperties: { type: "object", properties: { a: { type: "number" } } },
      items: [{}],
      anyOf: [{ type: "string" }],
      enum: [{ default: "value, not keyword" }],
      required: ["default"],
    });
  });
});
