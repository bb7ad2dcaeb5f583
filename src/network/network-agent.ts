// One identity on the network: signs in (access point, config, message service), keeps one
// message socket with ping/pong liveness, redials with backoff after a drop or a refused token,
// and stops for good — one typed IDENTITY_REJECTED naming the aid — when its key or certificate
// is refused. Peer channels ride on the socket; session_messages from anyone else are direct
// messages (direct-sessions.ts), handed up through `onDirect`.
import WebSocket from "ws";
import type { Logger } from "../types.ts";
import { errorFields, silentLogger } from "../log.ts";
import type { AgentLink } from "./peer-channel.ts";
import { NetworkError } from "./errors.ts";
import { createHttpClient, type HttpClient, type HttpReply, type HttpRequestInit, type TlsOptions } from "./http-client.ts";
import { sessionSocketUrl } from "./access-point.ts";
import { signInAgain, type NetworkRoute } from "./sign-in.ts";
import { CLOSE_REPLACED, CLOSE_TOKEN_EXPIRED } from "../wire/close-codes.ts";
import { diagnoseUnreachable } from "./unreachable.ts";
import { certificateProblemOf, closeMessageSocket, dialMessageSocket } from "./dial.ts";
import { computeBackoffDelay } from "../util/backoff.ts";
import { redialBackoff, SessionChannel, type SessionHost } from "./session-channel.ts";
import { TypedEmitter } from "../emitter.ts";
import { ControlRequests } from "./control-requests.ts";
import { nextMessageId } from "./message-id.ts";
import { AgentPresence } from "./agent-presence.ts";
import { PingWatch } from "./ping-watch.ts";
import type { PresenceStatus } from "./presence.ts";
import type { PresenceInvite } from "../wire/presence.ts";

import type { DirectLink, DirectMessage } from "./direct-link.ts";
import { DirectSessions } from "./direct-sessions.ts";

import type { ConnectAgentOptions, NetworkAgentCounters, NetworkAgentEvents, NetworkAgentStatus } from "./network-agent-types.ts";
import { processSignInPace, UNPACED, type SignInPace, type SignInRelease } from "./sign-in-pace.ts";
import { processTurnBudget } from "../util/turn-budget.ts";
export type { ConnectAgentOptions, NetworkAgentCounters, NetworkAgentEvents, NetworkAgentStatus } from "./network-agent-types.ts";

export class NetworkAgent implements AgentLink, DirectLink {
  readonly aid: string;
  /** Resolves when the first socket opens; rejects with IDENTITY_REJECTED or when closed first. */
  readonly ready: Promise<void>;
  readonly #o: ConnectAgentOptions;
  readonly #logger: Logger;
  readonly #http: HttpClient;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #events: TypedEmitter<NetworkAgentEvents>;
  readonly #channels = new Map<string, SessionChannel>();
  readonly #control: ControlRequests;
  readonly #counters: NetworkAgentCounters = { signIns: 0, signInFailures: 0, socketsOpened: 0, directMessages: 0, staleMessages: 0, otherSessionMessages: 0 };
  #status: NetworkAgentStatus = "signing-in";
  #ws: WebSocket | undefined;
  #token: string | undefined;
  /** The servers of the last sign-in whose socket opened: the next one goes to the message service alone. Cleared by any failure. */
  #route: NetworkRoute | undefined;
  #openedAt: number | undefined;
  #failures = 0;
  #lastMessageId = 0;
  #readyResolve!: () => void;
  #readyReject!: (err: Error) => void;
  /** Waits out the backoff before the next sign-in; cleared on close. */
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Stops waiting for the network to be back (another identity got in first): the retry then runs at once. */
  #wakeOff: (() => void) | undefined;
  readonly #pace: Pick<SignInPace, "take" | "onRecovered" | "recovered">;
  /** Aborted on close: a sign-in waiting for its turn stops waiting. */
  readonly #stop = new AbortController();
  /** Pings the open socket; armed on open, cleared on socket close and on close. */
  readonly #ping: PingWatch;
  readonly #sessionHost: SessionHost;
  /** Presence with the heartbeat server the last sign-in named; stopped on close and rejection. */
  readonly #presence: AgentPresence | undefined;
  readonly #direct: DirectSessions;

