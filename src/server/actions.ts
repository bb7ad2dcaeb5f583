// Message actions of the local group service: one function per ACP action, answering with the
// protocol's result codes. No sessions here; the service wires the results to frames.
import { EVENT_CONTENT_TYPES } from "../wire/event-types.ts";
import type { GroupMessage } from "../types.ts";
import { toWireMessage } from "../wire/message.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import { describe, isPlain, type Plain } from "../wire/plain.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import { messageBytes } from "../wire/limits.ts";
import type { GroupEvents } from "./group-events.ts";
import type { GroupHistoryStore } from "./history-store.ts";
import type { RateLimiter } from "./rate-limit.ts";

export interface GroupMember {
  human?: boolean;
}

export interface GroupDefinition {
  name?: string;
  /** Configured members by aid; members who join by invite code or request are added to these. */
  members: Record<string, GroupMember>;
  /** The invite code of the group's join link. Default: a random one, kept in the history store. */
  inviteCode?: string;
  /** request_join is approved at once. Default false (the request waits; a second one answers 1012). */
  openJoin?: boolean;
  /** The group's announcement (`get_announcement`); the service's `updateGroupProfile` changes it. */
  announcement?: string;
  /** The group's rules as text (`get_rules` `rules`); the service's `updateGroupProfile` changes them. */
  rules?: string;
}

export interface LiveGroupProfile {
  announcement: { content: string; updatedBy: string; updatedAt: number };
  rules: string | undefined;
}

export interface ActionContext {
  groups: Readonly<Record<string, GroupDefinition>>;
  store: GroupHistoryStore;
  /** The group's announcement and rules text as last set (the definition's, or the service's updateGroupProfile). */
  groupProfile(groupId: string): LiveGroupProfile;
  /** The group's event log: pull_events, ack_events and get_cursor's event_cursor. */
  events: Pick<GroupEvents, "pull" | "ack" | "cursor">;
  limiter: RateLimiter | undefined;
  now(): number;
  maxMessageChars: number;
  /** Content plus metadata as JSON, in bytes; larger send_message answers 1009. */
  maxMessageBytes: number;
  /** A pull page stops before this many bytes of messages (always at least one message). */
  maxPageBytes: number;
  maxPullLimit: number;
  /** Configured and joined members of an existing group. */
  members(groupId: string): ReadonlyMap<string, GroupMember>;
  /**
   * A member's type as read from its published agent.md (0 read, 1024 none, 1025 invalid).
   * Absent: the service reads no profiles and `refresh_member_types` is not implemented.
   */
  memberProfile?(aid: string): { type: "human" | "agent" | "unknown"; code: 0 | 1024 | 1025; declared?: string };
  /** The operator's rule for who else is a person (see GroupServiceOptions.isPerson). */
  isPerson?(aid: string): boolean;
  /** Stores a message with the next msg id; the service fans it out. */
  storeMessage(params: { groupId: string; sender: string; content: string; contentType: string; metadata: Plain | null }): GroupMessage;
}

export interface Caller {
  /** Authenticated by the message service's sign-in. */
  aid: string;
}

export interface ActionResult {
  code: number;
  data: unknown;
  error: string;
  /** A message stored by this request: fanned out after the response is sent. */
  stored?: GroupMessage;
}

const ok = (data: unknown = null): ActionResult => ({ code: RESULT_CODES.OK, data, error: "" });
const fail = (code: number, error: string, data: unknown = null): ActionResult => ({ code, data, error });

const DEFAULT_PULL_LIMIT = 50;
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The message actions (everything needing a group and membership). */
export function isMessageAction(action: string): boolean {
  return GROUP_ACTIONS.has(action);
}

