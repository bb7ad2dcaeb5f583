// The configuration reference of docs/configuration.md, generated from the zod schema the code
// validates with (src/config/schema.ts): every key with its type, default and `.describe()` text.
// The host manifest (openclaw.plugin.json) comes from the same schema, so the page names every key
// the host validates. A key without a description is an error here: describe it in the schema.
import { z } from "zod";
import { channelConfigSchema, groupSettingsSchema, identitySchema, llmSchema, networkSchema } from "../../src/config/schema.ts";

type Node = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Node>;
  additionalProperties?: Node | boolean;
  items?: Node | Node[];
  anyOf?: Node[];
  enum?: unknown[];
  description?: string;
  default?: unknown;
  required?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
};

export interface ConfigRow {
  /** Dotted path inside the section (`replyPolicy.maxCharsPerMessage`). */
  key: string;
  type: string;
  default: string;
  description: string;
}

export interface ConfigSection {
  title: string;
  /** Where the keys live, e.g. `identities.<id>.` ("" for the top level). */
  prefix: string;
  intro: string;
  rows: ConfigRow[];
}

const jsonSchema = (schema: z.ZodType): Node => z.toJSONSchema(schema, { target: "draft-7", io: "input" }) as Node;

const isObject = (n: Node): boolean => n.type === "object" && n.properties !== undefined;
const isRecord = (n: Node): boolean => n.type === "object" && n.properties === undefined && typeof n.additionalProperties === "object";

function range(n: Node): string {
  const lo = n.minimum ?? n.exclusiveMinimum;
  // z.number().int() without .max() is bounded by the largest safe integer: no bound worth printing.
  const hi = n.maximum !== undefined && n.maximum >= Number.MAX_SAFE_INTEGER ? undefined : n.maximum;
  if (lo === undefined && hi === undefined) return "";
  if (hi === undefined) return ` ≥ ${lo}`;
  if (lo === undefined) return ` ≤ ${hi}`;
  return ` ${lo}–${hi}`;
}

function typeOf(n: Node): string {
  if (n.anyOf) return n.anyOf.map(typeOf).join(" or ");
  if (n.enum) return n.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  switch (n.type) {
    case "boolean":
      return "boolean";
    case "integer":
      return `integer${range(n)}`;
    case "number":
      return `number${range(n)}`;
    case "string":
      return n.maxLength !== undefined ? `string ≤ ${n.maxLength}` : "string";
    case "array": {
      if (Array.isArray(n.items)) return `[${n.items.map(typeOf).join(", ")}]`;
      const item = n.items ? typeOf(n.items) : "any";
      return `${item.includes(" ") ? `(${item})` : item}[]${n.maxItems !== undefined ? ` ≤ ${n.maxItems}` : ""}`;
    }
    case "object":
      return isRecord(n) ? "map" : "object";
    default:
      return "any";
  }
}

/** The key's own default, else the one its parent's default gives it (budget windows), else required or none. */
function defaultOf(n: Node, inherited: unknown, required: boolean): string {
  if (n.default !== undefined) return JSON.stringify(n.default);
  if (inherited !== undefined) return JSON.stringify(inherited);
  return required ? "required" : "—";
}

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;

/**
 * Rows for every key under `node`, depth first, in the schema's order. Objects are flattened into
 * dotted keys; an object with a description gets a row of its own too. `stop` keeps the named keys
 * as one row (they have a section of their own).
 */
function rowsOf(node: Node, path: string, stop: ReadonlyMap<string, string>, missing: string[], inherited?: unknown): ConfigRow[] {
  const rows: ConfigRow[] = [];
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const key = path ? `${path}.${name}` : name;
    const own = child.default ?? field(inherited, name);
    const objectBranch = child.anyOf?.find(isObject);
    const section = stop.get(key);
    const flatten = section === undefined && (isObject(child) || objectBranch !== undefined);
    if (!flatten || child.description !== undefined) {
      if (child.description === undefined) missing.push(key);
      const dflt = section !== undefined ? `see ${section}` : flatten && isObject(child) ? (own === undefined ? "—" : "(below)") : defaultOf(child, own, required.has(name));
      rows.push({ key, type: typeOf(child), default: dflt, description: child.description ?? "" });
    }
    if (flatten) rows.push(...rowsOf(objectBranch ?? child, key, stop, missing, own));
  }
  return rows;
}

/** The sections of the reference, in page order. Throws when a key has no description. */
export function configSections(): ConfigSection[] {
  const missing: string[] = [];
  const top = jsonSchema(channelConfigSchema);
  const groupSchema = jsonSchema(groupSettingsSchema);
  const sections: ConfigSection[] = [
    {
      title: "top level",
      prefix: "",
      intro: "The object under `channels.acp-group` (OpenClaw) or the file `--config` names.",
      rows: rowsOf(top, "", new Map([["network", "[network](#network)"], ["llm", "[llm](#llm)"], ["identities", "[identities](#identities)"], ["groups", "[groups](#groups)"]]), missing),
    },
    {
      title: "network",
      prefix: "network.",
      intro: "Keys under `network`: TLS and key settings for the ACP network, shared by every identity.",
      rows: rowsOf(jsonSchema(networkSchema), "", new Map(), missing),
    },
    {
      title: "llm",
      prefix: "llm.",
      intro:
        "Keys under `llm`: the OpenAI-compatible model of standalone agents (`start`, `run`, `createGroupAgent()`); unused under OpenClaw, where the host's agent answers. Config wins over the environment.",
      rows: rowsOf(jsonSchema(llmSchema), "", new Map(), missing),
    },
    {
      title: "identities",
      prefix: "identities.<id>.",
      intro: "Keys under `identities.<id>`: one agent identity; `<id>` is its id (the OpenClaw account id).",
      rows: rowsOf(jsonSchema(identitySchema), "", new Map([["groups", "[groups](#groups)"]]), missing),
    },
    {
      title: "groups",
      prefix: "groups.<groupId>.",
      intro:
        "Keys under `groups.<groupId>` (`\"*\"` for every group) and `identities.<id>.groups.<groupId>` alike, every one optional. The default is what a group gets when no layer sets the key.",
      rows: rowsOf(groupSchema, "", new Map(), missing),
    },
  ];
  if (missing.length > 0) throw new Error(`src/config/schema.ts: describe these keys (.describe("…")): ${missing.join(", ")}`);
  return sections;
}

/** `<aid>`, `<stateDir>/…`: a word holding an angle-bracket placeholder is shown as code, so Markdown keeps it. */
function prose(text: string): string {
  return text
    .replace(/\|/g, "\\|")
    .split(" ")
    .map((w) => {
      if (!/<[^>\s]+>/.test(w) || w.includes("`")) return w;
      const [, lead, core, tail] = /^([(]*)(.*?)([.,;:)]*)$/.exec(w)!;
      return `${lead}\`${core}\`${tail}`;
    })
    .join(" ");
}

const code = (s: string) => (s === "—" || s === "required" || s === "(below)" || s.startsWith("see ") ? s : `\`${s.replace(/\|/g, "\\|")}\``);

/** The Markdown of the reference: one table per section. */
export function renderConfigReference(): string {
  const out: string[] = [];
  for (const s of configSections()) {
    out.push(`### ${s.title}`, "", s.intro, "", "| key | type | default | description |", "| --- | --- | --- | --- |");
    for (const r of s.rows) out.push(`| \`${r.key}\` | ${r.type.startsWith("\"") ? r.type.split(" \\| ").map(code).join(" \\| ") : code(r.type)} | ${code(r.default)} | ${prose(r.description)} |`);
    out.push("");
  }
  return out.join("\n").trimEnd();
}
