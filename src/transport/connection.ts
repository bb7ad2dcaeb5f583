// The ACP group client over a PeerChannel: the session with `group.<ap>` that the network layer
// (re)builds. A state machine (idle → connecting → syncing → open ⇄ reconnecting → closed). On
// every new session: register_online (answered) → per group max(service cursor, saved cursor) →
// paged pull → pushes. Late events of an older session are no-ops.
import type { PeerChannel } from "../network/peer-channel.ts";
import type { GroupSender, Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { TypedEmitter } from "../emitter.ts";
import type { Plain } from "../wire/plain.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import { connectionSettings, type GroupConnectionParams } from "./connection-options.ts";
import { TransportError } from "./errors.ts";
import { wait } from "../util/wait.ts";
import type { GroupFeed, GroupFeedCounters, GroupFeedStatus } from "./group-feed.ts";
import { GroupFeeds } from "./group-feeds.ts";
import { handleInboundFrame, type InboundDeps } from "./inbound.ts";
import type { ResponseFrame } from "./pending-requests.ts";
import { sendGroupMessage, type SendMessageDeps } from "./send-message.ts";
import { SessionRequests, requestFailed } from "./session-requests.ts";
import { SessionUpkeep } from "./session-upkeep.ts";

/** How long close() waits for the answer to unregister_online. */
const UNREGISTER_GRACE_MS = 2000;

// What createGroupConnection is given, and what its `onEvent` is handed.
export type { GroupConnectionParams } from "./connection-options.ts";
export type { GroupEvent } from "./group-event-feed.ts";

export type ConnectionStatus = "idle" | "connecting" | "syncing" | "open" | "reconnecting" | "closed";

export interface ConnectionCounters extends GroupFeedCounters {
  framesIn: number;
  /** Not JSON, not an object, or a field of the wrong type (responses included). */
  malformedFrames: number;
  /** Invalid messages inside an otherwise valid batch push or pull page. */
  malformedMessages: number;
  unknownActions: number;
  oversizeFrames: number;
  /** Responses whose request_id matches no request in flight. */
  unmatchedResponses: number;
  /** Pushes and notifications for groups we did not subscribe to. */
  unknownGroups: number;
  reconnects: number;
  requestTimeouts: number;
  heartbeatFailures: number;
  rateLimitedRetries: number;
  /** register_online that failed or went unanswered (unanswered: retried within seconds; refused: at the next heartbeat). */
  registerFailures: number;
  /** Sessions that answered nothing for a whole request timeout while up, and were rebuilt. */
  silentSessions: number;
  /** Frames of a session we already left. */
  staleFrames: number;
}

export interface GroupConnectionEvents {
  status: { status: ConnectionStatus; previous: ConnectionStatus };
  /** The session went down; the network layer builds a new one. */
  disconnected: { reason: string };
}

export type Listener<E extends keyof GroupConnectionEvents> = (payload: GroupConnectionEvents[E]) => void;

export interface GroupConnection extends GroupSender {
  /** Resolves once a session is up and the initial pull of every group is done; rejects on close. */
  start(): Promise<void>;
  readonly status: ConnectionStatus;
  /** The group service's aid. */
  readonly peer: string;
  on<E extends keyof GroupConnectionEvents>(event: E, listener: Listener<E>): () => void;
  off<E extends keyof GroupConnectionEvents>(event: E, listener: Listener<E>): void;
  counters(): Readonly<ConnectionCounters>;
  /** Acknowledges, if it moved, min(last accepted, `ackCursor`) — call it when the settled cursor advances. */
  acknowledge(groupId: string): void;
  /** Highest msg id accepted by onMessages for the group (starts at the cursor). */
  lastFed(groupId: string): number | undefined;
  groupStatus(groupId: string): GroupFeedStatus | undefined;
  /** Any other group action (get_group_info, get_members, get_cursor …); returns `data`, throws on a non-zero code. */
  request(action: string, options?: { groupId?: string; params?: Plain }): Promise<unknown>;
  close(): Promise<void>;
}

export function createGroupConnection(params: GroupConnectionParams): GroupConnection {
  return new ChannelGroupConnection(params);
}

class ChannelGroupConnection implements GroupConnection {
  readonly #p: GroupConnectionParams;
  readonly #channel: PeerChannel;
  readonly #log: Logger;
  readonly #requestTimeoutMs: number;
  readonly #inbound: InboundDeps;
  readonly #send: SendMessageDeps;
  readonly #groups: GroupFeeds;
  readonly #feeds: ReadonlyMap<string, GroupFeed>;
  readonly #counters: ConnectionCounters = {
    framesIn: 0, malformedFrames: 0, malformedMessages: 0, unknownActions: 0, oversizeFrames: 0,
    unmatchedResponses: 0, unknownGroups: 0, reconnects: 0, requestTimeouts: 0, heartbeatFailures: 0,
    rateLimitedRetries: 0, handlerErrors: 0, pullFailures: 0, messagesFed: 0, heldOverflows: 0, gapResyncs: 0,
    pageShrinks: 0, droppedOversize: 0,
    registerFailures: 0, staleFrames: 0, silentSessions: 0,
  };
  readonly #requests: SessionRequests;
  readonly #events: TypedEmitter<GroupConnectionEvents>;
  /** Cancels send back-off sleeps on close. */
  readonly #closing = new AbortController();
  #status: ConnectionStatus = "idle";
  /** The session everything in flight belongs to; undefined while the channel is down. */
  #session: string | undefined;
  /** register_online, the heartbeat and silence of the current session (its timers live there). */
  readonly #upkeep: SessionUpkeep;
  #offChannel: Array<() => void> = [];
  #start: { promise: Promise<void>; resolve(): void; reject(err: Error): void } | undefined;
  #closePromise: Promise<void> | undefined;

  constructor(p: GroupConnectionParams) {
    if (!p.channel || typeof p.channel.send !== "function") {
      throw new TransportError("INVALID_ARGUMENT", "Expected `channel` to be a PeerChannel");
    }
    this.#p = p;
    this.#channel = p.channel;
    const s = connectionSettings(p);
    this.#log = s.logger;
    this.#events = new TypedEmitter((err, event) => this.#log.log("error", "transport.listener-failed", { event, ...errorFields(err) }));
    this.#requestTimeoutMs = s.requestTimeoutMs;
    this.#upkeep = new SessionUpkeep({
      call: (action, timeoutMs) => this.#call(action, undefined, undefined, timeoutMs),
      heartbeatMs: s.heartbeatMs,
      registerTimeoutMs: s.registerTimeoutMs,
      registerRetry: s.registerRetry,
      random: s.random,
      counters: this.#counters,
      logger: this.#log,
      peer: p.channel.peer,
      onCaughtUp: () => {
        for (const feed of this.#feeds.values()) void feed.sync();
      },
      onSilent: () => this.#channel.renew("silent"),
    });
    this.#requests = new SessionRequests({
      aid: p.aid,
      now: (p.now ?? Date.now)(),
      random: s.random,
      timeoutMs: s.requestTimeoutMs,
      send: (payload) => this.#session !== undefined && this.#channel.send(payload),
      mark: () => this.#counters.framesIn,
      onTimeout: (t) => {
        this.#counters.requestTimeouts++;
        this.#upkeep.noteTimeout(this.#session, t, this.#counters.framesIn - t.mark);
      },
    });
    this.#groups = new GroupFeeds({
      groups: p.groups,
      connection: p,
      call: (action, groupId, params) => this.#call(action, groupId, params),
      counters: this.#counters,
      logger: this.#log,
      retry: s.reconnect,
      random: s.random,
    });
    this.#feeds = this.#groups.map;
    this.#inbound = {
      counters: this.#counters,
      logger: this.#log,
      maxFrameBytes: s.maxFrameBytes,
      pending: this.#requests.pending,
      feeds: this.#feeds,
      eventFeeds: this.#groups.events,
      onEvent: p.onEvent?.bind(p),
    };
    this.#send = {
      feeds: this.#feeds,
      maxMessageBytes: s.maxMessageBytes,
      retry: s.sendRetry,
      random: s.random,
      counters: this.#counters,
      log: this.#log,
      closing: this.#closing.signal,
      whenConnected: (action, groupId) => this.#whenConnected(action, groupId),
      requestFrame: (action, groupId, params) => this.#requestFrame(action, groupId, params),
    };
  }

  get status(): ConnectionStatus {
    return this.#status;
  }

  get peer(): string {
    return this.#channel.peer;
  }

  counters(): Readonly<ConnectionCounters> {
    return { ...this.#counters };
  }

  lastFed(groupId: string): number | undefined {
    return this.#feeds.get(groupId)?.lastFed;
  }

  groupStatus(groupId: string): GroupFeedStatus | undefined {
    return this.#feeds.get(groupId)?.status;
  }

  on<E extends keyof GroupConnectionEvents>(event: E, listener: Listener<E>): () => void {
    return this.#events.on(event, listener);
  }

  off<E extends keyof GroupConnectionEvents>(event: E, listener: Listener<E>): void {
    this.#events.off(event, listener);
  }

  start(): Promise<void> {
    if (this.#start) return this.#start.promise;
    if (this.#status === "closed") return Promise.reject(new TransportError("CLOSED", "connection is closed"));
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.#start = { promise, resolve, reject };
    this.#setStatus("connecting");
    this.#offChannel = [
      this.#channel.on("up", ({ sessionId }) => this.#onUp(sessionId)),
      this.#channel.on("down", ({ reason }) => this.#onDown(reason)),
      this.#channel.on("message", ({ payload, sessionId }) => {
        if (sessionId !== this.#session) {
          // A frame of a session we already left: its requests were rejected, its pushes re-pulled.
          this.#counters.staleFrames++;
          return;
        }
        handleInboundFrame(this.#inbound, payload);
      }),
    ];
    const current = this.#channel.sessionId;
    if (this.#channel.status === "up" && current !== undefined) this.#onUp(current);
    return promise;
  }

  async request(action: string, options: { groupId?: string; params?: Plain } = {}): Promise<unknown> {
    await this.#whenConnected(action, options.groupId);
    return (await this.#call(action, options.groupId, options.params)).data;
  }

  sendMessage(params: { groupId: string; content: string; metadata?: Record<string, unknown> }): Promise<{ msgId: string; timestamp: number }> {
    return sendGroupMessage(this.#send, params);
  }

  close(): Promise<void> {
    this.#closePromise ??= this.#shutdown();
    return this.#closePromise;
  }

  // ── session lifecycle ───────────────────────────────────────────────────────────────────────

  #onUp(sessionId: string): void {
    if (this.#status === "closed" || this.#session === sessionId) return;
    if (this.#session !== undefined) this.#onDown("replaced by a new session");
    this.#session = sessionId;
    this.#setStatus("syncing");
    this.#log.log("info", "transport.session-up", { peer: this.#channel.peer, aid: this.#p.aid, sessionId });
    this.#upkeep.begin(sessionId);
    void this.#syncSession(sessionId).catch((err) => this.#log.log("error", "transport.session-sync-failed", { sessionId, ...errorFields(err) }));
  }

  /** register_online first (the service pushes only to registered members), then every group's pull. */
  async #syncSession(sessionId: string): Promise<void> {
    // An unanswered one is retried within seconds meanwhile (session-upkeep.ts); pulls work unregistered.
    await this.#upkeep.register(sessionId, false);
    if (this.#session !== sessionId) return;
    await this.#groups.connectAll(sessionId, () => this.#session === sessionId);
    if (this.#session !== sessionId || this.#status !== "syncing") return;
    this.#setStatus("open");
    this.#start?.resolve();
  }

  #onDown(reason: string): void {
    if (this.#session === undefined && this.#status !== "syncing" && this.#status !== "open") return;
    const sessionId = this.#session;
    this.#session = undefined;
    this.#upkeep.end();
    this.#groups.disconnectAll();
    this.#requests.pending.rejectAll((action, groupId) =>
      new TransportError("CONNECTION_LOST", `session lost before ${action} was answered`, { action, ...(groupId ? { groupId } : {}) }),
    );
    this.#events.emit("disconnected", { reason });
    if (this.#status === "closed") return;
    this.#counters.reconnects++;
    this.#log.log("warn", "transport.session-down", { peer: this.#channel.peer, sessionId, reason });
    this.#setStatus("reconnecting");
  }

  async #shutdown(): Promise<void> {
    const wasUp = this.#session !== undefined && this.#channel.status === "up";
    this.#setStatus("closed");
    this.#upkeep.close();
    this.#closing.abort();
    for (const feed of this.#feeds.values()) feed.close();
    this.#start?.reject(new TransportError("CLOSED", "connection closed before it was established"));
    if (wasUp) {
      // Tell the service to stop pushing to us; a slow answer does not hold up the close.
      const unregister = this.#call("unregister_online").catch((err) => this.#log.log("debug", "transport.unregister-failed", errorFields(err)));
      const answered = new AbortController();
      await Promise.race([unregister, wait(UNREGISTER_GRACE_MS, answered.signal).catch(() => {})]);
      answered.abort();
    }
    this.#session = undefined;
    for (const off of this.#offChannel) off();
    this.#offChannel = [];
    this.#requests.pending.rejectAll((action, groupId) => new TransportError("CLOSED", `connection closed before ${action} was answered`, { action, ...(groupId ? { groupId } : {}) }));
    if (this.#p.closeChannel !== false) this.#channel.close();
    this.#log.log("info", "transport.closed", { peer: this.#channel.peer });
  }

  // ── requests ────────────────────────────────────────────────────────────────────────────────

  #requestFrame(action: string, groupId?: string, params?: Plain, timeoutMs?: number): Promise<ResponseFrame> {
    // Once closed, only the goodbye goes out.
    if (this.#status === "closed" && action !== "unregister_online") {
      return Promise.reject(new TransportError("NOT_CONNECTED", `not connected: cannot send ${action}`, { action, ...(groupId ? { groupId } : {}) }));
    }
    return this.#requests.frame(action, groupId, params, timeoutMs);
  }

  #call(action: string, groupId?: string, params?: Plain, timeoutMs?: number): Promise<ResponseFrame> {
    return this.#requestFrame(action, groupId, params, timeoutMs).then((frame) => {
      if (frame.code !== RESULT_CODES.OK) throw requestFailed(frame, groupId);
      return frame;
    });
  }

  acknowledge(groupId: string): void {
    const fed = this.lastFed(groupId);
    if (fed !== undefined && this.status !== "closed") this.#groups.ack(groupId, fed);
  }

  // ── timers and waits ────────────────────────────────────────────────────────────────────────

  /** Waits (up to the request timeout) for a session; a send during a reconnect rides it out, else NOT_CONNECTED. */
  #whenConnected(action: string, groupId: string | undefined): Promise<void> {
    const ready = () => (this.#status === "syncing" || this.#status === "open") && this.#session !== undefined;
    if (ready()) return Promise.resolve();
    const ctx = { action, ...(groupId ? { groupId } : {}) };
    if (this.#status === "closed") return Promise.reject(new TransportError("CLOSED", "connection is closed", ctx));
    if (this.#status === "idle") return Promise.reject(new TransportError("NOT_CONNECTED", "start() the connection first", ctx));
    return new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        off();
        if (err) reject(err);
        else resolve();
      };
      // Wait-only timer: the network layer's socket is what keeps the process alive.
      const timer = setTimeout(() => done(new TransportError("NOT_CONNECTED", `not connected within ${this.#requestTimeoutMs} ms`, ctx)), this.#requestTimeoutMs);
      timer.unref?.();
      const off = this.on("status", ({ status }) => {
        if (status === "closed") done(new TransportError("CLOSED", "connection is closed", ctx));
        else if (ready()) done();
      });
    });
  }

  #setStatus(status: ConnectionStatus): void {
    const previous = this.#status;
    if (previous === status || previous === "closed") return;
    this.#status = status;
    this.#events.emit("status", { status, previous });
  }
}
