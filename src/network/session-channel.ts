// One peer channel: a session with one peer agent (e.g. `group.agentcp.io`) on an identity's
// message socket. Builds the session (`create_session_req` → `invite_agent_req` → waits for
// `invite_agent_ack`, bounded) every time the socket opens and when the group layer finds it
// silent, carries payloads as `session_message`, and reports up/down to the group layer.
import type { PeerChannel, PeerChannelEvents, PeerChannelStatus } from "./peer-channel.ts";
import { TypedEmitter } from "../emitter.ts";
import { computeBackoffDelay, type BackoffSettings } from "../util/backoff.ts";
import { createSession, invitePeer, inviteRefusal, okStatus, sendSessionMessage, type SessionSocket } from "./session-requests.ts";

/** What a channel needs from the identity's socket. */
export interface SessionHost extends SessionSocket {
  random(): number;
  /** The redial backoff (see redialBackoff in network-agent.ts). */
  backoff: BackoffSettings;
  /**
   * How long a new session waits for invite_agent_ack before it is used anyway (a network that
   * never acks must not stall us; a warning says so).
   */
  inviteAckWaitMs: number;
  onChannelClosed(channel: SessionChannel): void;
}

type InviteOutcome = { kind: "acked" } | { kind: "refused"; why: string } | { kind: "no-ack"; why: string };


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
  /** Bounds the wait for invite_agent_ack; cleared when the ack comes, on socket down and close. */
  #inviteWaitTimer: ReturnType<typeof setTimeout> | undefined;

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
      const { sessionId, inviteCode } = await createSession(this.#host);
      if (generation !== this.#generation) return;
      this.#sessionId = sessionId;
      this.#early = [];
      // As evol does (and a strict service needs): the session is used only once the peer joined
      // it — invite_agent_ack — so nothing we send first is dropped. A network that never acks
      // gets the session after `inviteAckWaitMs`, with a warning; a refusal ends it (retried).
      const invited = invitePeer(this.#host, { sessionId, inviteCode, peer: this.peer });
      const outcome = await this.#awaitInvite(invited);
      if (generation !== this.#generation) return;
      if (outcome.kind === "refused") return this.#sessionFailed(generation, new Error(outcome.why));
      if (outcome.kind === "no-ack") {
        this.#host.logger.log("warn", "network.invite-ack-missing", { aid: this.#host.aid, peer: this.peer, sessionId, error: outcome.why, note: "using the session without invite_agent_ack" });
        // A late answer still counts: a refusal ends the session then.
        void invited.then(
          (data) => {
            if (generation === this.#generation && !okStatus(data.status_code)) this.#sessionFailed(generation, new Error(inviteRefusal(data)));
          },
          () => {},
        );
      } else this.#failures = 0;
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

  /** The invite's ack, or "no-ack" after `inviteAckWaitMs` (or the request's own timeout). Never rejects. */
  #awaitInvite(invited: Promise<Record<string, unknown>>): Promise<InviteOutcome> {
    return new Promise<InviteOutcome>((resolve) => {
      this.#inviteWaitTimer = setTimeout(() => {
        this.#inviteWaitTimer = undefined;
        resolve({ kind: "no-ack", why: `no invite_agent_ack within ${this.#host.inviteAckWaitMs} ms` });
      }, this.#host.inviteAckWaitMs);
      this.#inviteWaitTimer.unref?.();
      invited.then(
        (data) => resolve(okStatus(data.status_code) ? { kind: "acked" } : { kind: "refused", why: inviteRefusal(data) }),
        (err: unknown) => resolve({ kind: "no-ack", why: (err as Error).message }),
      );
    }).finally(() => this.#clearInviteWait());
  }

  /**
   * The group layer found the session silent while the socket is up (nothing answered, nothing
   * pushed): it goes down with `reason` and a new one is built on the same socket.
   */
  renew(reason: string): void {
    if (this.#status !== "up") return;
    const sessionId = this.#sessionId;
    this.#generation++;
    this.#clearRetry();
    this.#sessionId = undefined;
    this.#early = [];
    this.#setStatus("down");
    this.#host.logger.log("warn", "network.session-renewed", { aid: this.#host.aid, peer: this.peer, sessionId, reason });
    this.#events.emit("down", { reason });
    if (this.#host.socketOpen()) void this.#buildSession(++this.#generation);
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
    const delay = computeBackoffDelay(this.#failures - 1, this.#host.backoff, () => this.#host.random());
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
    return sendSessionMessage(this.#host, { sessionId: this.#sessionId, receiver: this.peer, message: payload });
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
    this.#clearInviteWait();
  }

  #clearInviteWait(): void {
    if (this.#inviteWaitTimer) clearTimeout(this.#inviteWaitTimer);
    this.#inviteWaitTimer = undefined;
  }

  #setStatus(status: PeerChannelStatus): void {
    this.#status = status;
  }
}

/**
 * The redial backoff: exponential from 1 s up to 60 s by default, with "equal jitter" (half of
 * each step random): identities refused at once do not come back in lockstep, and no retry is
 * ever sooner than half a step.
 */
export function redialBackoff(o: { baseMs?: number; maxMs?: number } | undefined): BackoffSettings {
  return { baseMs: o?.baseMs ?? 1000, maxMs: o?.maxMs ?? 60_000, jitter: 0.5 };
}
