// Presence over UDP, as every ACP SDK keeps it: sign in at `<heartbeat_server>/sign_in` (the same
// two-step sign-in) for `{ server_ip, port, sign_cookie }`, then send heartbeat datagrams (type
// 513: our aid and the cookie) to that address — at once, then every interval. The server's
// answer (258) names the next interval (never taken below 5 s); 401 there, or no answer for three
// intervals (the Python SDK's count; acp-ts waits six), means sign in again — at most every 5 s,
// backing off to 30 s while sign-in fails. An invite (259) is answered (516) and handed over:
// the identity joins that session over its message socket. Nothing here touches the message
// socket or the sessions; a network without presence only costs a logged sign-in failure.
// Timers: the next beat and the next sign-in, owned here and cleared on stop.
import { createSocket, type Socket } from "node:dgram";
import type { Logger } from "../types.ts";
import { errorFields, silentLogger } from "../log.ts";
import { decodePresence, encodeHeartbeat, encodeInviteAck, NEXT_BEAT_SIGN_IN_AGAIN, type PresenceInvite } from "../wire/presence.ts";

/** Where to beat, from the heartbeat server's sign-in. */
export interface PresenceAddress {
  serverIp: string;
  port: number;
  cookie: bigint;
}

/** The UDP socket the client beats on (real: dgram udp4 on any port; tests script one). */
export interface PresenceSocket {
  send(datagram: Buffer, port: number, host: string): void;
  close(): void;
}

export type OpenPresenceSocket = (onDatagram: (datagram: Buffer) => void, onError: (err: Error) => void) => PresenceSocket;

export type PresenceStatus = "idle" | "signing-in" | "online" | "waiting" | "stopped";

export interface PresenceCounters {
  signIns: number;
  signInFailures: number;
  beatsSent: number;
  acks: number;
  invites: number;
}

export interface PresenceClientParams {
  aid: string;
  /** The heartbeat server's sign-in; rejects when it fails. */
  signIn(): Promise<PresenceAddress>;
  /** Default: a dgram udp4 socket on any local port. */
  openSocket?: OpenPresenceSocket;
  /** An invite that came over presence (answered already): join the session. */
  onInvite(invite: PresenceInvite): void;
  logger?: Logger;
  /** Local clock for the ack deadline. Default Date.now. */
  now?: () => number;
}

/** The SDKs never beat faster than this, whatever the server says. */
export const MIN_BEAT_MS = 5000;
/** Intervals without an answer after which the client signs in again. */
export const MISSED_BEATS = 3;
/** At most one sign-in per this long (the SDKs' reconnect limit); doubled per failure up to MAX_SIGN_IN_BACKOFF_MS. */
export const SIGN_IN_SPACING_MS = 5000;
export const MAX_SIGN_IN_BACKOFF_MS = 30_000;

