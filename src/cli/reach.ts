// The command line's word on a network it cannot reach: the network layer names the cause in one
// line (src/network/unreachable.ts); here the fix a newcomer needs is added — the address a local
// network prints instead of a name only DNS entries would know, and where its CA is.
import { NetworkError } from "../network/errors.ts";
import { describeUnreachable } from "../network/unreachable.ts";

const originOf = (url: string): { origin: string; host: string; port: string } | undefined => {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    return { origin: `${u.protocol}//${u.hostname}:${port}`, host: u.hostname, port };
  } catch {
    return undefined;
  }
};

/** Whether an error chain holds a failed name lookup. */
function nameNotFound(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === "ENOTFOUND" || code === "EAI_NONAME" || code === "EAI_AGAIN") return true;
  }
  return false;
}

/**
 * One line for an access point that could not be reached (a NetworkError of kind HTTP_ERROR or
 * UNREACHABLE carrying its URL), with the fix; undefined for every other error.
 */
export function explainUnreachable(err: unknown): string | undefined {
  if (!(err instanceof NetworkError) || (err.code !== "HTTP_ERROR" && err.code !== "UNREACHABLE") || err.url === undefined) return undefined;
  const where = originOf(err.url);
  if (where === undefined) return undefined;
  if (nameNotFound(err)) {
    return `cannot reach ${where.origin}: the name ${where.host} does not resolve (for a local network use the \`access point:\` URL \`acp-group server\` printed, such as https://127.0.0.1:${where.port})`;
  }
  const line = describeUnreachable(err, err.url);
  if (line?.startsWith("certificate not trusted")) return `${line}; a local network's CA is the \`ca:\` line its server printed`;
  return line;
}
