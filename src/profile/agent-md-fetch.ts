// The HTTP(S) client for agent.md with the network's TLS rules (a private CA, the insecure opt-out):
// Node's global fetch ignores a custom CA, so this is a plain node:http/https request. By default
// `https://<aid>/agent.md` goes to the aid's own host name. With `via` (an access point URL that
// hosts its identities' profiles itself, such as the local network) every request goes to that
// server instead, with the aid as Host header and TLS server name — the aid's host name resolves
// nowhere there; those requests ride the kept-alive connections the sign-ins to that server use
// (one TLS session for all, the server verified as itself), not a new TLS handshake per profile.
// Bodies are read only up to a limit: a stranger's server decides what it sends.
// Only a host-name-shaped aid is requested; without `via`, only when it resolves to a public
// address (a private network is reached through its configured access point, as `via`).
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { readBodyCapped, tlsConnectOptions, type TlsOptions } from "../network/http-client.ts";
import { acquireAgents } from "../network/trust.ts";
import { AGENT_MD_MAX_BYTES } from "./agent-md.ts";
import { isFetchableAid, ProfileHostRefused, publicOnlyLookup } from "./profile-host.ts";
import type { FetchLike } from "./publish.ts";

export interface AgentMdFetchOptions {
  tls?: TlsOptions;
  /** Send every agent.md request to this server (`http(s)://host:port`), the aid as Host. */
  via?: string | undefined;
  /** Stop reading a body past this many bytes (what is read is returned; the caller sees it is too large). Default 4 KB + 1. */
  maxBodyBytes?: number;
}

export function createAgentMdFetch(o: AgentMdFetchOptions = {}): FetchLike {
  const tls = tlsConnectOptions(o.tls);
  const via = o.via ? new URL(o.via) : undefined;
  const maxBody = o.maxBodyBytes ?? AGENT_MD_MAX_BYTES + 1;
  // `via` is a server the owner configured; anything else is wherever the aid's name points.
  const lookup = via ? tls.lookup : publicOnlyLookup(tls.lookup);
  // The process's kept-alive agents for these TLS rules, held as long as this client lives (an
  // idle socket is unref'd: it keeps no process up). A stranger's host gets a connection of its own.
  const viaAgent = via ? acquireAgents(o.tls)[via.protocol === "https:" ? "https" : "http"] : undefined;
  // Named explicitly: left out, Node would name the TLS session after the Host header (the aid).
  const viaServername = via ? (isIP(via.hostname.replace(/^\[|\]$/g, "")) ? "" : via.hostname) : undefined;
  return (url, init) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      // The URL's host is the aid: a port, an IP literal or anything but a host name is refused unsent.
      if (target.port !== "" || target.username !== "" || target.password !== "" || !isFetchableAid(target.hostname)) {
        reject(new ProfileHostRefused(target.host));
        return;
      }
      const server = via ?? target;
      const secure = server.protocol === "https:";
      const send = secure ? httpsRequest : httpRequest;
      const headers: Record<string, string | number> = { ...init.headers, Host: target.hostname };
      if (init.body !== undefined) headers["Content-Length"] = Buffer.byteLength(init.body, "utf8");
      const req = send(
        {
          protocol: server.protocol,
          hostname: server.hostname.replace(/^\[|\]$/g, ""),
          port: server.port || (secure ? 443 : 80),
          method: init.method,
          path: `${target.pathname}${target.search}`,
          headers,
          // Through `via`: its kept-alive connections, TLS named for that server (the aid is the Host).
          agent: viaAgent ?? false,
          ...(secure ? { ...tls, servername: viaServername ?? target.hostname } : {}),
          ...(lookup ? { lookup } : {}),
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res: IncomingMessage) => {
          // Read up to the limit (the helper every HTTP reader shares); what is read is returned, so the caller sees it is too large.
          readBodyCapped(res, maxBody).then(({ body }) => {
            const status = res.statusCode ?? 0;
            const text = body.toString("utf8");
            const get = (name: string) => {
              const v = res.headers[name.toLowerCase()];
              return v === undefined ? null : String(v);
            };
            resolve({ ok: status >= 200 && status < 300, status, headers: { get }, text: () => Promise.resolve(text) });
          }, reject);
        },
      );
      req.on("error", reject);
      req.end(init.body);
    });
}
