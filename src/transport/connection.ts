// The ACP group client over a direct `ws` connection: one socket per identity carrying all its
// groups. A state machine (idle → connecting → syncing → open ⇄ reconnecting → closed); every
// socket callback checks that its socket is still the current one, so late events are no-ops.
import WebSocket from "ws";
import type { Logger } from "../types.ts";
import { errorFields, silentLogger } from "../log.ts";
import { computeBackoffDelay, sleep, type BackoffSettings } from "./backoff.ts";
import type {
  ConnectionCounters,
  ConnectionStatus,
  GroupConnection,
  GroupConnectionEvents,
  GroupConnectionParams,
  Listener,
} from "./connection-types.ts";
import { TypedEmitter } from "./emitter.ts";
import { TransportError } from "./errors.ts";
import { GroupFeed, type GroupFeedStatus } from "./group-feed.ts";
import { handleInboundFrame, type InboundDeps } from "./inbound.ts";
import { PendingRequests, type ResponseFrame } from "./pending-requests.ts";
import {
  AUTH_HEADERS,
  RESULT_CODES,
  isPlain,
  parsePullData,
  parseSendData,
  type Plain,
  type WireRequest,
} from "./protocol.ts";

const HARD_MAX_PAYLOAD = 64 * 1024 * 1024;
const CLOSE_GRACE_MS = 2000;
const MAX_HELD_PUSHES = 5000;

export type * from "./connection-types.ts";

export function createGroupConnection(params: GroupConnectionParams): GroupConnection {
  return new WsGroupConnection(params);
}

