// One peer channel: a session with one peer agent (e.g. `group.agentcp.io`) on an identity's
// message socket. Builds the session (`create_session_req` → `invite_agent_req`) every time the
// socket opens, carries payloads as `session_message`, and reports up/down to the group layer.
import { randomBytes } from "node:crypto";
import type { Logger } from "../types.ts";
import type { PeerChannel, PeerChannelEvents, PeerChannelStatus } from "./peer-channel.ts";
import { TypedEmitter } from "../emitter.ts";
import { backoffDelayMs, type BackoffOptions } from "./backoff.ts";

/** What a channel needs from the identity's socket. */
export interface SessionHost {
  readonly aid: string;
  socketOpen(): boolean;
  /** Sends a control request and resolves with the matching ack's `data` (rejects on timeout or close). */
  request(cmd: "create_session_req" | "invite_agent_req", data: Record<string, unknown>): Promise<Record<string, unknown>>;
  sendFrame(cmd: string, data: Record<string, unknown>): boolean;
  nextMessageId(): string;
  now(): number;
  random(): number;
  logger: Logger;
  backoff: BackoffOptions;
  onChannelClosed(channel: SessionChannel): void;
}

const okStatus = (v: unknown): boolean => v === 200 || v === "200";

export class SessionChannel implements PeerChannel {
  readonly peer: string;
  readonly #host: SessionHost;
  readonly #events: TypedEmitter<PeerChannelEvents>;
  #status: PeerChannelStatus = "connecting";
  #sessionId: string | undefined;
  /**
   * Payloads from the peer on the session being built (created, invite not yet acknowledged):
   * an ack and a payload can arrive in one read, before the ack's continuation runs. Handed over
   * right after `up`; dropped with the session.
   */
  #early: string[] = [];
  /** Bumped on every socket (re)open and on close: a late ack for an older attempt is ignored. */
  #generation = 0;
  #everUp = false;
  #failures = 0;
  /** Retries a failed session setup on the same socket; cleared on up, socket down and close. */
  #retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(peer: string, host: SessionHost) {
    this.peer = peer;
    this.#host = host;
    this.#events = new TypedEmitter((err, event) => host.logger.log("error", "network.channel-listener-failed", { peer, event, error: (err as Error).message }));
  }

  get status(): PeerChannelStatus {
    return this.#status;
  }
  get sessionId(): string | undefined {
    return this.#status === "up" ? this.#sessionId : undefined;
  }

  on<E extends keyof PeerChannelEvents>(event: E, listener: (payload: PeerChannelEvents[E]) => void): () => void {
    return this.#events.on(event, listener);
  }

  /** The identity's socket is open: build a fresh session. */
  socketUp(): void {
    if (this.#status === "closed") return;
    this.#clearRetry();
    this.#failures = 0;
    void this.#buildSession(++this.#generation);
  }

  /** The identity's socket is gone (or refused): the session is gone with it. */
  socketDown(reason: string): void {
    if (this.#status === "closed") return;
    this.#generation++;
    this.#clearRetry();
    const was = this.#status;
    this.#sessionId = undefined;
    this.#early = [];
    this.#setStatus("down");
    if (was !== "down") this.#events.emit("down", { reason });
  }

  async #buildSession(generation: number): Promise<void> {
    this.#setStatus("connecting");
    try {
      const created = await this.#host.request("create_session_req", {
        request_id: randomBytes(16).toString("hex"),
        type: "public",
        group_name: "1",
        subject: "",
        timestamp: String(this.#host.now()),
      });
      const sessionId = typeof created.session_id === "string" ? created.session_id : "";
      if (generation !== this.#generation) return;
      if (!sessionId) throw new Error("create_session_ack without session_id");
      this.#sessionId = sessionId;
      this.#early = [];
      // As the official SDK: invite the peer and use the session at once, never waiting for
      // invite_agent_ack. A refusing ack ends the session (retried); a missing one is logged.
      this.#host
        .request("invite_agent_req", {
          request_id: randomBytes(16).toString("hex"),
          acceptor_id: this.peer,
          invite_code: typeof created.identifying_code === "string" ? created.identifying_code : "",
          session_id: sessionId,
          inviter_id: this.#host.aid,
        })
        .then(
          (invited) => {
            if (generation !== this.#generation) return;
            if (okStatus(invited.status_code)) return void (this.#failures = 0);
            const why = `invite_agent_ack ${String(invited.status_code)}${typeof invited.message === "string" ? `: ${invited.message}` : ""}`;
            this.#sessionFailed(generation, new Error(why));
          },
          (err: unknown) => {
            if (generation !== this.#generation || (err as { code?: unknown }).code === "CLOSED") return;
            this.#host.logger.log("info", "network.invite-ack-missing", { aid: this.#host.aid, peer: this.peer, sessionId, error: (err as Error).message });
          },
        );
      this.#setStatus("up");
      const reconnect = this.#everUp;
      this.#everUp = true;
      this.#host.logger.log("info", "network.session-up", { aid: this.#host.aid, peer: this.peer, sessionId, reconnect });
      this.#events.emit("up", { sessionId, reconnect });
      const early = this.#early;
      this.#early = [];
      for (const payload of early) if (this.#status === "up" && this.#sessionId === sessionId) this.#events.emit("message", { payload, sessionId });
    } catch (err) {
      this.#sessionFailed(generation, err);
    }
  }

  /** The session could not be built (or the peer refused the invite): down, and built again after the backoff. */
  #sessionFailed(generation: number, err: unknown): void {
    if (generation !== this.#generation || this.#status === "closed") return;
    this.#generation++;
    const retryGeneration = this.#generation;
    this.#sessionId = undefined;
    this.#early = [];
    this.#setStatus("down");
    this.#failures++;
    const delay = backoffDelayMs(this.#failures, this.#host.random(), this.#host.backoff);
    this.#host.logger.log("warn", "network.session-failed", { aid: this.#host.aid, peer: this.peer, error: (err as Error).message, retryInMs: delay });
    this.#events.emit("down", { reason: "session-refused" });
    if (!this.#host.socketOpen()) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#host.socketOpen() && retryGeneration === this.#generation) void this.#buildSession(++this.#generation);
    }, delay);
    this.#retryTimer.unref?.();
  }

  /** Is `sessionId` this channel's session (up, or being built)? */
  owns(sessionId: string): boolean {
    return this.#sessionId !== undefined && this.#sessionId === sessionId && (this.#status === "up" || this.#status === "connecting");
  }

  /** A `session_message` from the peer on this channel's session (see `owns`). */
  deliver(payload: string, sessionId: string): void {
    if (!this.owns(sessionId)) return;
    if (this.#status === "up") this.#events.emit("message", { payload, sessionId });
    else if (this.#early.length < 1000) this.#early.push(payload);
  }

  /** A payload from the peer on another session while this one is up: delivered as the current session's (routed by sender). */
  deliverFromPeer(payload: string): void {
    if (this.#status === "up" && this.#sessionId !== undefined) this.#events.emit("message", { payload, sessionId: this.#sessionId });
  }

  send(payload: string): boolean {
    if (this.#status !== "up" || this.#sessionId === undefined || !this.#host.socketOpen()) return false;
    const now = this.#host.now();
    return this.#host.sendFrame("session_message", {
      message_id: this.#host.nextMessageId(),
      session_id: this.#sessionId,
      ref_msg_id: "",
      sender: this.#host.aid,
      receiver: this.peer,
      message: payload,
      timestamp: String(now),
    });
  }

  close(): void {
    if (this.#status === "closed") return;
    this.#generation++;
    this.#clearRetry();
    this.#sessionId = undefined;
    this.#early = [];
    this.#setStatus("closed");
    this.#host.onChannelClosed(this);
    this.#events.clear();
  }

  #clearRetry(): void {
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  #setStatus(status: PeerChannelStatus): void {
    this.#status = status;
  }
}
