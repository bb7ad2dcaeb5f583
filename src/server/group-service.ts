// The local group service `group.<domain>`: a ServiceAgent the message service hosts in-process.
// It speaks the ACP group frames inside sessions: the caller's aid is the one the message service
// authenticated, pushes go only to sessions that registered online, and new messages reach them
// as `message_batch_push` aggregated per receiver and group. Groups and members come from config
// plus joins; history, msg ids, ack cursors, joins and invite codes live in a GroupHistoryStore.
import type { GroupMessage, Logger } from "../types.ts";
import { errorFields, silentLogger } from "../log.ts";
import type { WireResponse } from "../wire/frames.ts";
import { toWireMessage } from "../wire/message.ts";
import { isPlain, type Plain } from "../wire/plain.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import { MAX_MESSAGE_BYTES, MAX_PAGE_BYTES, messageBytes } from "../wire/limits.ts";
import { handleAction, isMessageAction, pageWithin, type ActionContext, type ActionResult, type GroupDefinition } from "./actions.ts";
import { createFileHistoryStore, createMemoryHistoryStore, type GroupHistoryStore } from "./history-store.ts";
import { MEMBERSHIP_ACTIONS, Membership } from "./membership.ts";
import { RateLimiter, type RateLimit } from "./rate-limit.ts";
import type { ServiceAgent, ServiceAgentHost } from "./service-agent.ts";

export type { GroupDefinition, GroupMember } from "./actions.ts";

export interface GroupServiceOptions {
  /** Distance between consecutive msg ids. Default 1; more plays a service whose ids increase but skip numbers. */
  msgIdStep?: number;
  /** The access point's domain: the service is `group.<domain>`. */
  domain: string;
  groups: Record<string, GroupDefinition>;
  /** Per member and group; over it send_message answers 1010. Default 10 per 10 s; null disables. */
  rateLimit?: RateLimit | null;
  /** Larger inbound payloads are counted and dropped. Default 1 MiB. */
  maxFrameBytes?: number;
  /** Longer send_message content answers 1009. Default 10000. */
  maxMessageChars?: number;
  /** Content plus metadata as JSON above this many bytes answers 1009. Default MAX_MESSAGE_BYTES (64 KiB). */
  maxMessageBytes?: number;
  /** A pull page or push batch stops before this many bytes of messages (at least one message). Default MAX_PAGE_BYTES (512 KiB). */
  maxPageBytes?: number;
  /** Largest pull_messages page. Default 100. */
  maxPullLimit?: number;
  /**
   * How a new message reaches registered members: `message_batch_push` (default), the deprecated
   * `message_push`, or nothing; plus an optional `group_notify new_message`; `echo: false` leaves
   * the sender out of its own message's push (like a service that does not echo).
   */
  delivery?: { push?: "batch" | "message" | "none"; notify?: boolean; echo?: boolean };
  logger?: Logger;
  /**
   * A registration not refreshed by `heartbeat` (or a new `register_online`) for this long is
   * offline: no more pushes to it. Default 5 minutes, like the real service; clients beat every 3.
   */
  onlineTtlMs?: number;
  /** Server clock for message timestamps, rate limits and the online TTL. Default Date.now. */
  now?: () => number;
  /** Keep history in this store (pass the same one to a restarted service). */
  history?: GroupHistoryStore;
  /** Or in this JSON-lines file. */
  historyFile?: string;
  /**
   * Reads a member's published agent.md (e.g. `memberTypeFromStore` over the local network's
   * store): `get_members` then carries each member's `type`, and `refresh_member_types` answers.
   */
  memberProfile?: (aid: string) => { type: "human" | "agent" | "unknown"; code: 0 | 1024 | 1025 };
}

export interface GroupServiceCounters {
  requests: number;
  malformedFrames: number;
  oversizeFrames: number;
  messagesStored: number;
  pushesSent: number;
  /** Pushes that found the member's session gone. */
  pushesLost: number;
}

export interface GroupService extends ServiceAgent {
  /** Stores a message as `sender` and fans it out (tests and tools; members post by send_message). Not rate limited. */
  post(params: { groupId: string; sender: string; content: string; contentType?: string; metadata?: Plain | null }): GroupMessage;
  /**
   * A group event spoken by the service itself (sender `group.<domain>`, content type `event`,
   * `metadata.event_type`): the only way an event line enters a group — members' posts never are.
   */
  postEvent(params: { groupId: string; eventType: string; content?: string; actor?: string; target?: string }): GroupMessage;
  history(groupId: string): GroupMessage[];
  /** Observes every stored message; returns an unsubscribe function. */
  onStored(listener: (message: GroupMessage) => void): () => void;
  groupIds(): string[];
  members(groupId: string): string[];
  /** Aids with a session registered online, optionally only members of `groupId`. */
  onlineAids(groupId?: string): string[];
  /** Forgets the online registrations of `aid` (or everyone's) while still answering their heartbeats, as a real service may after a restart. */
  forgetOnline(aid?: string): void;
  inviteCode(groupId: string): string;
  /** `https://group.<domain>/<group>?code=<invite code>`: what `acp-group join` takes. */
  joinLink(groupId: string): string;
  /** Approves a waiting request_join (or adds any aid); true when it was not a member yet. */
  addMember(groupId: string, aid: string): boolean;
  pendingJoinRequests(groupId: string): string[];
  counters(): Readonly<GroupServiceCounters>;
}

