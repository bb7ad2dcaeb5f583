// A local ACP network on one port: the access point API, the message service sign-in and the
// `/session` socket, with a CA created in the state dir. With `tls` it serves HTTPS/WSS with a
// certificate from that CA for `acp3.<domain>`, `*.<domain>`, `localhost` and 127.0.0.1.
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { join } from "node:path";
import type { Logger } from "../../types.ts";
import { silentLogger } from "../../log.ts";
import type { ServiceAgent } from "../service-agent.ts";
import { createFileAgentMdStore, handleAgentMdRequest, type AgentMdStore } from "../agent-md-store.ts";
import { openLocalCa } from "./local-ca.ts";
import { createApiHandler, type ApiContext, type CertifyResult } from "./access-point-api.ts";
import { AidRegistry } from "./aid-registry.ts";
import { ClientDeclarations } from "./client-declarations.ts";
import { startPresenceServer, type PresenceServer } from "./presence-server.ts";
import { MessageService, type MessageServiceCounters, type MessageServiceQuirks } from "./message-service.ts";
import { DEFAULT_SOCKET_LIMITS, SESSION_PATHS, type SocketLimits } from "./socket-limits.ts";
import { NonceStore, TokenStore } from "./tokens.ts";

import { DEFAULT_LOCAL_DOMAIN } from "./defaults.ts";

export { DEFAULT_LOCAL_DOMAIN };

export interface LocalNetworkOptions {
  /** The access point's domain: identities are `<name>.<domain>`. Default `acp.local`. */
  domain?: string;
  /** Holds the CA (`ca/ca.crt`, `ca/ca.key`) and the registry of issued aids. */
  stateDir: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  tls?: boolean;
  /** In-process agents such as the group service `group.<domain>`. */
  serviceAgents?: ServiceAgent[];
  /** How long access point and message tokens live. Default 1 hour. */
  tokenTtlMs?: number;
  logger?: Logger;
  now?: () => number;
  /**
   * Where members' agent.md live (`POST/GET /agent.md`, the aid as Host header). Default: files
   * in `<stateDir>/agent-md`. Pass the same store to the group service for member types.
   */
  agentMd?: AgentMdStore;
  /** Default true. False: sockets never answer pings, like a half-open connection (liveness tests). */
  answerPings?: boolean;
  /** Per-socket and total limits of the message service (defaults in DEFAULT_SOCKET_LIMITS). */
  socketLimits?: Partial<SocketLimits>;
  /** How often sockets are pinged; one missed pong drops a socket. Default 30000; 0 disables. */
  pingIntervalMs?: number;
  /**
   * Serve presence as the real network does: `heartbeat_server` in the access point config, its
   * sign-in, and UDP heartbeats (on the port of the same number, else `port`, else any). Default
   * false: the config names no heartbeat server and clients run none.
   */
  presence?: boolean | { port?: number; nextBeatMs?: number };
  /**
   * Play a strict real service: an invited member (the group service too) joins the session this
   * many ms after `invite_agent_req` — and only then is `invite_agent_ack` sent — and session
   * frames sent to it before that are dropped without an answer. Default: joins at once.
   */
  strictInviteDelayMs?: number;
  /** How long an invited agent has to answer a forwarded invite with join_session_req before the inviter hears 408. Default 15000 ms. */
  inviteJoinTimeoutMs?: number;
  /**
   * Configured members (the owner, the humans, the identities this process runs): reserved from
   * the first request on. `sign_cert` from outside refuses them unless the key is already theirs;
   * `certifyConfigured` is how this process certifies them.
   */
  reservedMembers?: string[];
}

export interface LocalNetworkCounters extends MessageServiceCounters {
  refusedSignIns: number;
  issuedCertificates: number;
  refusedCertificates: number;
  /** TCP connections dropped at once: their source address held maxConnectionsPerSource. */
  refusedConnections: number;
  /** TLS handshakes in full (certificate sent and signed for) and resumed from a session ticket. */
  tlsFullHandshakes: number;
  tlsResumedHandshakes: number;
}

