// HTTP(S) with the network's TLS rules: verified by default, a private CA added on top of the
// system roots, an explicit opt-out. The agents (keep-alive, one secure context) are shared by every
// client with the same rules and resolver (trust.ts), so `lookup` and the CA apply everywhere.
// Every request has a deadline for the whole exchange and a cap on the body it reads: the server
// at the other end (an access point we were pointed at) decides what and how slowly it sends.
import { request as httpRequest, type Agent, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { NetworkError } from "./errors.ts";
import { acquireAgents, type TlsOptions } from "./trust.ts";
import { processTurnBudget, type TurnBudget } from "../util/turn-budget.ts";

export { tlsConnectOptions, type TlsConnectOptions, type TlsOptions } from "./trust.ts";

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface HttpRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Deadline for the whole exchange (connect, send, headers and the last byte of the body). */
  timeoutMs?: number;
  /** The largest body read; a larger one is refused (RESPONSE_TOO_LARGE) without being kept. */
  maxBodyBytes?: number;
  signal?: AbortSignal;
}

export interface HttpClientDefaults {
  /** Default 15000 ms for the whole exchange: a server that trickles its answer is cut off too. */
  timeoutMs?: number;
  /** Default 1 MiB: sign-in answers are a few KB. */
  maxBodyBytes?: number;
  /**
   * The turn budget each request is sent under (default the process's, processTurnBudget): the
   * answers of many sign-ins arrive in one turn of the event loop, and each one's next request then
   * goes out in that turn only while it has time left, else in the next.
   */
  turns?: TurnBudget;
}

export interface HttpClient {
  request(url: string, init?: HttpRequestInit): Promise<HttpReply>;
  postJson(url: string, body: unknown, headers?: Record<string, string>): Promise<HttpReply>;
  /**
   * The kept-alive agent a WebSocket to `url` (ws: or wss:) opens through: its upgrade takes an
   * idle connection of this client's requests, else a new one that resumes their TLS session.
   * Absent on clients that keep no connections (test doubles).
   */
  socketAgent?(url: string): Agent;
  close(): void;
}

export const DEFAULT_HTTP_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads a response body up to `maxBytes`. Past it (or when Content-Length already says so) the
 * response is destroyed and `overLimit` is true, with at most `maxBytes + 1` bytes kept: a server
 * decides what it sends, so nobody's answer can grow our memory. Shared by every HTTP reader.
 */
export function readBodyCapped(res: IncomingMessage, maxBytes: number): Promise<{ body: Buffer; overLimit: boolean }> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers["content-length"] ?? Number.NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      res.destroy();
      resolve({ body: Buffer.alloc(0), overLimit: true });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.on("data", (c: Buffer) => {
      if (done) return;
      size += c.length;
      chunks.push(c);
      if (size > maxBytes) {
        done = true;
        // Enough to know it is too large; the rest is not read.
        res.destroy();
        resolve({ body: Buffer.concat(chunks).subarray(0, maxBytes + 1), overLimit: true });
      }
    });
    res.on("error", (err) => (done ? undefined : ((done = true), reject(err))));
    res.on("end", () => (done ? undefined : ((done = true), resolve({ body: Buffer.concat(chunks), overLimit: false }))));
  });
}

/** `scheme://host:port` of a URL, for messages that should not repeat a path or query. */
export function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}:${u.port || (u.protocol === "https:" || u.protocol === "wss:" ? "443" : "80")}`;
  } catch {
    return url;
  }
}

const inSeconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`);

export function createHttpClient(tls: TlsOptions = {}, defaults: HttpClientDefaults = {}): HttpClient {
  // Shared with every client of the same TLS rules: one secure context, kept-alive sockets.
  const agents = acquireAgents(tls);
  const { https: httpsAgent, http: httpAgent } = agents;
  const turns = defaults.turns ?? processTurnBudget;
  const request = (url: string, init: HttpRequestInit = {}): Promise<HttpReply> =>
    new Promise((resolve, reject) =>
      turns.run(() => {
        try {
          send(url, init, resolve, reject);
        } catch (err) {
          reject(err);
        }
      }),
    );
  /** Sends one request (its deadline counted from here) and settles with its answer. */
  const send = (url: string, init: HttpRequestInit, resolve: (reply: HttpReply) => void, reject: (err: unknown) => void): void => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      reject(new NetworkError("INVALID_OPTIONS", `Expected an http(s) URL, got \`${url}\``, { url }));
      return;
    }
    const timeoutMs = init.timeoutMs ?? defaults.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
    const maxBody = init.maxBodyBytes ?? defaults.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    // One deadline for the whole exchange, not an idle timer: a server sending a byte a second
    // would reset an idle timer for ever.
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([deadline, init.signal]) : deadline;
    let settled = false;
    const fail = (err: NetworkError) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      req.destroy();
      reject(err);
    };
    const onAbort = () =>
      fail(
        deadline.aborted
          ? new NetworkError("HTTP_TIMEOUT", `${url}: no complete answer from ${originOf(url)} within ${inSeconds(timeoutMs)}`, { url })
          : new NetworkError("CLOSED", `${url}: request cancelled`, { url }),
      );
    const secure = parsed.protocol === "https:";
    const req = (secure ? httpsRequest : httpRequest)(
      parsed,
      {
        method: init.method ?? "GET",
        headers: { ...(init.body !== undefined ? { "content-length": Buffer.byteLength(init.body).toString() } : {}), ...init.headers },
        agent: secure ? httpsAgent : httpAgent,
        ...(tls.lookup ? { lookup: tls.lookup } : {}),
      },
      (res) => {
        readBodyCapped(res, maxBody).then(
          ({ body, overLimit }) => {
            if (overLimit) {
              return fail(new NetworkError("RESPONSE_TOO_LARGE", `${url}: answer larger than ${maxBody} bytes from ${originOf(url)}, refused unread`, { url, status: res.statusCode }));
            }
            if (settled) return;
            settled = true;
            signal.removeEventListener("abort", onAbort);
            const text = body.toString("utf8");
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          },
          (err: Error) => fail(new NetworkError("HTTP_ERROR", `${url}: ${err.message}`, { url, cause: err })),
        );
      },
    );
    req.on("error", (err) => fail(new NetworkError("HTTP_ERROR", `${url}: ${err.message}`, { url, cause: err })));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (init.body !== undefined) req.write(init.body);
    req.end();
  };
  return {
    request,
    postJson: (url, body, headers) =>
      request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
    socketAgent: (url) => (/^(wss|https):/i.test(url) ? httpsAgent : httpAgent),
    close() {
      agents.release();
    },
  };
}