export class PresenceClient {
  readonly #p: PresenceClientParams;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #counters: PresenceCounters = { signIns: 0, signInFailures: 0, beatsSent: 0, acks: 0, invites: 0 };
  #status: PresenceStatus = "idle";
  #address: PresenceAddress | undefined;
  #socket: PresenceSocket | undefined;
  #intervalMs = MIN_BEAT_MS;
  #lastAckAt = 0;
  #lastBeatAt = 0;
  #lastSignInAt: number | undefined;
  #failures = 0;
  #seq = 0;
  /** Bumped on every sign-in and on stop: a late sign-in answer of an older attempt is ignored. */
  #generation = 0;
  /** The next heartbeat; armed while online, cleared when signing in again and on stop. */
  #beatTimer: ReturnType<typeof setTimeout> | undefined;
  /** The next sign-in (spacing or backoff); cleared when it runs and on stop. */
  #signInTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(p: PresenceClientParams) {
    this.#p = p;
    this.#log = p.logger ?? silentLogger;
    this.#now = p.now ?? Date.now;
  }

  get status(): PresenceStatus {
    return this.#status;
  }

  /** The interval the server asked for (at least 5 s). */
  get intervalMs(): number {
    return this.#intervalMs;
  }

  counters(): Readonly<PresenceCounters> {
    return { ...this.#counters };
  }

  start(): void {
    if (this.#status !== "idle") return;
    this.#signInSoon("start");
  }

  stop(): void {
    if (this.#status === "stopped") return;
    this.#status = "stopped";
    this.#generation++;
    this.#clearTimers();
    this.#closeSocket();
  }

  /** Sign in now, or once SIGN_IN_SPACING_MS (more after failures) has passed since the last attempt. */
  #signInSoon(reason: string): void {
    if (this.#status === "stopped") return;
    this.#clearTimers();
    this.#status = "waiting";
    const spacing = Math.min(MAX_SIGN_IN_BACKOFF_MS, SIGN_IN_SPACING_MS * 2 ** Math.max(0, this.#failures - 1));
    const wait = this.#lastSignInAt === undefined ? 0 : Math.max(0, this.#lastSignInAt + (this.#failures > 0 ? spacing : SIGN_IN_SPACING_MS) - this.#now());
    this.#log.log(reason === "start" ? "debug" : "info", "presence.sign-in-scheduled", { aid: this.#p.aid, reason, inMs: wait });
    if (wait === 0) return void this.#signIn();
    this.#signInTimer = setTimeout(() => {
      this.#signInTimer = undefined;
      void this.#signIn();
    }, wait);
    this.#signInTimer.unref?.();
  }

  async #signIn(): Promise<void> {
    const generation = ++this.#generation;
    this.#status = "signing-in";
    this.#lastSignInAt = this.#now();
    this.#counters.signIns++;
    let address: PresenceAddress;
    try {
      address = await this.#p.signIn();
    } catch (err) {
      if (generation !== this.#generation) return;
      this.#counters.signInFailures++;
      this.#failures++;
      // The first failure in a row says why at warn; the retries that follow are quiet.
      this.#log.log(this.#failures === 1 ? "warn" : "debug", "presence.sign-in-failed", { aid: this.#p.aid, failures: this.#failures, ...errorFields(err) });
      this.#signInSoon("sign-in-failed");
      return;
    }
    if (generation !== this.#generation) return;
    this.#failures = 0;
    this.#address = address;
    // A new socket (a new local port) with every sign-in, as the SDKs do.
    this.#closeSocket();
    try {
      this.#socket = (this.#p.openSocket ?? openUdpSocket)((d) => this.#onDatagram(d, generation), (err) => this.#onSocketError(err, generation));
    } catch (err) {
      this.#failures++;
      this.#log.log("warn", "presence.socket-failed", { aid: this.#p.aid, ...errorFields(err) });
      this.#signInSoon("socket-failed");
      return;
    }
    this.#status = "online";
    this.#lastAckAt = this.#now();
    this.#log.log("info", "presence.online", { aid: this.#p.aid, server: `${address.serverIp}:${address.port}` });
    this.#beat(generation);
  }

  #beat(generation: number): void {
    if (generation !== this.#generation || this.#status !== "online") return;
    if (this.#now() - this.#lastAckAt > MISSED_BEATS * this.#intervalMs) {
      this.#log.log("warn", "presence.no-answer", { aid: this.#p.aid, silentMs: this.#now() - this.#lastAckAt });
      return this.#signInSoon("no-answer");
    }
    this.#send(encodeHeartbeat({ seq: ++this.#seq, aid: this.#p.aid, cookie: this.#address!.cookie }));
    this.#counters.beatsSent++;
    this.#lastBeatAt = this.#now();
    this.#armBeat(generation);
  }

  /** The next beat one interval after the last one (re-armed when the server names another interval). */
  #armBeat(generation: number): void {
    if (this.#beatTimer !== undefined) clearTimeout(this.#beatTimer);
    this.#beatTimer = setTimeout(() => {
      this.#beatTimer = undefined;
      this.#beat(generation);
    }, Math.max(0, this.#lastBeatAt + this.#intervalMs - this.#now()));
    this.#beatTimer.unref?.();
  }

  #onDatagram(datagram: Buffer, generation: number): void {
    if (generation !== this.#generation || this.#status !== "online") return;
    const d = decodePresence(datagram);
    if (!d) return void this.#log.log("debug", "presence.datagram-dropped", { aid: this.#p.aid, bytes: datagram.length });
    if (d.kind === "heartbeat-ack") {
      this.#counters.acks++;
      this.#lastAckAt = this.#now();
      if (d.nextBeatMs === NEXT_BEAT_SIGN_IN_AGAIN) {
        this.#log.log("info", "presence.sign-in-again", { aid: this.#p.aid, note: "the heartbeat server does not know us (401)" });
        return this.#signInSoon("401");
      }
      const next = d.nextBeatMs > 0 ? Math.max(MIN_BEAT_MS, d.nextBeatMs) : this.#intervalMs;
      if (next !== this.#intervalMs) {
        // As the SDKs' one-second tick: the beat waited for now follows the new interval.
        this.#intervalMs = next;
        if (this.#beatTimer !== undefined) this.#armBeat(generation);
      }
      return;
    }
    if (d.kind === "invite") {
      this.#counters.invites++;
      // Answered at once, as the SDKs do, then joined over the message socket.
      this.#send(encodeInviteAck({ seq: ++this.#seq, aid: this.#p.aid, inviter: d.invite.inviter, sessionId: d.invite.sessionId, cookie: this.#address!.cookie }));
      this.#log.log("info", "presence.invite", { aid: this.#p.aid, inviter: d.invite.inviter, sessionId: d.invite.sessionId });
      try {
        this.#p.onInvite(d.invite);
      } catch (err) {
        this.#log.log("error", "presence.invite-handler-failed", { aid: this.#p.aid, ...errorFields(err) });
      }
    }
  }

  #onSocketError(err: Error, generation: number): void {
    if (generation !== this.#generation || this.#status === "stopped") return;
    this.#log.log("warn", "presence.socket-error", { aid: this.#p.aid, ...errorFields(err) });
    this.#signInSoon("socket-error");
  }

  #send(datagram: Buffer): void {
    const a = this.#address;
    if (!a || !this.#socket) return;
    try {
      this.#socket.send(datagram, a.port, a.serverIp);
    } catch (err) {
      this.#log.log("debug", "presence.send-failed", { aid: this.#p.aid, ...errorFields(err) });
    }
  }

  #closeSocket(): void {
    const s = this.#socket;
    this.#socket = undefined;
    try {
      s?.close();
    } catch {
      // Already closed.
    }
  }

  #clearTimers(): void {
    if (this.#beatTimer !== undefined) clearTimeout(this.#beatTimer);
    this.#beatTimer = undefined;
    if (this.#signInTimer !== undefined) clearTimeout(this.#signInTimer);
    this.#signInTimer = undefined;
  }
}

/** A dgram udp4 socket on any local port; it never keeps the process alive. */
export const openUdpSocket: OpenPresenceSocket = (onDatagram, onError) => {
  const socket: Socket = createSocket("udp4");
  socket.on("message", (msg) => onDatagram(msg));
  socket.on("error", onError);
  socket.bind(0);
  socket.unref();
  return {
    send: (datagram, port, host) => socket.send(datagram, port, host, (err) => err && onError(err)),
    close: () => socket.close(),
  };
};
