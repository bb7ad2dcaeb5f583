// Names, in one line, why an access point cannot be reached at all: a name that does not resolve,
// a port nobody listens on, the wrong scheme, a certificate we do not trust, one for another name,
// one out of date. `describeUnreachable` reads only the error chain (Node's `code` on the error or
// its `cause`); `diagnoseUnreachable` adds one check where the error alone cannot tell: a reset on
// plain HTTP is a TLS server only when a TLS handshake to the same port says so.
import { isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { originOf, type TlsOptions } from "./http-client.ts";

/** Verification failures that a CA the client is told to trust would cure. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);

interface Link {
  code: string;
  message: string;
  /** Node's ERR_TLS_CERT_ALTNAME_INVALID carries `host` and `cert.subjectaltname`. */
  host?: unknown;
  cert?: { subjectaltname?: unknown };
}

function chain(err: unknown): Link[] {
  const out: Link[] = [];
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const o = e as { code?: unknown; message?: unknown; host?: unknown; cert?: { subjectaltname?: unknown } };
    out.push({ code: typeof o.code === "string" ? o.code : "", message: String(o.message ?? ""), host: o.host, ...(o.cert ? { cert: o.cert } : {}) });
  }
  return out;
}

/**
 * What is wrong with the certificate `url` presented, or undefined when the error is not a
 * certificate's. `fix` is what to do about an untrusted one.
 */
function describeCertificate(links: Link[], url: string, what: string, untrusted: (code: string) => string): string | undefined {
  for (const l of links) {
    if (UNTRUSTED.has(l.code)) return untrusted(l.code);
    if (l.code === "ERR_TLS_CERT_ALTNAME_INVALID") {
      const host = typeof l.host === "string" ? l.host : new URL(url).hostname;
      const names = typeof l.cert?.subjectaltname === "string" ? l.cert.subjectaltname.replace(/\b(DNS|IP Address):/g, "") : "other names";
      return `certificate of ${what} is not for ${host} (it names ${names}): use a host name it names`;
    }
    if (l.code === "CERT_HAS_EXPIRED") return `certificate of ${what} has expired`;
    if (l.code === "CERT_NOT_YET_VALID") return `certificate of ${what} is not valid yet (is this machine's clock right?)`;
  }
  return undefined;
}

/**
 * One line naming why `url` cannot be reached, or undefined when the error is not of that kind
 * (a server error, a refusal, a timeout, a reset: those may pass and are retried).
 */
export function describeUnreachable(err: unknown, url: string): string | undefined {
  const origin = originOf(url);
  const links = chain(err);
  const cert = describeCertificate(links, url, origin, (code) => `certificate not trusted: pass --ca-file or set network.caFile (${origin}: ${code})`);
  if (cert !== undefined) return cert;
  for (const { code, message } of links) {
    if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return `cannot reach ${origin}: ${message.replace(/^.*?(getaddrinfo)/, "$1")}`;
    if (code === "ECONNREFUSED") return `cannot reach ${origin}: connection refused (nothing listens on that port)`;
    if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "EPROTO" || /wrong version number|packet length too long/i.test(message)) {
      return `cannot reach ${origin}: it does not speak TLS there (use http:// for a server started without --tls)`;
    }
  }
  return undefined;
}

/** Does a TLS server answer a handshake at `origin`'s host and port? Bounded by `timeoutMs`; never verifies (it only asks "TLS or not"). */
function speaksTls(origin: string, tls: TlsOptions, timeoutMs: number): Promise<boolean> {
  const u = new URL(origin);
  return new Promise((resolve) => {
    // SNI takes host names only (an IP address there is deprecated).
    const host = u.hostname.replace(/^\[|\]$/g, "");
    const socket = tlsConnect({ host, port: Number(u.port), ...(isIP(host) ? {} : { servername: host }), rejectUnauthorized: false, ...(tls.lookup ? { lookup: tls.lookup } : {}) });
    const done = (yes: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(yes);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once("secureConnect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * {@link describeUnreachable}, and for plain HTTP answered by a reset or by bytes that are not
 * HTTP, a TLS handshake to the same port: a TLS server there means `use https://`; anything else
 * is what it looks like (a reset is retried, never blamed on the scheme).
 */
export async function diagnoseUnreachable(err: unknown, url: string, tls: TlsOptions = {}): Promise<string | undefined> {
  const plain = describeUnreachable(err, url);
  if (plain !== undefined || !url.startsWith("http:")) return plain;
  const codes = chain(err).map((l) => l.code);
  if (!codes.includes("ECONNRESET") && !codes.includes("HPE_INVALID_CONSTANT")) return undefined;
  const origin = originOf(url);
  if (await speaksTls(origin, tls, 2000)) return `cannot reach ${origin}: it speaks TLS there (use https:// for a server started with --tls)`;
  return codes.includes("HPE_INVALID_CONSTANT") ? `cannot reach ${origin}: it does not answer HTTP there (is that the access point's port?)` : undefined;
}

/**
 * The message server's certificate, when that is why its socket did not open: one line with the
 * fix, or undefined. (The access point verified, so the CA given is not the message server's.)
 */
export function describeMessageServerCertificate(err: unknown, url: string): string | undefined {
  const what = `the message server ${originOf(url)}`;
  return describeCertificate(
    chain(err),
    url,
    what,
    (code) => `certificate of ${what} not trusted (${code}): set network.caFile (--ca-file) to the CA that issued it, or network.insecureTls for a network that serves an unverifiable certificate`,
  );
}
