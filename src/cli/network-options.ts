// `--domain/--port/--tls`: the local network's options, shared by `start` and `server`.
import { DEFAULT_LOCAL_DOMAIN } from "../runtime/dev-network.ts";
import { intOption, UsageError } from "./args.ts";

export const NETWORK_OPTIONS = {
  domain: { type: "string" },
  port: { type: "string" },
  tls: { type: "boolean" },
} as const;

export function networkOptions(values: { domain?: string | undefined; port?: string | undefined; tls?: boolean | undefined }): { domain: string; port?: number; tls: boolean } {
  const domain = values.domain ?? DEFAULT_LOCAL_DOMAIN;
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(domain)) throw new UsageError(`expected \`--domain\` to be a domain such as ${DEFAULT_LOCAL_DOMAIN}, got \`${domain}\``);
  const port = intOption(values.port, "port", 0);
  if (port !== undefined && port > 65535) throw new UsageError(`expected \`--port\` to be at most 65535, got \`${port}\``);
  return { domain, ...(port !== undefined ? { port } : {}), tls: values.tls === true };
}
