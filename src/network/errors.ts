// Typed errors of the network layer: a stable `code` plus the aid (and URL) they concern.

export type NetworkErrorCode =
  /** The access point or message service refused our key or certificate: retrying cannot help. */
  | "IDENTITY_REJECTED"
  /** No key/certificate for the aid where we looked. */
  | "IDENTITY_NOT_FOUND"
  /** The key file is encrypted and the seed password is missing or wrong. */
  | "IDENTITY_LOCKED"
  /** `create` would overwrite an identity that is already there. */
  | "IDENTITY_EXISTS"
  /** Writing a key without a passphrase was not explicitly allowed. */
  | "PASSPHRASE_REQUIRED"
  /** `sign_cert` refused the request. */
  | "CERT_REFUSED"
  /** The network replaced our socket with a newer one of the same aid: it runs somewhere else too. */
  | "SIGNED_IN_ELSEWHERE"
  /** The access point could not be reached at all on the first try (name, port, scheme, certificate). */
  | "UNREACHABLE"
  /** A sign-in step failed for a reason that may pass (server error, refused token, network). */
  | "SIGN_IN_FAILED"
  /** An HTTP call failed (status, body or transport). */
  | "HTTP_ERROR"
  /** An HTTP exchange did not complete within its deadline (a silent or trickling server). */
  | "HTTP_TIMEOUT"
  /** An HTTP answer was larger than the client reads: refused, never kept. */
  | "RESPONSE_TOO_LARGE"
  /** A reply did not have the expected shape. */
  | "BAD_REPLY"
  | "INVALID_OPTIONS"
  /** No message socket is open now: nothing was sent (a retry after the reconnect may go). */
  | "NOT_CONNECTED"
  | "CLOSED";

export class NetworkError extends Error {
  readonly code: NetworkErrorCode;
  readonly aid: string | undefined;
  readonly url: string | undefined;
  readonly status: number | undefined;
  constructor(code: NetworkErrorCode, message: string, context: { aid?: string; url?: string; status?: number; cause?: unknown } = {}) {
    super(message, context.cause !== undefined ? { cause: context.cause } : undefined);
    this.name = "NetworkError";
    this.code = code;
    this.aid = context.aid;
    this.url = context.url;
    this.status = context.status;
  }
}
