// A local group service speaking the ACP group frames over `ws`: the embedded default for `start`
// and the real peer for transport tests. Groups and members come from config; history, msg ids
// and ack cursors live in a GroupHistoryStore that can outlive one server instance.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { timingSafeEqual } from "node:crypto";
import { WebSocketServer, WebSocket, type RawData } from "ws";
import type { GroupMessage, Logger } from "../types.ts";
import { errorFields, silentLogger } from "../log.ts";
import { AUTH_HEADERS, RESULT_CODES, isPlain, toWireMessage, type Plain, type WireResponse } from "../transport/protocol.ts";
import { handleAction, type ActionContext, type Caller, type GroupDefinition } from "./actions.ts";
import { createFileHistoryStore, createMemoryHistoryStore, type GroupHistoryStore } from "./history-store.ts";
import { RateLimiter, type RateLimit } from "./rate-limit.ts";

export type { GroupDefinition, GroupMember } from "./actions.ts";

export interface GroupServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  groups: Record<string, GroupDefinition>;
  /** Per member and group; over it send_message answers 1010. Default 10 per 10 s; null disables. */
  rateLimit?: RateLimit | null;
  /** Larger inbound frames are counted and dropped. Default 1 MiB. */
  maxFrameBytes?: number;
  /** Longer send_message content answers 1009. Default 10000. */
  maxMessageChars?: number;
  /** Largest pull_messages page. Default 100. */
  maxPullLimit?: number;
  /**
   * How a new message reaches connected members: a `message_push` (or `message_batch_push` of
   * one) and/or a `group_notify new_message`. Default { push: "message", notify: true }.
   */
  delivery?: { push?: "message" | "batch" | "none"; notify?: boolean };
  logger?: Logger;
  /** Server clock for message timestamps and rate limits. Default Date.now. */
  now?: () => number;
  /** Keep history in this store (pass the same one to a restarted server). */
  history?: GroupHistoryStore;
  /** Or in this JSON-lines file. */
  historyFile?: string;
}

export interface GroupServerCounters {
  connections: number;
  rejectedConnections: number;
  malformedFrames: number;
  oversizeFrames: number;
  requests: number;
  messagesStored: number;
}

export interface GroupServer {
  readonly url: string;
  readonly port: number;
  /** Injects a message as `sender` (e.g. a human typing in `start`); not rate limited. */
  post(params: { groupId: string; sender: string; content: string; contentType?: string; metadata?: Plain | null }): GroupMessage;
  history(groupId: string): GroupMessage[];
  /** Observes every stored message; returns an unsubscribe function. */
  onMessage(listener: (message: GroupMessage) => void): () => void;
  /** Connected sockets. */
  clientCount(): number;
  /** Aids with at least one open socket, optionally only members of `groupId`. */
  connectedAids(groupId?: string): string[];
  counters(): Readonly<GroupServerCounters>;
  /** Close frames to every client, then stop listening. */
  close(): Promise<void>;
  /** Drops every socket without a close frame and stops listening, like a crashed process. */
  kill(): Promise<void>;
}

export class GroupServerError extends Error {
  readonly code: "INVALID_OPTIONS" | "GROUP_NOT_FOUND" | "INVALID_MESSAGE";
  readonly groupId: string | undefined;
  constructor(code: GroupServerError["code"], message: string, groupId?: string) {
    super(message);
    this.name = "GroupServerError";
    this.code = code;
    this.groupId = groupId;
  }
}

interface Client extends Caller {
  ws: WebSocket;
}

const HARD_MAX_PAYLOAD = 64 * 1024 * 1024;
const CLOSE_GRACE_MS = 1000;