  constructor(options: ConnectAgentOptions) {
    this.#o = options;
    this.aid = options.identity.aid;
    this.#logger = options.logger ?? silentLogger;
    try {
      this.#http = options.http ?? createHttpClient(options.tls);
    } catch (err) {
      throw new NetworkError("INVALID_OPTIONS", `${this.aid}: ${(err as Error).message}`, { aid: this.aid, cause: err });
    }
    this.#now = options.now ?? Date.now;
    this.#pace = options.signInPace === null ? UNPACED : (options.signInPace ?? processSignInPace);
    this.#random = options.random ?? Math.random;
    this.#control = new ControlRequests({ aid: this.aid, timeoutMs: options.ackTimeoutMs ?? 15_000 });
    this.#events = new TypedEmitter((err, event) => this.#logger.log("error", "network.listener-failed", { aid: this.aid, event, ...errorFields(err) }));
    this.ready = new Promise<void>((resolve, reject) => {
      this.#readyResolve = resolve;
      this.#readyReject = reject;
    });
    this.#sessionHost = {
      aid: this.aid,
      socketOpen: () => this.#socketOpen(),
      request: (cmd, data) => this.#control.request(cmd, data, () => this.#sendFrame(cmd, data)),
      sendFrame: (cmd, data) => this.#sendFrame(cmd, data),
      nextMessageId: () => {
        this.#lastMessageId = nextMessageId(this.#lastMessageId, this.#now());
        return String(this.#lastMessageId);
      },
      now: () => this.#now(),
      random: () => this.#random(),
      logger: this.#logger,
      backoff: redialBackoff(options.backoff),
      inviteAckWaitMs: options.inviteAckWaitMs ?? 5000,
      onChannelClosed: (ch) => {
        if (this.#channels.get(ch.peer) === ch) this.#channels.delete(ch.peer);
      },
    };
    this.#ping = new PingWatch({ aid: this.aid, intervalMs: options.pingIntervalMs ?? 20_000, logger: this.#logger });
    // An invite over presence is joined over the socket, like one that came on it.
    const onInvite = (i: PresenceInvite) => this.#onInvite({ session_id: i.sessionId, inviter_id: i.inviter, invite_code: i.inviteCode });
    this.#presence = options.presence === false ? undefined : new AgentPresence({ ...options, http: this.#http, logger: this.#logger, onInvite });
    // Not group chat: someone talking to us directly. Never fed to a group.
    this.#direct = new DirectSessions({ ...this.#sessionHost, deliver: (m) => (this.#counters.directMessages++, this.#events.emit("direct", m)) });
    // Callers may never await `ready`; its rejection is reported through `rejected` and the log.
    this.ready.catch(() => {});
    if (options.tls?.insecureTls) {
      this.#logger.log("warn", "network.tls-insecure", { aid: this.aid, accessPointUrl: options.accessPointUrl, note: "TLS certificates are NOT verified (network.insecureTls)" });
    }
    this.#connectSafely();
  }

  get status(): NetworkAgentStatus {
    return this.#status;
  }

  /** The current message-service token (for later HTTP calls such as publishing agent.md). */
  token(): string | undefined {
    return this.#token;
  }

  /** The UDP presence: "off" when the network names no heartbeat server (or presence is turned off). */
  get presenceStatus(): PresenceStatus | "off" {
    return this.#presence?.status ?? "off";
  }

  counters(): Readonly<NetworkAgentCounters> {
    return { ...this.#counters };
  }

  on<E extends keyof NetworkAgentEvents>(event: E, listener: (payload: NetworkAgentEvents[E]) => void): () => void {
    return this.#events.on(event, listener);
  }

  /** An HTTP call with the network's TLS rules and `Authorization: Bearer <message token>`. */
  fetch(url: string, init: HttpRequestInit = {}): Promise<HttpReply> {
    const headers = { ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}), ...init.headers };
    return this.#http.request(url, { ...init, headers });
  }

