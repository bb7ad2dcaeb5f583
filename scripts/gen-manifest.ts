// Generates openclaw.plugin.json from the zod schema the code validates with (one source of truth).
//   node scripts/gen-manifest.ts           write openclaw.plugin.json
//   node scripts/gen-manifest.ts --check   exit 1 if the committed file is stale
// test/openclaw/manifest.test.ts regenerates it in memory and compares with the committed file.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { channelConfigSchema } from "../src/config/schema.ts";
import { ACP_GROUP_CHANNEL_ID, ACP_GROUP_CHANNEL_META } from "../src/openclaw/host-calls.ts";

export const MANIFEST_PATH = fileURLToPath(new URL("../openclaw.plugin.json", import.meta.url));

type UiHint = { label?: string; help?: string; placeholder?: string; sensitive?: boolean; advanced?: boolean };

// Keys are config paths under channels.acp-group; `*` stands for any identity or group id.
export const UI_HINTS: Record<string, UiHint> = {
  stateDir: { label: "State directory", help: "Per-group state (cursor, budgets, recent replies); default <OpenClaw state dir>/acp-group/state", advanced: true },
  humans: { label: "Human senders", help: "Sender aids treated as people for the bot-loop guard (owners always are)" },
  agents: { label: "Agent senders", help: "Sender aids treated as agents, whatever the group service or their agent.md says" },
  identities: { label: "Identities", help: "One account per agent identity; the key is the account id" },
  "identities.*.aid": { label: "Agent id", placeholder: "alice.agentcp.io" },
  "identities.*.name": { label: "Display name", help: "Also a mention keyword" },
  "identities.*.aliases": { label: "Aliases", help: "More mention keywords (at least 2 characters each)" },
  "identities.*.identityDir": { label: "Identity folder", help: "Holds private/<aid>.key and public/<aid>.crt (the official SDK's layout); default <stateDir>/identities/<aid>", advanced: true },
  "identities.*.keyFile": { label: "Key file", help: "Private key PEM, with certFile (instead of an identity folder)", advanced: true },
  "identities.*.certFile": { label: "Certificate file", help: "Certificate PEM, with keyFile", advanced: true },
  "identities.*.accessPoint": { label: "Access point", placeholder: "agentcp.io", help: "Domain of the access point; default: the aid's domain" },
  "identities.*.accessPointUrl": { label: "Access point URL", placeholder: "https://acp3.agentcp.io", help: "Instead of accessPoint, e.g. a local network", advanced: true },
  network: { label: "Network", help: "TLS and key settings for the ACP network", advanced: true },
  "network.caFile": { label: "Extra CA file", help: "PEM of a private CA to trust, e.g. a local network's ca.crt" },
  "network.insecureTls": { label: "Skip TLS verification", help: "Development only; logged at warn" },
  "network.seedPassword": { label: "Seed password", help: "Unlocks encrypted identity keys; else ACP_SEED_PASSWORD", sensitive: true },
  "identities.*.owner": { label: "Owner", help: "aid of the person who owns this agent" },
  "identities.*.profile": { label: "Public profile (agent.md)", help: "Generated from name, persona, description and tags, or read from a file; published after sign-in when it changed", advanced: true },
  "identities.*.groups": { label: "Per-group settings for this identity", help: "Same keys as groups; \"*\" applies to every group", advanced: true },
  groups: { label: "Per-group settings", help: "Keyed by group id; \"*\" is the default for every group. A named group is joined by every identity." },
  llm: { label: "Model (standalone mode)", help: "Unused under OpenClaw: the host's agent and model answer", advanced: true },
  "llm.apiKey": { label: "API key", help: "Standalone mode only; else OPENAI_API_KEY", sensitive: true },
  logLevel: { label: "Log level", advanced: true },
};

type SchemaNode = Record<string, unknown>;
const isNode = (v: unknown): v is SchemaNode => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Removes every `default` keyword. The host validates channels.acp-group with this schema *and*
 * writes the schema's defaults into the config it hands the plugin; inside per-group overrides that
 * would turn "not set here" into "set to the default" and clobber the "*" group's values. The
 * plugin applies its defaults itself (zod), so the host must pass the user's config through as is.
 */
export function stripDefaults(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripDefaults);
  if (!isNode(node)) return node;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "default") continue;
    if (key === "properties" || key === "definitions" || key === "$defs" || key === "patternProperties") {
      // Maps from names to schemas: the names are config keys, not keywords.
      out[key] = isNode(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stripDefaults(v)])) : value;
    } else if (key === "enum" || key === "const" || key === "required" || key === "examples") {
      out[key] = value;
    } else {
      out[key] = stripDefaults(value);
    }
  }
  return out;
}

export function buildManifest(): Record<string, unknown> {
  const schema = stripDefaults(z.toJSONSchema(channelConfigSchema, { target: "draft-7", io: "input" }));
  return {
    id: ACP_GROUP_CHANNEL_ID,
    name: ACP_GROUP_CHANNEL_META.label,
    description: ACP_GROUP_CHANNEL_META.blurb,
    channels: [ACP_GROUP_CHANNEL_ID],
    activation: { onStartup: true },
    // Plugin-level config (plugins.entries.acp-group.config): everything lives under channels.acp-group.
    configSchema: { type: "object", additionalProperties: false, properties: {} },
    channelConfigs: {
      [ACP_GROUP_CHANNEL_ID]: {
        label: ACP_GROUP_CHANNEL_META.label,
        description: ACP_GROUP_CHANNEL_META.selectionLabel,
        schema,
        uiHints: UI_HINTS,
      },
    },
  };
}

export function renderManifest(): string {
  return JSON.stringify(buildManifest(), null, 2) + "\n";
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const next = renderManifest();
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(MANIFEST_PATH, "utf8");
    } catch {
      current = "";
    }
    if (current !== next) {
      console.error(`${MANIFEST_PATH} is stale: run node scripts/gen-manifest.ts`);
      process.exit(1);
    }
    console.log(`${MANIFEST_PATH} is up to date`);
  } else {
    writeFileSync(MANIFEST_PATH, next);
    console.log(`wrote ${MANIFEST_PATH}`);
  }
}
