// The local network for development, as `acp-group server` and `start` run it: the access point,
// the message service and the group service `group.<domain>` on one port, with its CA, history
// and the identities it issued in one state dir. Also re-homes a config's identities and humans
// onto the local domain (`alice.agentcp.io` → `alice.<domain>`), and issues their certificates.
import { RESULT_CODES } from "../wire/result-codes.ts";
import { join } from "node:path";
import { connectAgent, ensureIdentity, type ConnectAgentOptions, type HttpClient, type Identity, type NetworkAgent } from "../network/index.ts";
import { createAgentMdFetch } from "../profile/agent-md-fetch.ts";
import type { FetchLike } from "../profile/publish.ts";
import { createFileAgentMdStore, memberTypeFromStore } from "../server/agent-md-store.ts";
import { createGroupService, type GroupDefinition, type GroupService } from "../server/group-service.ts";
import type { RateLimit } from "../server/rate-limit.ts";
import { DEFAULT_LOCAL_DOMAIN, networkBanner, startLocalNetwork, type LocalNetwork, type SocketLimits } from "../server/network/index.ts";
import type { ChannelConfig, Logger } from "../types.ts";

export { DEFAULT_LOCAL_DOMAIN };

export interface DevNetwork {
  readonly net: LocalNetwork;
  readonly service: GroupService;
  /** `access point: …`, `ca: …` (with TLS), `join <group>: <link>` — one line each, for printing. */
  readonly lines: string[];
  /** Issues (or reloads) an identity of this network, kept in the state dir. */
  identity(aid: string): Promise<Identity>;
  /**
   * Reaches `https://<aid>/agent.md` of this network's identities: the request goes to this
   * server by address, the aid as Host header (the aid's host name resolves nowhere here).
   */
  readonly profileFetch: FetchLike;
  /** Signs an issued identity in over this process's loopback address (no DNS needed). */
  connect(identity: Identity, logger?: Logger, options?: Omit<ConnectAgentOptions, "identity" | "accessPointUrl" | "tls" | "logger">): NetworkAgent;
  close(): Promise<void>;
}

export interface StartDevNetworkParams {
  domain?: string;
  port?: number;
  tls?: boolean;
  stateDir: string;
  groups: Record<string, GroupDefinition>;
  logger?: Logger;
  /** Per member and group (default 10 per 10 s); null disables. */
  rateLimit?: RateLimit | null;
  /** The longest message the group service takes, in characters (`get_rules` `max_message_size`). Default 10000. */
  maxMessageChars?: number;
  /** Access and message token lifetime (tests expire them sooner). */
  tokenTtlMs?: number;
  /**
   * Configured aids nobody else may register (the owner, the humans, the identities this process
   * runs): reserved from the first request on; `identity(aid)` certifies them in-process.
   */
  reserve?: string[];
  /** Play a strict service: the group service joins new sessions this many ms after the invite, dropping what came before (see LocalNetworkOptions). */
  strictInviteDelayMs?: number;
  /**
   * The operator's choice: a member whose latest sign-in came from `acp-group chat` (a person's
   * client, by its `client_info`) is a person in `get_members`. Default false: only the groups'
   * definitions (the config's humans) make people.
   */
  peopleFromChat?: boolean;
  /** Serve UDP presence (`heartbeat_server`, heartbeats, invites) as the real network does. Default true. */
  presence?: boolean;
  /** The message service's socket limits, raised for many agents from one machine (`server --max-agents-per-source`). */
  socketLimits?: Partial<SocketLimits>;
}

