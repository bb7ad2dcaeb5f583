// HTTP(S) with the network's TLS rules: verified by default, a private CA added on top of the
// system roots, an explicit opt-out. One agent per client so `lookup` and the CA apply everywhere.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { NetworkError } from "./errors.ts";

export interface TlsOptions {
  /** A PEM file of a private CA to trust besides the system roots (e.g. a local network's CA). */
  caFile?: string;
  /** The same as PEM text. */
  ca?: string;
  /** Skip certificate verification. Explicit opt-out; logged at warn by whoever enables it. */
  insecureTls?: boolean;
  /** Resolve host names differently (tests point `acp3.<domain>` at 127.0.0.1). */
  lookup?: LookupFunction;
}

/** What `tls.connect`/`https.request`/`ws` take to honour TlsOptions. */
export function tlsConnectOptions(tls: TlsOptions = {}): { ca?: string[]; rejectUnauthorized: boolean; lookup?: LookupFunction } {
  const extra: string[] = [];
  if (tls.caFile) extra.push(readFileSync(tls.caFile, "utf8"));
  if (tls.ca) extra.push(tls.ca);
  return {
    ...(extra.length > 0 ? { ca: [...rootCertificates, ...extra] } : {}),
    rejectUnauthorized: tls.insecureTls !== true,
    ...(tls.lookup ? { lookup: tls.lookup } : {}),
  };
}

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
  timeoutMs?: number;
}

export interface HttpClient {
  request(url: string, init?: HttpRequestInit): Promise<HttpReply>;
  postJson(url: string, body: unknown, headers?: Record<string, string>): Promise<HttpReply>;
  close(): void;
}

export function createHttpClient(tls: TlsOptions = {}): HttpClient {
  const tlsOptions = tlsConnectOptions(tls);
  const httpsAgent = new HttpsAgent({ ...tlsOptions, keepAlive: false });
  const httpAgent = new HttpAgent({ keepAlive: false, ...(tls.lookup ? { lookup: tls.lookup } : {}) } as ConstructorParameters<typeof HttpAgent>[0]);
  const request = (url: string, init: HttpRequestInit = {}): Promise<HttpReply> =>
    new Promise((resolve, reject) => {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        reject(new NetworkError("INVALID_OPTIONS", `Expected an http(s) URL, got \`${url}\``, { url }));
        return;
      }
      const secure = parsed.protocol === "https:";
      const send = secure ? httpsRequest : httpRequest;
      const req = send(
        parsed,
        {
          method: init.method ?? "GET",
          headers: { ...(init.body !== undefined ? { "content-length": Buffer.byteLength(init.body).toString() } : {}), ...init.headers },
          agent: secure ? httpsAgent : httpAgent,
          timeout: init.timeoutMs ?? 15_000,
          ...(tls.lookup ? { lookup: tls.lookup } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", (err) => reject(new NetworkError("HTTP_ERROR", `${url}: ${err.message}`, { url, cause: err })));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error("request timed out")));
      req.on("error", (err) => reject(new NetworkError("HTTP_ERROR", `${url}: ${err.message}`, { url, cause: err })));
      if (init.body !== undefined) req.write(init.body);
      req.end();
    });
  return {
    request,
    postJson: (url, body, headers) =>
      request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
    close() {
      httpsAgent.destroy();
      httpAgent.destroy();
    },
  };
}