export async function startGroupServer(options: GroupServerOptions): Promise<GroupServer> {
  validateOptions(options);
  const log = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const maxFrameBytes = options.maxFrameBytes ?? 1024 * 1024;
  const push = options.delivery?.push ?? "message";
  const notify = options.delivery?.notify ?? true;
  const store = options.history ?? (options.historyFile ? createFileHistoryStore(options.historyFile) : createMemoryHistoryStore());
  const rateLimit = options.rateLimit === undefined ? { messages: 10, perMs: 10_000 } : options.rateLimit;
  const clients = new Set<Client>();
  const listeners = new Set<(m: GroupMessage) => void>();
  const counters: GroupServerCounters = { connections: 0, rejectedConnections: 0, malformedFrames: 0, oversizeFrames: 0, requests: 0, messagesStored: 0 };

  const ctx: ActionContext = {
    groups: options.groups,
    store,
    limiter: rateLimit ? new RateLimiter(rateLimit) : undefined,
    now,
    maxMessageChars: options.maxMessageChars ?? 10_000,
    maxPullLimit: options.maxPullLimit ?? 100,
    storeMessage({ groupId, sender, content, contentType, metadata }) {
      const list = store.messages(groupId);
      const last = list[list.length - 1];
      const message: GroupMessage = {
        msgId: String(last ? Number(last.msgId) + 1 : 1),
        groupId,
        sender,
        content,
        contentType,
        timestamp: now(),
        metadata,
      };
      store.append(message);
      counters.messagesStored++;
      return message;
    },
  };

  const fanOut = (message: GroupMessage): void => {
    const wire = toWireMessage(message);
    const frames: string[] = [];
    if (push === "message") frames.push(JSON.stringify({ action: "message_push", group_id: message.groupId, data: wire }));
    if (push === "batch") {
      frames.push(JSON.stringify({
        action: "message_batch_push",
        group_id: message.groupId,
        data: { messages: [wire], start_msg_id: wire.msg_id, latest_msg_id: wire.msg_id, count: 1 },
      }));
    }
    if (notify) {
      frames.push(JSON.stringify({
        action: "group_notify",
        group_id: message.groupId,
        event: "new_message",
        data: { latest_msg_id: wire.msg_id, sender: wire.sender, preview: wire.content.slice(0, 80) },
        timestamp: wire.timestamp,
      }));
    }
    // The sender gets its own message too: clients recognise their own sends.
    for (const client of clients) {
      if (!client.authorized.has(message.groupId) || client.ws.readyState !== WebSocket.OPEN) continue;
      for (const frame of frames) client.ws.send(frame);
    }
    for (const listener of [...listeners]) {
      try {
        listener(message);
      } catch (err) {
        log.log("error", "server.listener-failed", { groupId: message.groupId, msgId: message.msgId, ...errorFields(err) });
      }
    }
  };

  const handleFrame = (client: Client, data: RawData): void => {
    const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (buf.byteLength > maxFrameBytes) {
      counters.oversizeFrames++;
      log.log("warn", "server.frame-dropped", { aid: client.aid, reason: "oversize", bytes: buf.byteLength });
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(buf.toString("utf8"));
    } catch {
      raw = undefined;
    }
    const requestId = isPlain(raw) && typeof raw.request_id === "string" && raw.request_id !== "" ? raw.request_id : undefined;
    if (!isPlain(raw) || requestId === undefined) {
      // Without a request_id there is nobody to answer.
      counters.malformedFrames++;
      log.log("warn", "server.frame-dropped", { aid: client.aid, reason: "malformed", bytes: buf.byteLength });
      return;
    }
    counters.requests++;
    const action = typeof raw.action === "string" ? raw.action : "";
    const result = action
      ? handleAction(ctx, client, action, raw.group_id, raw.params)
      : { code: RESULT_CODES.INVALID_PARAMS, data: null, error: "action: expected a string" };
    const response: WireResponse = {
      action,
      request_id: requestId,
      code: result.code,
      ...(typeof raw.group_id === "string" ? { group_id: raw.group_id } : {}),
      data: result.data,
      error: result.error,
    };
    if (result.code !== RESULT_CODES.OK) log.log("debug", "server.request-refused", { aid: client.aid, action, code: result.code, error: result.error });
    client.ws.send(JSON.stringify(response));
    if ("stored" in result && result.stored) fanOut(result.stored);
  };

  const wss = new WebSocketServer({ noServer: true, maxPayload: HARD_MAX_PAYLOAD, perMessageDeflate: false });
  const http = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain" }).end("ACP group server: connect with a WebSocket\n");
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const auth = authenticate(options.groups, req);
    if (!auth.ok) {
      counters.rejectedConnections++;
      log.log("warn", "server.connection-refused", { reason: auth.reason, aid: auth.aid });
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const client: Client = { ws, aid: auth.aid, authorized: auth.groups };
      clients.add(client);
      counters.connections++;
      log.log("info", "server.connected", { aid: auth.aid, groups: [...auth.groups] });
      ws.on("message", (data) => {
        try {
          handleFrame(client, data);
        } catch (err) {
          // Never out of the socket handler: the server may share its process with the agents.
          log.log("error", "server.frame-failed", { aid: client.aid, ...errorFields(err) });
        }
      });
      ws.on("error", (err) => log.log("warn", "server.socket-error", { aid: client.aid, ...errorFields(err) }));
      ws.on("close", () => {
        clients.delete(client);
        log.log("info", "server.disconnected", { aid: client.aid });
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      http.off("error", reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const hostForUrl = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let stopped: Promise<void> | undefined;
  const stop = (abrupt: boolean): Promise<void> => {
    stopped ??= (async () => {
      const closing = [...clients].map(
        (client) =>
          new Promise<void>((resolve) => {
            if (client.ws.readyState === WebSocket.CLOSED) return resolve();
            client.ws.once("close", () => resolve());
            if (abrupt) return client.ws.terminate();
            client.ws.close(1001, "server shutting down");
            // A client that never answers the close handshake is cut off.
            setTimeout(() => client.ws.terminate(), CLOSE_GRACE_MS).unref();
          }),
      );
      const listening = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await Promise.all(closing);
      await listening;
      wss.close();
      log.log("info", "server.stopped", { abrupt });
    })();
    return stopped;
  };

  return {
    url: `ws://${hostForUrl}:${address.port}`,
    port: address.port,
    post({ groupId, sender, content, contentType = "text", metadata = null }) {
      if (!Object.hasOwn(options.groups, groupId)) throw new GroupServerError("GROUP_NOT_FOUND", `no group \`${groupId}\``, groupId);
      if (typeof sender !== "string" || sender === "" || typeof content !== "string" || content === "") {
        throw new GroupServerError("INVALID_MESSAGE", "Expected `sender` and `content` to be non-empty strings", groupId);
      }
      const message = ctx.storeMessage({ groupId, sender, content, contentType, metadata });
      fanOut(message);
      return message;
    },
    history: (groupId) => [...store.messages(groupId)],
    onMessage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    clientCount: () => clients.size,
    connectedAids(groupId) {
      const aids = new Set<string>();
      for (const c of clients) if (groupId === undefined || c.authorized.has(groupId)) aids.add(c.aid);
      return [...aids].sort();
    },
    counters: () => ({ ...counters }),
    close: () => stop(false),
    kill: () => stop(true),
  };
}

type AuthResult = { ok: true; aid: string; groups: Set<string> } | { ok: false; reason: string; aid: string | undefined };

/** The groups this upgrade may use: those where the aid is a member and the token matches. */
function authenticate(groups: Readonly<Record<string, GroupDefinition>>, req: IncomingMessage): AuthResult {
  const aidHeader = req.headers[AUTH_HEADERS.aid];
  const aid = typeof aidHeader === "string" ? aidHeader.trim() : undefined;
  if (!aid) return { ok: false, reason: "missing-aid", aid: undefined };
  const authz = req.headers[AUTH_HEADERS.authorization];
  const token = typeof authz === "string" && /^Bearer /i.test(authz) ? authz.slice(7).trim() : undefined;
  const allowed = new Set<string>();
  let member = false;
  for (const [groupId, group] of Object.entries(groups)) {
    if (!Object.hasOwn(group.members, aid)) continue;
    member = true;
    const expected = group.members[aid]?.token;
    if (expected === undefined || (token !== undefined && sameSecret(expected, token))) allowed.add(groupId);
  }
  if (allowed.size > 0) return { ok: true, aid, groups: allowed };
  return { ok: false, reason: member ? "bad-token" : "not-a-member", aid };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function validateOptions(o: GroupServerOptions): void {
  const problems: string[] = [];
  if (!isPlain(o.groups)) problems.push(`groups: expected an object, got ${typeof o.groups}`);
  else {
    for (const [id, g] of Object.entries(o.groups)) {
      if (!isPlain(g) || !isPlain(g.members)) problems.push(`groups.${id}.members: expected an object`);
    }
  }
  if (o.rateLimit) {
    if (!Number.isInteger(o.rateLimit.messages) || o.rateLimit.messages < 1) problems.push(`rateLimit.messages: expected ≥ 1, got ${o.rateLimit.messages}`);
    if (!Number.isInteger(o.rateLimit.perMs) || o.rateLimit.perMs < 1) problems.push(`rateLimit.perMs: expected ≥ 1, got ${o.rateLimit.perMs}`);
  }
  if (o.history && o.historyFile) problems.push("history, historyFile: expected at most one of them");
  if (problems.length > 0) throw new GroupServerError("INVALID_OPTIONS", `invalid group server options\n  ${problems.join("\n  ")}`);
}