export function handleAction(ctx: ActionContext, caller: Caller, action: string, groupId: unknown, rawParams: unknown): ActionResult {
  if (rawParams !== undefined && rawParams !== null && !isPlain(rawParams)) {
    return fail(RESULT_CODES.INVALID_PARAMS, `params: expected an object, got ${describe(rawParams)}`);
  }
  const params: Plain = rawParams ?? {};
  if (!GROUP_ACTIONS.has(action)) return fail(RESULT_CODES.NOT_IMPLEMENTED, `action not implemented: ${action.slice(0, 60)}`);
  if (typeof groupId !== "string" || groupId === "") return fail(RESULT_CODES.INVALID_PARAMS, "group_id: required");
  const group = Object.hasOwn(ctx.groups, groupId) ? ctx.groups[groupId] : undefined;
  if (!group) return fail(RESULT_CODES.GROUP_NOT_FOUND, "group not found");
  const members = ctx.members(groupId);
  if (!members.has(caller.aid)) return fail(RESULT_CODES.NOT_MEMBER, "not a member of this group");

  const messages = ctx.store.messages(groupId);
  const latest = messages.length > 0 ? msgIdValue(messages[messages.length - 1]!.msgId) : 0;
  switch (action) {
    case "send_message":
      return sendMessage(ctx, caller, groupId, params);
    case "pull_messages": {
      const after = params.after_msg_id ?? 0;
      if (!isCount(after)) return fail(RESULT_CODES.INVALID_PARAMS, `after_msg_id: expected a non-negative integer, got ${describe(after)}`);
      const limit = params.limit ?? DEFAULT_PULL_LIMIT;
      if (!isCount(limit) || limit === 0) return fail(RESULT_CODES.INVALID_PARAMS, `limit: expected a positive integer, got ${describe(limit)}`);
      // after_msg_id 0 (or absent) means "from the member's server-side cursor" (protocol).
      const from = after === 0 ? ctx.store.cursor(groupId, caller.aid) : after;
      const start = firstAfter(messages, from);
      const page = pageWithin(messages.slice(start, start + Math.min(limit, ctx.maxPullLimit)), ctx.maxPageBytes);
      return ok({
        messages: page.map(toWireMessage),
        has_more: start + page.length < messages.length,
        latest_msg_id: latest,
      });
    }
    case "ack_messages": {
      const id = params.msg_id;
      if (!isCount(id)) return fail(RESULT_CODES.INVALID_PARAMS, `msg_id: expected a non-negative integer, got ${describe(id)}`);
      const current = ctx.store.cursor(groupId, caller.aid);
      const next = Math.min(id, latest);
      if (next > current) ctx.store.setCursor(groupId, caller.aid, next);
      return ok();
    }
    case "get_cursor": {
      const current = ctx.store.cursor(groupId, caller.aid);
      return ok({
        msg_cursor: {
          start_msg_id: messages.length > 0 ? msgIdValue(messages[0]!.msgId) : 0,
          current_msg_id: current,
          latest_msg_id: latest,
          unread_count: messages.length - firstAfter(messages, current),
        },
        event_cursor: ctx.events.cursor(groupId, caller.aid),
      });
    }
    case "get_group_info":
      return ok({
        group_id: groupId,
        name: group.name ?? groupId,
        creator: "",
        member_count: members.size,
        subject: "",
        tags: [],
      });
    case "get_members":
      return ok({ members: [...members].map(([aid, m]) => memberEntry(ctx, aid, m)) });
    case "refresh_member_types":
      return refreshMemberTypes(ctx, members, params);
    case "get_rules": {
      const rules = ctx.groupProfile(groupId).rules;
      return ok({ max_members: 1000, max_message_size: ctx.maxMessageChars, max_message_bytes: ctx.maxMessageBytes, ...(rules ? { rules } : {}) });
    }
    case "get_announcement": {
      const a = ctx.groupProfile(groupId).announcement;
      return ok({ content: a.content, updated_by: a.updatedBy, updated_at: a.updatedAt });
    }
    case "pull_events":
      return ctx.events.pull(groupId, caller.aid, params);
    default: // ack_events
      return ctx.events.ack(groupId, caller.aid, params);
  }
}

const GROUP_ACTIONS = new Set([
  "send_message",
  "pull_messages",
  "ack_messages",
  "get_cursor",
  "get_group_info",
  "get_members",
  "refresh_member_types",
  "get_rules",
  "get_announcement",
  "pull_events",
  "ack_events",
]);

/**
 * A `get_members` entry: `agent` when the member's own agent.md says so (`agent`, or its framework
 * such as `openclaw`), else `human` when the operator says so (the group's definition, or its rule
 * `isPerson`), else `unknown` — and `human` only when the type is known, so a client never reads
 * "not marked human" as "agent". An agent.md saying `human` is the member's own word: clients let
 * people past the agent gap and the loop guard, so only the operator makes a person. `agent_type`
 * (what the official SDK's UI reads) carries the type as the agent.md wrote it, or `human`.
 */
function memberEntry(ctx: ActionContext, aid: string, m: GroupMember): Plain {
  const profile = ctx.memberProfile?.(aid);
  const type = profile?.type === "agent" ? "agent" : m.human === true || ctx.isPerson?.(aid) === true ? "human" : "unknown";
  const agentType = type === "human" ? "human" : type === "agent" ? (profile?.declared ?? "agent") : undefined;
  return { agent_id: aid, role: "member", type, ...(agentType !== undefined ? { agent_type: agentType } : {}), ...(type !== "unknown" ? { human: type === "human" } : {}) };
}

/**
 * Reads members' agent.md again. With `agent_id`: that member's code (0, 1024 not found, 1025
 * invalid) is the response code. Without: 0, and each member's type and code in `members`.
 */