class WsGroupConnection implements GroupConnection {
  readonly #p: GroupConnectionParams;
  readonly #log: Logger;
  readonly #random: () => number;
  readonly #requestTimeoutMs: number;
  readonly #heartbeatMs: number;
  readonly #inbound: InboundDeps;
  readonly #reconnect: BackoffSettings;
  readonly #sendRetry: BackoffSettings & { maxAttempts: number };
  readonly #feeds = new Map<string, GroupFeed>();
  readonly #counters: ConnectionCounters = {
    framesIn: 0, malformedFrames: 0, malformedMessages: 0, unknownActions: 0, oversizeFrames: 0,
    unmatchedResponses: 0, unknownGroups: 0, reconnects: 0, requestTimeouts: 0, heartbeatFailures: 0,
    rateLimitedRetries: 0, handlerErrors: 0, pullFailures: 0, messagesFed: 0, heldOverflows: 0, gapResyncs: 0,
  };
  readonly #pending = new PendingRequests(() => this.#counters.requestTimeouts++);
  readonly #events: TypedEmitter<GroupConnectionEvents>;
  /** Cancels send back-off sleeps and connection waits on close. */
  readonly #closing = new AbortController();
  #status: ConnectionStatus = "idle";
  #ws: WebSocket | undefined;
  #connSeq = 0;
  #requestSeq = 0;
  #reconnectAttempt = 0;
  #httpStatus: number | undefined;
  /** Armed while waiting to redial. Not unref'ed: it is what keeps an agent alive through an outage. */
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** Armed after each answered heartbeat while a socket is open; cleared when it drops. */
  #heartbeatTimer: ReturnType<typeof setTimeout> | undefined;
  #start: { promise: Promise<void>; resolve(): void; reject(err: Error): void } | undefined;
  #closePromise: Promise<void> | undefined;

  constructor(p: GroupConnectionParams) {
    if (!/^wss?:\/\//.test(p.url) || !URL.canParse(p.url)) {
      throw new TransportError("INVALID_ARGUMENT", `Expected \`url\` to be a ws:// or wss:// URL, got \`${p.url}\``);
    }
    this.#p = p;
    this.#log = p.logger ?? silentLogger;
    this.#events = new TypedEmitter(this.#log);
    this.#random = p.random ?? Math.random;
    this.#requestTimeoutMs = p.requestTimeoutMs ?? 10_000;
    this.#heartbeatMs = p.heartbeatMs ?? 30_000;
    this.#reconnect = p.reconnect ?? { baseMs: 500, maxMs: 30_000, jitter: 0.3 };
    this.#sendRetry = p.sendRetry ?? { maxAttempts: 5, baseMs: 1000, maxMs: 30_000, jitter: 0.3 };
    for (const groupId of new Set(p.groups)) {
      if (typeof groupId !== "string" || groupId === "") {
        throw new TransportError("INVALID_ARGUMENT", `Expected \`groups\` to hold non-empty strings, got \`${String(groupId)}\``);
      }
      this.#feeds.set(groupId, this.#makeFeed(groupId));
    }
    this.#inbound = {
      counters: this.#counters,
      logger: this.#log,
      maxFrameBytes: p.maxFrameBytes ?? 1024 * 1024,
      pending: this.#pending,
      feeds: this.#feeds,
      onEvent: p.onEvent?.bind(p),
    };
  }

  get status(): ConnectionStatus {
    return this.#status;
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
    this.#dial();
    return promise;
  }

  async request(action: string, options: { groupId?: string; params?: Plain } = {}): Promise<unknown> {
    await this.#whenConnected(action, options.groupId);
    return (await this.#call(action, options.groupId, options.params)).data;
  }

  async sendMessage(params: { groupId: string; content: string; metadata?: Record<string, unknown> }): Promise<{ msgId: string; timestamp: number }> {
    const { groupId, content, metadata } = params;
    if (!this.#feeds.has(groupId)) {
      throw new TransportError("UNKNOWN_GROUP", `Expected \`groupId\` to be one of this connection's groups, got \`${groupId}\``, { groupId });
    }
    if (typeof content !== "string" || content === "") {
      throw new TransportError("INVALID_ARGUMENT", "Expected `content` to be a non-empty string", { groupId });
    }
    const body: Plain = { content, ...(metadata ? { metadata } : {}) };
    for (let attempt = 0; ; attempt++) {
      await this.#whenConnected("send_message", groupId);
      // No retry on timeout or a dropped socket: the message may have been stored, and a double
      // post is worse than a missed one.
      const frame = await this.#requestFrame("send_message", groupId, body);
      if (frame.code === RESULT_CODES.OK) {
        const parsed = parseSendData(frame.data);
        if (!parsed.ok) {
          this.#counters.malformedFrames++;
          throw new TransportError("BAD_RESPONSE", `send_message response: ${parsed.reason}`, { action: "send_message", groupId });
        }
        return { msgId: parsed.msgId, timestamp: parsed.timestamp };
      }
      if (frame.code !== RESULT_CODES.RATE_LIMITED) throw failed(frame, groupId);
      if (attempt + 1 >= this.#sendRetry.maxAttempts) {
        throw new TransportError("RATE_LIMITED", `send_message still rate limited after ${attempt + 1} attempts`, {
          action: "send_message", groupId, resultCode: frame.code, attempts: attempt + 1,
        });
      }
      this.#counters.rateLimitedRetries++;
      const hint = isPlain(frame.data) && typeof frame.data.retry_after_ms === "number" ? frame.data.retry_after_ms : 0;
      const delayMs = Math.min(this.#sendRetry.maxMs, Math.max(computeBackoffDelay(attempt, this.#sendRetry, this.#random), hint));
      this.#log.log("info", "transport.send-rate-limited", { groupId, attempt: attempt + 1, delayMs });
      await sleep(delayMs, this.#closing.signal, () => new TransportError("CLOSED", "connection closed during a retry wait", { action: "send_message", groupId }));
    }
  }

  close(): Promise<void> {
    this.#closePromise ??= this.#shutdown();
    return this.#closePromise;
  }

  // ── connection lifecycle ────────────────────────────────────────────────────────────────────

  #dial(): void {
    this.#connSeq++;
    this.#httpStatus = undefined;
    const headers: Record<string, string> = { [AUTH_HEADERS.aid]: this.#p.aid };
    if (this.#p.token) headers[AUTH_HEADERS.authorization] = `Bearer ${this.#p.token}`;
    const ws = new WebSocket(this.#p.url, {
      headers,
      // Our own limit (maxFrameBytes) drops a frame; ws's own limit would drop the connection.
      maxPayload: HARD_MAX_PAYLOAD,
      handshakeTimeout: this.#requestTimeoutMs,
      perMessageDeflate: false,
    });
    this.#ws = ws;
    ws.on("open", () => {
      if (this.#ws === ws) void this.#onOpen(ws).catch((err) => this.#log.log("error", "transport.open-failed", errorFields(err)));
    });
    ws.on("message", (data) => {
      if (this.#ws === ws) handleInboundFrame(this.#inbound, data);
    });
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      if (this.#ws === ws) this.#httpStatus = res.statusCode;
      ws.terminate();
    });
    ws.on("error", (err) => {
      if (this.#ws === ws) this.#log.log("warn", "transport.socket-error", { url: this.#p.url, ...errorFields(err) });
    });
    ws.on("close", (code, reason) => {
      if (this.#ws === ws) this.#onSocketClosed(code, reason.toString());
    });
  }

  async #onOpen(ws: WebSocket): Promise<void> {
    this.#setStatus("syncing");
    this.#log.log("info", "transport.connected", { url: this.#p.url, aid: this.#p.aid, attempt: this.#reconnectAttempt });
    this.#armHeartbeat(ws);
    void this.#call("register_online").catch((err) => this.#log.log("warn", "transport.register-failed", errorFields(err)));
    await Promise.all([...this.#feeds.values()].map((feed) => feed.connect(this.#cursorOf(feed.groupId))));
    if (this.#ws !== ws || this.#status !== "syncing") return;
    this.#reconnectAttempt = 0;
    this.#setStatus("open");
    this.#start?.resolve();
  }

  #onSocketClosed(code: number, reason: string): void {
    this.#ws = undefined;
    this.#clearHeartbeat();
    for (const feed of this.#feeds.values()) feed.disconnect();
    this.#pending.rejectAll((action, groupId) =>
      new TransportError("CONNECTION_LOST", `connection lost before ${action} was answered`, { action, ...(groupId ? { groupId } : {}) }),
    );
    this.#events.emit("disconnected", { code, reason });
    if (this.#status === "closed") return;
    if (this.#httpStatus === 401 || this.#httpStatus === 403) {
      // A refused credential will not fix itself: stop instead of hammering the server.
      const err = new TransportError("AUTH_REJECTED", `group server refused aid ${this.#p.aid} (HTTP ${this.#httpStatus})`, {
        httpStatus: this.#httpStatus,
      });
      this.#log.log("error", "transport.auth-rejected", { aid: this.#p.aid, httpStatus: this.#httpStatus });
      this.#start?.reject(err);
      void this.close();
      return;
    }
    const delayMs = computeBackoffDelay(this.#reconnectAttempt++, this.#reconnect, this.#random);
    this.#counters.reconnects++;
    this.#log.log("warn", "transport.disconnected", { code, reason, reconnectInMs: delayMs, attempt: this.#reconnectAttempt });
    this.#setStatus("reconnecting");
    this.#clearReconnect();
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (this.#status !== "reconnecting") return;
      this.#setStatus("connecting");
      this.#dial();
    }, delayMs);
  }

  async #shutdown(): Promise<void> {
    const ws = this.#ws;
    this.#ws = undefined;
    this.#setStatus("closed");
    this.#clearReconnect();
    this.#clearHeartbeat();
    this.#closing.abort();
    for (const feed of this.#feeds.values()) feed.close();
    this.#pending.rejectAll((action, groupId) => new TransportError("CLOSED", `connection closed before ${action} was answered`, { action, ...(groupId ? { groupId } : {}) }));
    this.#start?.reject(new TransportError("CLOSED", "connection closed before it was established"));
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      // A server that never answers the close handshake must not keep us waiting.
      const fallback = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      fallback.unref?.();
      ws.once("close", () => {
        clearTimeout(fallback);
        resolve();
      });
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, "client closing");
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    });
  }

  // ── requests ────────────────────────────────────────────────────────────────────────────────

  #requestFrame(action: string, groupId?: string, params?: Plain): Promise<ResponseFrame> {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new TransportError("NOT_CONNECTED", `not connected: cannot send ${action}`, { action, ...(groupId ? { groupId } : {}) }));
    }
    const requestId = `${this.#p.aid}-${this.#connSeq}-${++this.#requestSeq}`;
    const frame: WireRequest = { action, request_id: requestId, ...(groupId ? { group_id: groupId } : {}), ...(params ? { params } : {}) };
    const response = this.#pending.track(requestId, action, groupId, this.#requestTimeoutMs);
    ws.send(JSON.stringify(frame), (err) => {
      if (err) this.#pending.reject(requestId, () => new TransportError("CONNECTION_LOST", `could not send ${action}: ${err.message}`, { action, requestId }));
    });
    return response;
  }

  async #call(action: string, groupId?: string, params?: Plain): Promise<ResponseFrame> {
    const frame = await this.#requestFrame(action, groupId, params);
    if (frame.code !== RESULT_CODES.OK) throw failed(frame, groupId);
    return frame;
  }

  async #pull(groupId: string, after: number, limit: number) {
    const frame = await this.#call("pull_messages", groupId, { after_msg_id: after, limit });
    const parsed = parsePullData(groupId, frame.data);
    if (!parsed.ok) {
      this.#counters.malformedFrames++;
      throw new TransportError("BAD_RESPONSE", `pull_messages response: ${parsed.reason}`, { action: "pull_messages", groupId });
    }
    if (parsed.page.invalid.length > 0) {
      this.#counters.malformedMessages += parsed.page.invalid.length;
      this.#log.log("warn", "transport.messages-dropped", { groupId, via: "pull_messages", reasons: parsed.page.invalid.slice(0, 5) });
    }
    return parsed.page;
  }

  /** Last msg id acknowledged per group, so an unchanged cursor is not acked again. */
  readonly #acked = new Map<string, number>();

  acknowledge(groupId: string): void {
    const fed = this.lastFed(groupId);
    if (fed !== undefined && this.status !== "closed") this.#ack(groupId, fed);
  }

  #ack(groupId: string, accepted: number): void {
    const msgId = this.#p.ackCursor ? Math.min(accepted, this.#p.ackCursor(groupId)) : accepted;
    if (!(msgId > 0) || msgId <= (this.#acked.get(groupId) ?? 0)) return;
    this.#acked.set(groupId, msgId);
    void this.#call("ack_messages", groupId, { msg_id: msgId }).catch((err) => {
      // Not acked after all: let the next attempt send it again.
      if ((this.#acked.get(groupId) ?? 0) === msgId) this.#acked.delete(groupId);
      this.#log.log("debug", "transport.ack-failed", { groupId, msgId, ...errorFields(err) });
    });
  }

  #makeFeed(groupId: string): GroupFeed {
    return new GroupFeed({
      groupId,
      onMessages: (g, messages) => this.#p.onMessages(g, messages),
      pull: (after, limit) => this.#pull(groupId, after, limit),
      ack: (msgId) => this.#ack(groupId, msgId),
      retryDelay: (attempt) => computeBackoffDelay(attempt, this.#reconnect, this.#random),
      counters: this.#counters,
      logger: this.#log,
      pageSize: this.#p.pageSize ?? 50,
      maxHeld: MAX_HELD_PUSHES,
    });
  }

  #cursorOf(groupId: string): number {
    try {
      const c = this.#p.getCursor(groupId);
      return Number.isSafeInteger(c) && c >= 0 ? c : 0;
    } catch (err) {
      this.#log.log("error", "transport.get-cursor-failed", { groupId, ...errorFields(err) });
      return 0;
    }
  }

  // ── timers and waits ────────────────────────────────────────────────────────────────────────

  #armHeartbeat(ws: WebSocket): void {
    this.#clearHeartbeat();
    if (this.#heartbeatMs <= 0) return;
    this.#heartbeatTimer = setTimeout(() => {
      this.#heartbeatTimer = undefined;
      void this.#beat(ws);
    }, this.#heartbeatMs);
    this.#heartbeatTimer.unref?.();
  }

  async #beat(ws: WebSocket): Promise<void> {
    try {
      await this.#call("heartbeat");
    } catch (err) {
      if (this.#ws !== ws) return;
      if (err instanceof TransportError && err.code === "REQUEST_TIMEOUT") {
        // A silent server is a dead connection the OS has not noticed yet.
        this.#counters.heartbeatFailures++;
        this.#log.log("warn", "transport.heartbeat-timeout", { url: this.#p.url });
        ws.terminate();
        return;
      }
      this.#log.log("debug", "transport.heartbeat-failed", errorFields(err));
    }
    if (this.#ws === ws) this.#armHeartbeat(ws);
  }

  #clearHeartbeat(): void {
    if (this.#heartbeatTimer !== undefined) clearTimeout(this.#heartbeatTimer);
    this.#heartbeatTimer = undefined;
  }

  #clearReconnect(): void {
    if (this.#reconnectTimer !== undefined) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
  }

  /** Waits (up to the request timeout) for an open socket; a send during a reconnect rides it out. */
  #whenConnected(action: string, groupId: string | undefined): Promise<void> {
    const ready = () => (this.#status === "syncing" || this.#status === "open") && this.#ws?.readyState === WebSocket.OPEN;
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
      // Wait-only timer; the socket or reconnect timer is what keeps the process alive.
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

function failed(frame: ResponseFrame, groupId: string | undefined): TransportError {
  return new TransportError("REQUEST_FAILED", `${frame.action} failed with code ${frame.code}${frame.error ? `: ${frame.error}` : ""}`, {
    action: frame.action,
    ...(groupId ? { groupId } : {}),
    requestId: frame.requestId,
    resultCode: frame.code,
  });
}
