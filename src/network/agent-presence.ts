// One identity's presence, as the network agent keeps it: once a sign-in names a
// `heartbeat_server`, a PresenceClient beats there (a different server next time → a new client);
// its sign-in is the usual two-step one at `<heartbeat_server>/sign_in`, whose reply says where to
// beat (`server_ip`, `port`, `sign_cookie`). As the official SDK does, a heartbeat server given as
// http:// is reached over https:// when the access point itself is https. Invites that arrive over
// presence are handed to the agent, which joins them over its socket. No heartbeat server, or
// presence turned off: nothing runs.
import type { Logger } from "../types.ts";
import { parseSignCookie, type PresenceInvite } from "../wire/presence.ts";
import { NetworkError } from "./errors.ts";
import type { HttpClient } from "./http-client.ts";
import type { Identity } from "./identity-store.ts";
import { PresenceClient, type OpenPresenceSocket, type PresenceAddress, type PresenceStatus } from "./presence.ts";
import { signInReply, type NonceSigner } from "./sign-in.ts";

export interface AgentPresenceParams {
  identity: Identity;
  accessPointUrl: string;
  http: HttpClient;
  logger: Logger;
  clientInfo?: string | undefined;
  /** Signs the heartbeat sign-in's nonce (default on the thread pool). */
  signer?: NonceSigner | undefined;
  onInvite(invite: PresenceInvite): void;
  /** The presence client's socket (tests script one). */
  openPresenceSocket?: OpenPresenceSocket | undefined;
}

export class AgentPresence {
  readonly #p: AgentPresenceParams;
  #client: PresenceClient | undefined;
  #server: string | undefined;
  #stopped = false;

  constructor(p: AgentPresenceParams) {
    this.#p = p;
  }

  get status(): PresenceStatus | "off" {
    return this.#client?.status ?? "off";
  }

  get client(): PresenceClient | undefined {
    return this.#client;
  }

  /** After each sign-in: the heartbeat server it named (or none). */
  update(heartbeatServer: string | undefined): void {
    if (this.#stopped) return;
    const server = heartbeatServer ? reachable(heartbeatServer, this.#p.accessPointUrl) : undefined;
    if (server === this.#server) return;
    this.#client?.stop();
    this.#client = undefined;
    this.#server = server;
    if (server === undefined) return;
    const client = new PresenceClient({
      aid: this.#p.identity.aid,
      signIn: () => this.#signIn(server),
      onInvite: (invite) => this.#p.onInvite(invite),
      logger: this.#p.logger,
      ...(this.#p.openPresenceSocket ? { openSocket: this.#p.openPresenceSocket } : {}),
    });
    this.#client = client;
    client.start();
  }

  stop(): void {
    this.#stopped = true;
    this.#client?.stop();
    this.#client = undefined;
  }

  async #signIn(server: string): Promise<PresenceAddress> {
    const url = `${server.replace(/\/+$/, "")}/sign_in`;
    const { identity } = this.#p;
    const reply = await signInReply({ url, identity, http: this.#p.http, clientInfo: this.#p.clientInfo, signer: this.#p.signer });
    const body = (reply.json ?? {}) as Record<string, unknown>;
    const serverIp = typeof body.server_ip === "string" && body.server_ip.length <= 255 ? body.server_ip : undefined;
    const port = typeof body.port === "number" ? body.port : typeof body.port === "string" ? Number.parseInt(body.port, 10) : Number.NaN;
    const cookie = parseSignCookie(body.sign_cookie);
    if (!serverIp || !Number.isInteger(port) || port < 1 || port > 65535 || cookie === undefined) {
      throw new NetworkError("BAD_REPLY", `${url} gave no server_ip, port and sign_cookie for ${identity.aid}`, { aid: identity.aid, url });
    }
    return { serverIp, port, cookie };
  }
}

/** https:// for the heartbeat server when the access point is https (the SDK does so). */
function reachable(heartbeatServer: string, accessPointUrl: string): string {
  return /^https:/i.test(accessPointUrl) ? heartbeatServer.replace(/^http:\/\//i, "https://") : heartbeatServer;
}
