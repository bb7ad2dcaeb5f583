// A secret in the config may be written as a reference instead of plain text, in the OpenClaw
// host's SecretRef shape: `{ "source": "env", "provider": "default", "id": "ACP_SEED_PASSWORD" }`
// (an environment variable) or `{ "source": "file", "provider": "default", "id": "/run/secrets/seed" }`
// (the file's text, trailing newline dropped). A host that resolves references first hands over the
// string: the OpenClaw gateway does (src/secret-contract-api.ts), through its own `secrets.providers`,
// and also resolves `exec` and `store`. Anything else resolves here, once, when the identity's key
// is opened; `exec` and `store` only the gateway can resolve.
import { readFileSync } from "node:fs";
import { z } from "zod";

export const secretRefSchema = z
  .object({
    source: z.enum(["env", "file", "exec", "store"]).describe("env: an environment variable; file: a file's contents; exec, store: resolved by the OpenClaw gateway only"),
    provider: z.string().min(1).default("default").describe("OpenClaw: the gateway's secrets.providers entry that resolves it"),
    id: z.string().min(1).describe("The variable's name, or the file's path"),
  })
  .strict();
export type SecretRef = z.infer<typeof secretRefSchema>;
export type SecretInput = string | SecretRef;

export class SecretRefError extends Error {
  readonly code = "SECRET_UNRESOLVED";
  readonly path: string;
  constructor(message: string, path: string) {
    super(message);
    this.name = "SecretRefError";
    this.path = path;
  }
}

/** The secret's text; undefined when the reference names an empty or unset variable. Throws naming `path` when a file cannot be read. */
export function resolveSecretInput(value: SecretInput | undefined, p: { path: string; env?: NodeJS.ProcessEnv }): string | undefined {
  if (value === undefined || typeof value === "string") return value;
  if (value.source === "env") return (p.env ?? process.env)[value.id] || undefined;
  if (value.source === "exec" || value.source === "store") {
    throw new SecretRefError(`${p.path}: a \`${value.source}\` reference is resolved by the OpenClaw gateway (secrets.providers.${value.provider}); here use an env or file reference, or ACP_SEED_PASSWORD`, p.path);
  }
  try {
    return readFileSync(value.id, "utf8").replace(/\r?\n$/, "") || undefined;
  } catch (err) {
    throw new SecretRefError(`${p.path}: cannot read the secret file ${value.id} (${(err as NodeJS.ErrnoException).code ?? String(err)})`, p.path);
  }
}

/** `network.seedPassword` (text or reference), else ACP_SEED_PASSWORD. */
export function resolveSeedPassword(network: { seedPassword?: SecretInput | undefined }, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return resolveSecretInput(network.seedPassword, { path: "network.seedPassword", env }) ?? (env.ACP_SEED_PASSWORD || undefined);
}