export interface LocalNetwork {
  readonly domain: string;
  readonly port: number;
  /**
   * The URL the official SDK builds from `sdkDomain`: `https://acp3.<domain>:<port>` with TLS (it
   * needs acp3.<domain> to resolve to this machine), `http://127.0.0.1:<port>` without.
   */
  readonly accessPointUrl: string;
  /** The same server by address, which needs no name resolution (the TLS certificate covers 127.0.0.1): `http(s)://127.0.0.1:<port>`. The URL printed. */
  readonly localUrl: string;
  /** The domain string the official SDK takes (`<domain>:<port>`), which it turns into `https://acp3.<domain>:<port>`. */
  readonly sdkDomain: string;
  /** The CA certificate (PEM file) a client must trust to verify this network. */
  readonly caFile: string;
  readonly caPem: string;
  readonly tls: boolean;
  /** The members' agent.md this server serves. */
  readonly agentMd: AgentMdStore;
  addServiceAgent(agent: ServiceAgent): void;
  /** `sign_cert` in-process for a configured member (see `reservedMembers`): registers the CSR's key as the aid's. */
  certifyConfigured(aid: string, csrPem: string): Promise<CertifyResult>;
  /** Expires the tokens of `aid` (or all) now and closes their sockets with code 4001. */
  expireTokens(aid?: string): void;
  /** Drops the socket of `aid` (or every socket) without a close frame, like a network failure. */
  dropSockets(aid?: string): void;
  /**
   * Whether the aid's latest message-service sign-in came from a person's client (`acp-group chat`
   * declares itself in `client_info`). What a group service makes of it is the operator's choice.
   */
  signedInAsPerson(aid: string): boolean;
  /** Switches that make this network behave as another may (see MessageServiceQuirks). */
  readonly quirks: MessageServiceQuirks;
  /** The presence server, when the network serves presence. */
  readonly presence: PresenceServer | undefined;
  connectedAids(): string[];
  counters(): Readonly<LocalNetworkCounters>;
  close(): Promise<void>;
}

/**
 * The lines `acp-group server` / `npm start` print at start (the group service adds its join links).
 * The access point is printed by address: it resolves on every machine, no `/etc/hosts` line
 * needed, and the TLS certificate covers it — `id create --ap-url` takes it as printed.
 */
export function networkBanner(net: Pick<LocalNetwork, "localUrl" | "caFile" | "tls">): string[] {
  return [`access point: ${net.localUrl}`, ...(net.tls ? [`ca: ${net.caFile}`] : [])];
}