function refreshMemberTypes(ctx: ActionContext, members: ReadonlyMap<string, GroupMember>, params: Plain): ActionResult {
  const read = ctx.memberProfile;
  if (!read) return fail(RESULT_CODES.NOT_IMPLEMENTED, "action not implemented: refresh_member_types");
  const one = params.agent_id;
  if (one !== undefined) {
    if (typeof one !== "string" || one === "") return fail(RESULT_CODES.INVALID_PARAMS, `agent_id: expected a non-empty string, got ${describe(one)}`);
    if (!members.has(one)) return fail(RESULT_CODES.NOT_MEMBER, "not a member of this group");
    const r = read(one);
    const data = { members: [{ agent_id: one, type: r.type, code: r.code }] };
    if (r.code === RESULT_CODES.AGENT_MD_NOT_FOUND) return fail(r.code, "agent.md not found", data);
    if (r.code === RESULT_CODES.AGENT_MD_INVALID) return fail(r.code, "agent.md invalid", data);
    return ok(data);
  }
  return ok({ members: [...members.keys()].map((aid) => ({ agent_id: aid, ...read(aid) })) });
}

function sendMessage(ctx: ActionContext, caller: Caller, groupId: string, params: Plain): ActionResult {
  const { content, content_type: contentType = "text", metadata = null } = params;
  if (typeof content !== "string" || content === "") {
    return fail(RESULT_CODES.INVALID_PARAMS, `content: expected a non-empty string, got ${describe(content)}`);
  }
  if (content.length > ctx.maxMessageChars) {
    return fail(RESULT_CODES.INVALID_PARAMS, `content: expected at most ${ctx.maxMessageChars} characters, got ${content.length}`);
  }
  if (typeof contentType !== "string") return fail(RESULT_CODES.INVALID_PARAMS, `content_type: expected a string, got ${describe(contentType)}`);
  if (metadata !== null && !isPlain(metadata)) {
    return fail(RESULT_CODES.INVALID_PARAMS, `metadata: expected an object or null, got ${describe(metadata)}`);
  }
  // JSON.parse takes nesting that JSON.stringify cannot write back (it recurses): such a message
  // could be stored but never pushed or pulled, and the throw would escape the socket handler.
  if (metadata !== null && nestedDeeperThan(metadata, MAX_METADATA_DEPTH)) {
    return fail(RESULT_CODES.INVALID_PARAMS, `metadata: expected at most ${MAX_METADATA_DEPTH} levels of nesting`);
  }
  const bytes = messageBytes(content, metadata);
  if (bytes > ctx.maxMessageBytes) {
    return fail(RESULT_CODES.INVALID_PARAMS, `message too large: ${bytes} bytes of content and metadata as JSON, at most ${ctx.maxMessageBytes}`, {
      max_message_bytes: ctx.maxMessageBytes,
      bytes,
    });
  }
  if (ctx.limiter) {
    const decision = ctx.limiter.take(`${groupId}\u0000${caller.aid}`, ctx.now());
    if (!decision.ok) return fail(RESULT_CODES.RATE_LIMITED, "rate limited", { retry_after_ms: decision.retryAfterMs });
  }
  // A member's post is that member's words: only the service's own messages are events.
  const stored = ctx.storeMessage({ groupId, sender: caller.aid, content, contentType: memberContentType(contentType), metadata: memberMetadata(metadata) });
  return { ...ok({ msg_id: msgIdValue(stored.msgId), timestamp: stored.timestamp }), stored };
}

const MAX_METADATA_DEPTH = 32;

// A member's post never carries one of the content types the prompt shows as events.

function memberContentType(contentType: string): string {
  return contentType === "" || EVENT_CONTENT_TYPES.has(contentType.toLowerCase()) ? "text" : contentType;
}

function memberMetadata(metadata: Plain | null): Plain | null {
  if (metadata === null || !Object.hasOwn(metadata, "event_type")) return metadata;
  const { event_type: _dropped, ...rest } = metadata;
  return rest;
}

/** The longest prefix within `maxBytes` of messages as JSON, never empty when `page` is not. */
export function pageWithin<T extends GroupMessage>(page: readonly T[], maxBytes: number): T[] {
  let used = 0;
  const out: T[] = [];
  for (const m of page) {
    used += Buffer.byteLength(JSON.stringify(toWireMessage(m)), "utf8") + 1;
    if (out.length > 0 && used > maxBytes) break;
    out.push(m);
  }
  return out;
}

/** True when objects/arrays in `value` nest deeper than `max`. Iterative: the input may be very deep. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [v, depth] = item;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Index of the first message with msg id > `after` (messages are in id order). */
export function firstAfter(messages: readonly GroupMessage[], after: number): number {
  let lo = 0;
  let hi = messages.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (msgIdValue(messages[mid]!.msgId) > after) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