  onDirect(listener: (message: DirectMessage) => void): () => void {
    return this.#events.on("direct", listener);
  }

  sendDirect(p: { peer: string; text: string; sessionId?: string | undefined }): Promise<{ sessionId: string }> {
    return this.#direct.send(p);
  }

  channel(peer: string): SessionChannel {
    let ch = this.#channels.get(peer);
    if (!ch) {
      ch = new SessionChannel(peer, this.#sessionHost);
      this.#channels.set(peer, ch);
      if (this.#status === "rejected" || this.#status === "closed") ch.socketDown(this.#status);
      else if (this.#socketOpen()) ch.socketUp();
    }
    return ch;
  }

  #socketOpen(): boolean {
    return this.#ws !== undefined && this.#ws.readyState === WebSocket.OPEN && this.#status === "open";
  }

  #setStatus(status: NetworkAgentStatus): void {
    if (this.#status === status) return;
    this.#status = status;
    this.#events.emit("status", { status });
  }

  /** A throw anywhere in a connect attempt (a bad URL from the config service…) is one more failure, never an unhandled rejection. */
  #connectSafely(): void {
    this.#connect().catch((err: unknown) => this.#scheduleRetry("connect-failed", err));
  }

  async #connect(): Promise<void> {
    if (this.#status === "closed" || this.#status === "rejected") return;
    this.#setStatus("signing-in");
    // A turn among the process's sign-ins (sign-in-pace.ts), held until the socket opens or fails.
    const release = await this.#pace.take(this.#o.signInPriority, this.#stop.signal);
    let url: string;
    let nextRoute: NetworkRoute;
    try {
      this.#counters.signIns++;
      // Taken, not kept: should this attempt fail anywhere, the next one asks the access point again.
      const route = this.#route;
      this.#route = undefined;
      const signedIn = await signInAgain({ accessPointUrl: this.#o.accessPointUrl, identity: this.#o.identity, http: this.#http, clientInfo: this.#o.clientInfo, signer: this.#o.signer, route });
      this.#token = signedIn.messageToken;
      this.#presence?.update(signedIn.heartbeatServer);
      url = sessionSocketUrl({ messageServer: signedIn.messageServer, aid: this.aid, token: signedIn.messageToken });
      nextRoute = { messageServer: signedIn.messageServer, heartbeatServer: signedIn.heartbeatServer };
    } catch (err) {
      release();
      this.#counters.signInFailures++;
      if (err instanceof NetworkError && err.code === "IDENTITY_REJECTED") return this.#reject(err);
      // Never connected yet: a wrong host, port, scheme or certificate is named at once instead
      // of being retried for ever. A network that was up and went away is retried.
      const unreachable = this.#counters.socketsOpened === 0 ? await diagnoseUnreachable(err, this.#o.accessPointUrl, this.#o.tls) : undefined;
      if (unreachable !== undefined) return this.#reject(new NetworkError("UNREACHABLE", unreachable, { aid: this.aid, url: this.#o.accessPointUrl, cause: err }));
      return this.#scheduleRetry("sign-in-failed", err);
    }
    if ((this.#status as NetworkAgentStatus) === "closed") return release();
    try {
      this.#dial(url, release, nextRoute);
    } catch (err) {
      release();
      throw err;
    }
  }

  #dial(url: string, release: SignInRelease, route: NetworkRoute): void {
    const ws = dialMessageSocket(url, this.#o.tls, this.#o.dialTimeoutMs, this.#http.socketAgent?.(url));
    this.#ws = ws;
    ws.once("close", release);
    let opened = false;
    ws.on("unexpected-response", (_req, res) => {
      // A refused token (401) or a server problem: either way sign in again after the backoff.
      this.#logger.log("warn", "network.socket-refused", { aid: this.aid, status: res.statusCode });
      res.resume();
      ws.terminate();
    });
    ws.on("open", () => {
      if (this.#ws !== ws || this.#status === "closed") return void ws.close();
      opened = true;
      this.#route = route;
      release();
      // The network takes us back: whoever of this process waits out a backoff for it tries now.
      this.#pace.recovered(this.#o.accessPointUrl);
      this.#openedAt = this.#now();
      this.#counters.socketsOpened++;
      this.#setStatus("open");
      this.#ping.arm(ws);
      this.#logger.log("info", "network.socket-open", { aid: this.aid });
      this.#readyResolve();
      // The sessions are built in a turn with time left (sockets of many identities open in one).
      (this.#o.turns ?? processTurnBudget).run(() => {
        if (this.#ws === ws && this.#socketOpen()) for (const ch of this.#channels.values()) ch.socketUp();
      });
    });
    ws.on("message", (data, isBinary) => {
      if (this.#ws === ws && !isBinary) this.#onFrame(data.toString());
    });
    ws.on("error", (err) => this.#logger.log("debug", "network.socket-error", { aid: this.aid, error: err.message }));
    ws.on("close", (code, reasonBuf) => {
      if (this.#ws !== ws) return;
      this.#ws = undefined;
      this.#ping.clear();
      this.#control.failAll(new NetworkError("CLOSED", "socket closed", { aid: this.aid }));
      const reason = code === CLOSE_TOKEN_EXPIRED ? "token-expired" : opened ? "socket-closed" : "dial-failed";
      for (const ch of this.#channels.values()) ch.socketDown(reason);
      this.#direct.socketDown();
      if (this.#status === "closed" || this.#status === "rejected") return;
      // A message server whose certificate does not verify will not start to: stopped with the fix, said once.
      const certificate = opened ? undefined : certificateProblemOf(ws);
      if (certificate !== undefined) return this.#reject(new NetworkError("UNREACHABLE", certificate, { aid: this.aid }), "network.message-server-untrusted");
      // Our own aid signed in on a newer socket, from another process or host (a lock file sees
      // only this machine's): signing in again would take it back, and the other would take it
      // back in turn, for ever. This one stops, with the line that says why.
      if (opened && code === CLOSE_REPLACED) {
        const why = `${this.aid} is signed in from another process or host: the network replaced this connection with the newer one. Stopped here so the two do not take the connection from each other in turn; one identity runs in one process — stop the other, then start this one again`;
        return this.#reject(new NetworkError("SIGNED_IN_ELSEWHERE", why, { aid: this.aid }), "network.signed-in-elsewhere");
      }
      const stable = opened && this.#openedAt !== undefined && this.#now() - this.#openedAt >= (this.#o.stableMs ?? 30_000);
      if (stable) this.#failures = 0;
      this.#logger.log(opened ? "info" : "warn", "network.socket-closed", { aid: this.aid, code, reason: reasonBuf.toString() || reason });
      if (stable) {
        this.#setStatus("waiting");
        this.#connectSafely();
      } else this.#scheduleRetry(reason);
    });
  }

  #scheduleRetry(reason: string, err?: unknown): void {
    if (this.#status === "closed" || this.#status === "rejected") return;
    this.#failures++;
    const delay = computeBackoffDelay(this.#failures - 1, this.#sessionHost.backoff, this.#random);
    this.#setStatus("waiting");
    this.#logger.log("warn", "network.retry", { aid: this.aid, reason, failures: this.#failures, retryInMs: delay, ...(err ? errorFields(err) : {}) });
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => this.#retryNow(), delay);
    this.#wakeOff?.();
    this.#wakeOff = this.#pace.onRecovered(this.#o.accessPointUrl, () => this.#retryNow(), this.#o.signInPriority);
  }

  #retryNow(): void {
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#wakeOff?.();
    this.#wakeOff = undefined;
    this.#connectSafely();
  }

  #reject(err: NetworkError, errorEvent?: string): void {
    this.#setStatus("rejected");
    // Unreachable reaches the user as the one line `ready` rejects with; at info it does not repeat there.
    if (errorEvent !== undefined) this.#logger.log("error", errorEvent, { aid: this.aid, code: err.code, error: err.message });
    else if (err.code === "UNREACHABLE") this.#logger.log("info", "network.unreachable", { aid: this.aid, code: err.code, error: err.message });
    else this.#logger.log("error", "network.identity-rejected", { aid: this.aid, code: err.code, error: err.message });
    for (const ch of this.#channels.values()) ch.socketDown("identity-rejected");
    this.#presence?.stop();
    this.#readyReject(err);
    this.#events.emit("rejected", { error: err });
  }

  #sendFrame(cmd: string, data: Record<string, unknown>): boolean {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify({ cmd, data }));
    return true;
  }

  #onFrame(text: string): void {
    let frame: { cmd?: unknown; data?: unknown };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      this.#logger.log("debug", "network.frame-malformed", { aid: this.aid });
      return;
    }
    const data = (frame?.data !== null && typeof frame?.data === "object" ? frame.data : {}) as Record<string, unknown>;
    switch (frame?.cmd) {
      case "create_session_ack":
        return this.#control.settle("create_session_req", data);
      case "invite_agent_ack":
        return this.#control.settle("invite_agent_req", data);
      case "session_message":
        return this.#onSessionMessage(data);
      case "invite_agent_req":
        return this.#onInvite(data);
      default:
        this.#logger.log("debug", "network.frame-other", { aid: this.aid, cmd: typeof frame?.cmd === "string" ? frame.cmd : undefined });
    }
  }

  #onSessionMessage(data: Record<string, unknown>): void {
    const sender = typeof data.sender === "string" ? data.sender : "";
    const sessionId = typeof data.session_id === "string" ? data.session_id : "";
    const payload = typeof data.message === "string" ? data.message : "";
    const ch = this.#channels.get(sender);
    if (ch?.owns(sessionId)) return ch.deliver(payload, sessionId);
    // As the official SDK: group frames are routed by their sender, also when they arrive on
    // another session than the one we opened (a session the service invited us into).
    if (ch?.status === "up") {
      this.#counters.otherSessionMessages++;
      return ch.deliverFromPeer(payload);
    }
    if (ch) {
      this.#counters.staleMessages++;
      this.#logger.log("debug", "network.message-stale", { aid: this.aid, sender, sessionId });
      return;
    }
    this.#direct.received(data);
  }

  /** The network invites us into a session: accepted (join_session_req), as the SDKs accept every invite. */
  #onInvite(data: Record<string, unknown>): void {
    const inviter = typeof data.inviter_id === "string" ? data.inviter_id : typeof data.inviter_agent_id === "string" ? data.inviter_agent_id : "";
    this.#direct.invited(data, this.#channels.has(inviter));
  }

  async close(): Promise<void> {
    if (this.#status === "closed") return;
    this.#setStatus("closed");
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#wakeOff?.();
    this.#stop.abort();
    this.#ping.clear();
    this.#presence?.stop();
    this.#control.failAll(new NetworkError("CLOSED", "agent closed", { aid: this.aid }));
    for (const ch of [...this.#channels.values()]) ch.close();
    this.#readyReject(new NetworkError("CLOSED", `${this.aid} closed before it connected`, { aid: this.aid }));
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws) await closeMessageSocket(ws, 1000);
    if (!this.#o.http) this.#http.close();
    this.#events.clear();
  }
}

/** Signs `identity` in and keeps its message socket; `channel(peer)` gives a session with a peer. */
export function connectAgent(options: ConnectAgentOptions): NetworkAgent {
  return new NetworkAgent(options);
}