export class GroupServiceError extends Error {
  readonly code: "INVALID_OPTIONS" | "GROUP_NOT_FOUND" | "INVALID_MESSAGE";
  readonly groupId: string | undefined;
  constructor(code: GroupServiceError["code"], message: string, groupId?: string) {
    super(message);
    this.name = "GroupServiceError";
    this.code = code;
    this.groupId = groupId;
  }
}

/** Sessions one aid may have registered online at once (a few processes); a newer one replaces the least recently seen. */
export const MAX_ONLINE_SESSIONS_PER_AID = 8;

/** Session-level actions: they need no group. */
const ONLINE_ACTIONS = new Set(["register_online", "unregister_online", "heartbeat"]);

export function createGroupService(options: GroupServiceOptions): GroupService {
  validateOptions(options);
  const aid = `group.${options.domain}`;
  const log = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const maxFrameBytes = options.maxFrameBytes ?? 1024 * 1024;
  const push = options.delivery?.push ?? "batch";
  const notify = options.delivery?.notify ?? false;
  const echo = options.delivery?.echo ?? true;
  const store = options.history ?? openHistory(options.historyFile, log);
  const rateLimit = options.rateLimit === undefined ? { messages: 10, perMs: 10_000 } : options.rateLimit;
  const membership = new Membership(options.groups, store);
  const listeners = new Set<(m: GroupMessage) => void>();
  const onlineTtlMs = options.onlineTtlMs ?? 300_000;
  /** aid → its sessions registered online (an aid may run several processes) → last register/heartbeat (server time). */
  const online = new Map<string, Map<string, number>>();
  /** Sessions of `aid` still online at `now`; expired ones are pruned here, on read, not by a timer. */
  const liveSessions = (aid: string): string[] => {
    const sessions = online.get(aid);
    if (!sessions) return [];
    const t = now();
    for (const [sessionId, seen] of sessions) if (t - seen > onlineTtlMs) sessions.delete(sessionId);
    if (sessions.size === 0) online.delete(aid);
    return [...sessions.keys()];
  };
  /** Messages stored in this turn, per group, pushed together in one batch per receiver. */
  let outbox = new Map<string, GroupMessage[]>();
  let flushQueued = false;
  let host: ServiceAgentHost | undefined;
  const counters: GroupServiceCounters = { requests: 0, malformedFrames: 0, oversizeFrames: 0, messagesStored: 0, pushesSent: 0, pushesLost: 0 };

  const ctx: ActionContext = {
    groups: options.groups,
    store,
    limiter: rateLimit ? new RateLimiter(rateLimit) : undefined,
    now,
    maxMessageChars: options.maxMessageChars ?? 10_000,
    maxMessageBytes: options.maxMessageBytes ?? MAX_MESSAGE_BYTES,
    maxPageBytes: options.maxPageBytes ?? MAX_PAGE_BYTES,
    maxPullLimit: options.maxPullLimit ?? 100,
    members: (groupId) => membership.members(groupId),
    ...(options.memberProfile ? { memberProfile: options.memberProfile } : {}),
    storeMessage({ groupId, sender, content, contentType, metadata }) {
      const list = store.messages(groupId);
      const last = list[list.length - 1];
      const message: GroupMessage = {
        msgId: String(last ? Number(last.msgId) + (options.msgIdStep ?? 1) : 1),
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

  const sendTo = (to: string, sessionId: string, frame: unknown): void => {
    if (host?.send({ sessionId, to, payload: JSON.stringify(frame) })) {
      counters.pushesSent++;
      return;
    }
    counters.pushesLost++;
    online.get(to)?.delete(sessionId);
  };

  /** One batch per receiver and group for everything stored in this turn. */
  const flush = (): void => {
    flushQueued = false;
    const batches = outbox;
    outbox = new Map();
    for (const [groupId, messages] of batches) {
      for (const member of membership.members(groupId).keys()) {
        const sessions = liveSessions(member);
        if (sessions.length === 0) continue;
        const mine = echo ? messages : messages.filter((m) => m.sender !== member);
        if (mine.length === 0) continue;
        const wire = mine.map(toWireMessage);
        const frames: unknown[] = [];
        // Split like a pull page: no batch outgrows what a client reads.
        for (let i = 0; push === "batch" && i < mine.length; ) {
          const part = pageWithin(mine.slice(i), ctx.maxPageBytes).map(toWireMessage);
          i += part.length;
          frames.push({
            action: "message_batch_push",
            group_id: groupId,
            code: 0,
            data: { messages: part, start_msg_id: part[0]!.msg_id, latest_msg_id: part[part.length - 1]!.msg_id, count: part.length },
          });
        }
        if (push === "message") for (const w of wire) frames.push({ action: "message_push", group_id: groupId, data: w });
        if (notify) {
          const last = wire[wire.length - 1]!;
          frames.push({
            action: "group_notify",
            group_id: groupId,
            event: "new_message",
            data: { latest_msg_id: last.msg_id, sender: last.sender, preview: last.content.slice(0, 80) },
            timestamp: last.timestamp,
          });
        }
        for (const sessionId of sessions) for (const frame of frames) sendTo(member, sessionId, frame);
      }
    }
  };

  const publish = (message: GroupMessage): void => {
    const list = outbox.get(message.groupId) ?? [];
    list.push(message);
    outbox.set(message.groupId, list);
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flush);
    }
    for (const listener of [...listeners]) {
      try {
        listener(message);
      } catch (err) {
        log.log("error", "group-service.listener-failed", { groupId: message.groupId, msgId: message.msgId, ...errorFields(err) });
      }
    }
  };

  /** `group_notify member_joined` to the group's members online (the newcomer included), so clients re-read members. */
  const announceJoined = (groupId: string, member: string): void => {
    const frame = { action: "group_notify", group_id: groupId, event: "member_joined", data: { agent_id: member }, timestamp: now() };
    for (const to of membership.members(groupId).keys()) for (const sessionId of liveSessions(to)) sendTo(to, sessionId, frame);
  };

  const handleOnline = (from: string, sessionId: string, action: string): ActionResult => {
    if (action === "register_online") {
      let sessions = online.get(from);
      if (!sessions) online.set(from, (sessions = new Map()));
      // Bounded: every push goes to each registered session, so many registrations would multiply it.
      if (!sessions.has(sessionId) && sessions.size >= MAX_ONLINE_SESSIONS_PER_AID) {
        let stalest: [string, number] | undefined;
        for (const entry of sessions) if (stalest === undefined || entry[1] < stalest[1]) stalest = entry;
        sessions.delete(stalest![0]);
      }
      sessions.set(sessionId, now());
      log.log("info", "group-service.online", { aid: from, sessionId });
    } else if (action === "heartbeat") {
      // Keeps a registration alive; a heartbeat never registers by itself.
      const seen = online.get(from)?.get(sessionId);
      if (seen !== undefined && now() - seen <= onlineTtlMs) online.get(from)!.set(sessionId, now());
    } else if (action === "unregister_online") {
      online.get(from)?.delete(sessionId);
      log.log("info", "group-service.offline", { aid: from, sessionId });
    }
    return { code: RESULT_CODES.OK, data: null, error: "" };
  };

  const handlePayload = (sessionId: string, from: string, payload: string): void => {
    const bytes = Buffer.byteLength(payload, "utf8");
    if (bytes > maxFrameBytes) {
      counters.oversizeFrames++;
      log.log("warn", "group-service.frame-dropped", { aid: from, reason: "oversize", bytes });
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(payload);
    } catch {
      raw = undefined;
    }
    const requestId = isPlain(raw) && typeof raw.request_id === "string" && raw.request_id !== "" ? raw.request_id : undefined;
    if (!isPlain(raw) || requestId === undefined) {
      // Without a request_id there is nobody to answer.
      counters.malformedFrames++;
      log.log("warn", "group-service.frame-dropped", { aid: from, reason: "malformed", bytes });
      return;
    }
    counters.requests++;
    const action = typeof raw.action === "string" ? raw.action : "";
    const params = raw.params ?? null;
    let result: ActionResult & { joined?: string };
    if (!action) result = { code: RESULT_CODES.INVALID_PARAMS, data: null, error: "action: expected a string" };
    else if (ONLINE_ACTIONS.has(action)) result = handleOnline(from, sessionId, action);
    else if (params !== null && !isPlain(params)) result = { code: RESULT_CODES.INVALID_PARAMS, data: null, error: "params: expected an object" };
    else if (MEMBERSHIP_ACTIONS.has(action)) result = membership.handle(from, action, raw.group_id, params ?? {});
    else if (isMessageAction(action)) result = handleAction(ctx, { aid: from }, action, raw.group_id, params);
    else result = { code: RESULT_CODES.NOT_IMPLEMENTED, data: null, error: `action not implemented: ${action.slice(0, 60)}` };
    const response: WireResponse = {
      action,
      request_id: requestId,
      code: result.code,
      ...(typeof raw.group_id === "string" ? { group_id: raw.group_id } : {}),
      data: result.data,
      error: result.error,
    };
    if (result.code !== RESULT_CODES.OK) log.log("debug", "group-service.request-refused", { aid: from, action, code: result.code, error: result.error });
    if (!host?.send({ sessionId, to: from, payload: JSON.stringify(response) })) {
      log.log("debug", "group-service.response-lost", { aid: from, action, sessionId });
    }
    if (result.joined) {
      log.log("info", "group-service.member-joined", { groupId: raw.group_id, aid: result.joined, via: action });
      if (typeof raw.group_id === "string") announceJoined(raw.group_id, result.joined);
    }
    if (result.stored) publish(result.stored);
  };

  const service: GroupService = {
    aid,
    attach(h) {
      host = h;
    },
    onMessage({ sessionId, from, payload }) {
      try {
        handlePayload(sessionId, from, payload);
      } catch (err) {
        // Never out of the handler: the service shares its process with the message service.
        log.log("error", "group-service.frame-failed", { aid: from, ...errorFields(err) });
      }
    },
    onSessionEnd({ sessionId, from }) {
      online.get(from)?.delete(sessionId);
      if (online.get(from)?.size === 0) online.delete(from);
    },
    post({ groupId, sender, content, contentType = "text", metadata = null }) {
      if (!membership.has(groupId)) throw new GroupServiceError("GROUP_NOT_FOUND", `no group \`${groupId}\``, groupId);
      if (typeof sender !== "string" || sender === "" || typeof content !== "string" || content === "") {
        throw new GroupServiceError("INVALID_MESSAGE", "Expected `sender` and `content` to be non-empty strings", groupId);
      }
      const bytes = messageBytes(content, metadata);
      if (bytes > ctx.maxMessageBytes) {
        throw new GroupServiceError("INVALID_MESSAGE", `message too large: ${bytes} bytes of content and metadata as JSON, at most ${ctx.maxMessageBytes}`, groupId);
      }
      const message = ctx.storeMessage({ groupId, sender, content, contentType, metadata });
      publish(message);
      return message;
    },
    postEvent({ groupId, eventType, content, actor, target }) {
      const metadata: Plain = { event_type: eventType, ...(actor ? { actor } : {}), ...(target ? { target } : {}) };
      return service.post({ groupId, sender: aid, content: content || [actor, eventType, target].filter(Boolean).join(" "), contentType: "event", metadata });
    },
    history: (groupId) => [...store.messages(groupId)],
    onStored(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    groupIds: () => Object.keys(options.groups).sort(),
    members: (groupId) => [...membership.members(groupId).keys()].sort(),
    forgetOnline(aid) {
      if (aid === undefined) online.clear();
      else online.delete(aid);
    },
    onlineAids(groupId) {
      const out: string[] = [];
      for (const member of [...online.keys()]) {
        if (liveSessions(member).length === 0) continue;
        if (groupId === undefined || membership.isMember(groupId, member)) out.push(member);
      }
      return out.sort();
    },
    inviteCode(groupId) {
      const code = membership.inviteCode(groupId);
      if (!code) throw new GroupServiceError("GROUP_NOT_FOUND", `no group \`${groupId}\``, groupId);
      return code;
    },
    joinLink(groupId) {
      return `https://${aid}/${encodeURIComponent(groupId)}?code=${encodeURIComponent(service.inviteCode(groupId))}`;
    },
    addMember(groupId, member) {
      const added = membership.add(groupId, member);
      if (added) announceJoined(groupId, member);
      return added;
    },
    pendingJoinRequests: (groupId) => membership.pendingRequests(groupId),
    counters: () => ({ ...counters }),
  };
  return service;
}

function validateOptions(o: GroupServiceOptions): void {
  const problems: string[] = [];
  if (typeof o.domain !== "string" || !/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(o.domain)) problems.push(`domain: expected a domain such as acp.local, got \`${String(o.domain)}\``);
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
  if (problems.length > 0) throw new GroupServiceError("INVALID_OPTIONS", `invalid group service options\n  ${problems.join("\n  ")}`);
}

/** The history file, or memory; bad lines in the file are skipped and counted in the log. */
function openHistory(file: string | undefined, log: Logger): GroupHistoryStore {
  if (!file) return createMemoryHistoryStore();
  const store = createFileHistoryStore(file);
  if (store.skippedLines > 0) log.log("warn", "server.history-lines-skipped", { file, skipped: store.skippedLines });
  return store;
}
