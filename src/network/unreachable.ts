// Names, in one line, why an access point cannot be reached at all: a name that does not resolve,
// a port nobody listens on, the wrong scheme, a certificate we do not trust. Pure: reads only the
// error chain (Node's `code` on the error or its `cause`).

const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

function codes(err: unknown): Array<{ code: string; message: string }> {
  const out: Array<{ code: string; message: string }> = [];
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    out.push({ code: typeof code === "string" ? code : "", message: String((e as { message?: unknown }).message ?? "") });
  }
  return out;
}

/**
 * One line naming why `url` cannot be reached, or undefined when the error is not of that kind
 * (a server error, a refusal, a timeout: those may pass and are retried).
 */
export function describeUnreachable(err: unknown, url: string): string | undefined {
  let origin = url;
  try {
    const u = new URL(url);
    origin = `${u.protocol}//${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
  } catch {
    // keep the URL as given
  }
  for (const { code, message } of codes(err)) {
    if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return `cannot reach ${origin}: ${message.replace(/^.*?(getaddrinfo)/, "$1")}`;
    if (code === "ECONNREFUSED") return `cannot reach ${origin}: connection refused (nothing listens on that port)`;
    if (UNTRUSTED.has(code)) return `certificate not trusted: pass --ca-file or set network.caFile (${origin}: ${code})`;
    if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "EPROTO" || /wrong version number|packet length too long/i.test(message)) {
      return `cannot reach ${origin}: it does not speak TLS there (use http:// for a server started without --tls)`;
    }
    if (code === "HPE_INVALID_CONSTANT" || code === "ECONNRESET" && origin.startsWith("http:")) {
      return `cannot reach ${origin}: not an HTTP answer (use https:// for a server started with --tls)`;
    }
  }
  return undefined;
}