export async function startLocalNetwork(options: LocalNetworkOptions): Promise<LocalNetwork> {
  const domain = options.domain ?? DEFAULT_LOCAL_DOMAIN;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? "127.0.0.1";
  const tls = options.tls === true;
  const ca = await openLocalCa({ dir: join(options.stateDir, "ca"), domain, now: now() });
  const ttl = options.tokenTtlMs ?? 3600_000;
  const limits = { ...DEFAULT_SOCKET_LIMITS, ...options.socketLimits };
  const registry = new AidRegistry(options.stateDir);
  registry.reserve(options.reservedMembers ?? []);
  const messageTokens = new TokenStore(ttl);
  const accessPointTokens = new TokenStore(ttl);
  const heartbeatTokens = new TokenStore(ttl);
  const messages = new MessageService({
    kindOf: (aid) => registry.kindOf(aid),
    tokens: messageTokens,
    now,
    logger,
    ...(options.answerPings === false ? { answerPings: false } : {}),
    ...(options.socketLimits ? { limits: options.socketLimits } : {}),
    ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
    ...(options.inviteJoinTimeoutMs !== undefined ? { inviteJoinTimeoutMs: options.inviteJoinTimeoutMs } : {}),
  });
  if (options.strictInviteDelayMs !== undefined) messages.quirks.strictInviteDelayMs = options.strictInviteDelayMs;
  for (const agent of options.serviceAgents ?? []) messages.addServiceAgent(agent);
  const apiCounters = { refusedSignIns: 0, issuedCertificates: 0, refusedCertificates: 0 };
  const clients = new ClientDeclarations();
  let refusedConnections = 0;
  const handshakes = { tlsFullHandshakes: 0, tlsResumedHandshakes: 0 };
  const ctx: ApiContext = {
    domain,
    ca,
    stateDir: options.stateDir,
    accessPointTokens,
    messageTokens,
    nonces: new NonceStore(),
    signInsPerSourcePer10s: limits.signInsPerSourcePer10s,
    newAidsPerSource: limits.newAidsPerSource,
    registry,
    reservedAids: () => new Set([...messages.serviceAgentAids(), `acp3.${domain}`]),
    now,
    logger,
    counters: apiCounters,
    secure: tls,
    clients,
    heartbeatTokens,
  };
  const handler = createApiHandler(ctx);
  const agentMd = {
    store: options.agentMd ?? createFileAgentMdStore(join(options.stateDir, "agent-md")),
    // Publishing takes the aid's current message-service token, as on the real network.
    verifyToken: (aid: string, token: string) => messageTokens.owner(token, now())?.toLowerCase() === aid.toLowerCase(),
  };
  const onRequest = (req: Parameters<typeof handler>[0], res: Parameters<typeof handler>[1]) =>
    void handleAgentMdRequest(req, res, agentMd)
      .then((handled) => (handled ? undefined : handler(req, res)))
      .catch((err: unknown) => {
        logger.log("error", "network.request-failed", { path: req.url?.split("?")[0], error: err instanceof Error ? err.message : String(err) });
        res.destroy();
      });
  // A connection that has not sent its whole request within idleTimeoutMs (or sent nothing) is
  // closed, checked every quarter of it; one whose request is being served is not timed out.
  const httpTimeouts = {
    headersTimeout: limits.idleTimeoutMs,
    requestTimeout: 3 * limits.idleTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.floor(limits.idleTimeoutMs / 4)),
    keepAliveTimeout: Math.min(5000, limits.idleTimeoutMs),
  };
  let server: Server;
  if (tls) {
    const { certPem, keyPem } = await ca.issueServerCertificate({ dnsNames: [`acp3.${domain}`, `*.${domain}`, domain, "localhost"], ips: ["127.0.0.1"], now: now() });
    server = createHttpsServer({ cert: certPem + ca.certPem, key: keyPem, ...httpTimeouts }, onRequest);
    server.on("secureConnection", (socket: TLSSocket) => void (socket.isSessionReused() ? handshakes.tlsResumedHandshakes++ : handshakes.tlsFullHandshakes++));
  } else {
    server = createHttpServer(httpTimeouts, onRequest);
  }
  // Sockets in all (signed-in ones plus room for sign-ins and upgrades in flight); the message
  // service also limits its own sockets, answering 503 past it.
  server.maxConnections = limits.maxConnections + limits.maxGuestConnections + (options.reservedMembers?.length ?? 0) + 256;
  // One address holds at most maxConnectionsPerSource connections, so it cannot take all of them.
  const perSource = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const source = socket.remoteAddress ?? "unknown";
    const open = perSource.get(source) ?? 0;
    if (open >= limits.maxConnectionsPerSource) {
      refusedConnections++;
      logger.log("warn", "network.connection-refused", { source, reason: "per-source", limit: limits.maxConnectionsPerSource });
      socket.destroy();
      return;
    }
    perSource.set(source, open + 1);
    socket.once("close", () => {
      const left = (perSource.get(source) ?? 1) - 1;
      if (left === 0) perSource.delete(source);
      else perSource.set(source, left);
    });
  });
  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    // Node hands an upgrade's socket over with no error listener: a peer that resets it (after a
    // refusal, or mid-handshake) would otherwise be an uncaught exception that ends the server.
    socket.on("error", (err) => logger.log("debug", "network.upgrade-socket-error", { path, error: err.message }));
    if (!SESSION_PATHS.has(path)) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    messages.handleUpgrade(req, socket, head);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const scheme = tls ? "https" : "http";
  let presence: PresenceServer | undefined;
  if (options.presence) {
    const o = options.presence === true ? {} : options.presence;
    try {
      presence = await startPresenceServer({ host, port: o.port ?? port, anyPortIfTaken: o.port === undefined, ...(o.nextBeatMs !== undefined ? { nextBeatMs: o.nextBeatMs } : {}), now, logger });
    } catch (err) {
      await new Promise<void>((r) => server.close(() => r()));
      await messages.close();
      throw err;
    }
    const p = presence;
    ctx.presence = { host, port: p.port, issueCookie: (aid) => p.issueCookie(aid) };
    messages.presenceInvite = (to, invite) => p.invite(to, { ...invite, expires: 0n, messageServer: `${scheme}://${host}:${port}/api/message` });
  }
  logger.log("info", "network.started", { domain, port, tls });
  return {
    domain,
    port,
    accessPointUrl: tls ? `https://acp3.${domain}:${port}` : `http://127.0.0.1:${port}`,
    localUrl: `${scheme}://127.0.0.1:${port}`,
    sdkDomain: `${domain}:${port}`,
    caFile: ca.certFile,
    caPem: ca.certPem,
    tls,
    agentMd: agentMd.store,
    addServiceAgent: (agent) => messages.addServiceAgent(agent),
    certifyConfigured: (aid, csrPem) => handler.certifyConfigured(aid, csrPem),
    expireTokens(aid) {
      messageTokens.expire(aid, now());
      accessPointTokens.expire(aid, now());
      messages.expire(aid);
    },
    dropSockets: (aid) => messages.drop(aid),
    signedInAsPerson: (aid) => clients.signedInAsPerson(aid),
    quirks: messages.quirks,
    presence,
    connectedAids: () => messages.connectedAids(),
    counters: () => ({ ...messages.counters, ...apiCounters, refusedConnections, ...handshakes }),
    async close() {
      await presence?.close();
      await messages.close();
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
      // A publish whose request was cut still ends its write before the network is closed.
      await agentMd.store.settled?.();
    },
  };
}