export async function startDevNetwork(p: StartDevNetworkParams): Promise<DevNetwork> {
  const domain = p.domain ?? DEFAULT_LOCAL_DOMAIN;
  const root = join(p.stateDir, "local-network");
  // One profile store for both roles: the server's `/agent.md` writes it, the group service reads member types from it.
  const agentMd = createFileAgentMdStore(join(root, "agent-md"));
  const log = p.logger;
  // The network is started after the service it hosts: the person rule reads it once it exists.
  let net: LocalNetwork | undefined;
  const service = createGroupService({
    ...(p.peopleFromChat ? { isPerson: (aid: string) => net?.signedInAsPerson(aid) === true } : {}),
    memberProfile(aid) {
      try {
        return memberTypeFromStore(agentMd, aid);
      } catch (err) {
        log?.log("warn", "group-service.agent-md-read-failed", { aid, error: err instanceof Error ? err.message : String(err) });
        return { type: "unknown", code: RESULT_CODES.AGENT_MD_NOT_FOUND };
      }
    },
    domain,
    groups: p.groups,
    historyFile: join(root, "group-history.jsonl"),
    ...(p.rateLimit !== undefined ? { rateLimit: p.rateLimit } : {}),
    ...(p.maxMessageChars !== undefined ? { maxMessageChars: p.maxMessageChars } : {}),
    ...(p.logger ? { logger: p.logger } : {}),
  });
  net = await startLocalNetwork({
    domain,
    stateDir: root,
    ...(p.port !== undefined ? { port: p.port } : {}),
    ...(p.tls ? { tls: true } : {}),
    serviceAgents: [service],
    agentMd,
    ...(p.logger ? { logger: p.logger } : {}),
    ...(p.tokenTtlMs !== undefined ? { tokenTtlMs: p.tokenTtlMs } : {}),
    ...(p.reserve ? { reservedMembers: p.reserve } : {}),
    ...(p.strictInviteDelayMs !== undefined ? { strictInviteDelayMs: p.strictInviteDelayMs } : {}),
    presence: p.presence !== false,
    ...(p.socketLimits ? { socketLimits: p.socketLimits } : {}),
  });
  const started = net;
  // This process's own identities are certified in-process: the only way to a reserved aid.
  const inProcess = inProcessSignCert(started);
  const lines = networkBanner(started);
  for (const groupId of service.groupIds()) lines.push(`join ${groupId}: ${service.joinLink(groupId)}`);
  const tls = { ca: started.caPem };
  return {
    net: started,
    service,
    lines,
    profileFetch: createAgentMdFetch({ tls, via: started.localUrl }),
    // Demo identities are for this machine only: stored without a passphrase, next to the CA that issued them.
    // A saved key whose certificate came from an older CA (the ca folder was deleted) is certified again.
    identity: (aid) => ensureIdentity({ aid, stateDir: root, accessPointUrl: started.localUrl, noPassphrase: true, tls, issuerCaPem: started.caPem, http: inProcess }),
    connect: (identity, logger, options) => connectAgent({ ...options, identity, accessPointUrl: started.localUrl, tls, ...(logger ? { logger } : {}) }),
    close: () => started.close(),
  };
}

/** An HttpClient whose only request is `sign_cert`, answered by the network in-process (no socket). */
function inProcessSignCert(net: LocalNetwork): HttpClient {
  const refuse = (): never => {
    throw new Error("Expected only sign_cert on the in-process client");
  };
  return {
    request: refuse,
    async postJson(url, body) {
      if (!url.endsWith("/api/accesspoint/sign_cert")) refuse();
      const { id, csr } = body as { id: string; csr: string };
      const result = await net.certifyConfigured(id, csr);
      const json = result.status === 200 ? { certificate: result.certificate } : { error: result.error };
      return { status: result.status, headers: {}, text: JSON.stringify(json), json };
    },
    close() {},
  };
}

/** `alice.agentcp.io` → `alice.<domain>`; a bare name (`you`) → `you.<domain>`. */
export function rehome(aid: string, domain: string): string {
  const dot = aid.indexOf(".");
  return `${dot >= 0 ? aid.slice(0, dot) : aid}.${domain}`;
}

/** The config with every identity and human on `domain`, and no per-identity access point. */
export function rehomeConfig(config: ChannelConfig, domain: string): ChannelConfig {
  const identities: ChannelConfig["identities"] = {};
  for (const [id, identity] of Object.entries(config.identities)) {
    const { accessPoint: _ap, accessPointUrl: _url, identityDir: _dir, keyFile: _key, certFile: _cert, ...rest } = identity;
    identities[id] = { ...rest, aid: rehome(identity.aid, domain), ...(identity.owner ? { owner: rehome(identity.owner, domain) } : {}) };
  }
  return { ...config, identities, humans: config.humans.map((h) => rehome(h, domain)) };
}
