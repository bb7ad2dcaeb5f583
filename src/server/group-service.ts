// The local group service `group.<domain>`: a ServiceAgent the message service hosts in-process.
// It speaks the ACP group frames inside sessions: the caller's aid is the one the message service
// authenticated, pushes go only to sessions that registered online, and new messages reach them
// as `message_batch_push` aggregated per receiver and group. Groups and members come from config
// plus joins; history, msg ids, ack cursors, joins and invite codes live in a GroupHistoryStore.
// Its parts: group-requests.ts (one request), online-registry.ts (who is pushed to), fanout.ts
// (the pushes), membership.ts and actions.ts (what a request does).
import type { GroupMessage } from "../types.ts";
import { errorFields, silentLogger } from "../log.ts";
import { MAX_MESSAGE_BYTES, MAX_PAGE_BYTES, messageBytes } from "../wire/limits.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import type { Plain } from "../wire/plain.ts";
import type { ActionContext, LiveGroupProfile } from "./actions.ts";
import { Fanout } from "./fanout.ts";
import { GroupEvents } from "./group-events.ts";
import { handleGroupRequest, type GroupRequestDeps } from "./group-requests.ts";
import { GroupServiceError, openHistory, validateOptions, type GroupServiceOptions } from "./group-service-options.ts";
import type { GroupHistoryStore, StoredGroupEvent } from "./history-store.ts";
import { Membership } from "./membership.ts";
import { OnlineRegistry } from "./online-registry.ts";
import { RateLimiter } from "./rate-limit.ts";
import type { ServiceAgent, ServiceAgentHost } from "./service-agent.ts";

export type { GroupDefinition, GroupMember } from "./actions.ts";
export { GroupServiceError, type GroupServiceOptions } from "./group-service-options.ts";
export { MAX_ONLINE_SESSIONS_PER_AID } from "./online-registry.ts";

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
  /** The group's event log (member joined, left, …), oldest first. */
  events(groupId: string): StoredGroupEvent[];
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
  /**
   * Sets the group's announcement and/or rules text (as the group's admin would) and tells the
   * group (`announcement_updated`, `rules_updated`). Kept until the service restarts; the
   * definition's values come back then.
   */
  updateGroupProfile(groupId: string, change: { announcement?: string; rules?: string }, by: string): void;
  counters(): Readonly<GroupServiceCounters>;
}

export function createGroupService(options: GroupServiceOptions): GroupService {
  validateOptions(options);
  const aid = `group.${options.domain}`;
  const log = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const store = options.history ?? openHistory(options.historyFile, log);
  const membership = new Membership(options.groups, store);
  const listeners = new Set<(m: GroupMessage) => void>();
  const online = new OnlineRegistry({ now, ttlMs: options.onlineTtlMs ?? 300_000, logger: log });
  let host: ServiceAgentHost | undefined;
  const counters: GroupServiceCounters = { requests: 0, malformedFrames: 0, oversizeFrames: 0, messagesStored: 0, pushesSent: 0, pushesLost: 0 };
  // The groups' announcement and rules as last set: the definitions' at start.
  const profiles = new Map<string, LiveGroupProfile>();
  const groupProfile = (groupId: string): LiveGroupProfile => {
    let live = profiles.get(groupId);
    if (!live) {
      const def = options.groups[groupId];
      live = { announcement: { content: def?.announcement ?? "", updatedBy: "", updatedAt: 0 }, rules: def?.rules };
      profiles.set(groupId, live);
    }
    return live;
  };
  // The event log tells members through the fanout, which exists once the actions do: late-bound.
  let fanout!: Fanout;
  const events = new GroupEvents({ store, now, maxPullLimit: options.maxPullLimit ?? 100, notify: (groupId, frames, alsoTell) => fanout.notify(groupId, frames, alsoTell) });
  const actions = actionContext(options, { store, membership, now, counters, events, groupProfile });
  fanout = new Fanout({
    membership,
    online,
    delivery: { push: options.delivery?.push ?? "batch", notify: options.delivery?.notify ?? false, echo: options.delivery?.echo ?? true },
    maxPageBytes: actions.maxPageBytes,
    counters,
    now,
    host: () => host,
  });

  /** A stored message: to the members online, and to the service's own listeners. */
  const publish = (message: GroupMessage): void => {
    fanout.queue(message);
    for (const listener of [...listeners]) {
      try {
        listener(message);
      } catch (err) {
        log.log("error", "group-service.listener-failed", { groupId: message.groupId, msgId: message.msgId, ...errorFields(err) });
      }
    }
  };

  const memberJoined = (groupId: string, member: string, via: string): void => {
    log.log("info", "group-service.member-joined", { groupId, aid: member, via });
    events.record({ groupId, type: "member_joined", actor: member, target: member, data: { agent_id: member, role: "member" }, summary: `${member} joined` });
  };

  const memberLeft = (groupId: string, member: string): void => {
    log.log("info", "group-service.member-left", { groupId, aid: member });
    events.record({ groupId, type: "member_left", actor: member, target: member, data: { agent_id: member, reason: "left" }, summary: `${member} left`, alsoTell: [member] });
  };

  const requests: GroupRequestDeps = {
    maxFrameBytes: options.maxFrameBytes ?? 1024 * 1024,
    counters,
    log,
    online,
    membership,
    actions,
    host: () => host,
    publish,
    joined: memberJoined,
    left: memberLeft,
  };

  const service: GroupService = {
    aid,
    attach(h) {
      host = h;
    },
    onMessage({ sessionId, from, payload }) {
      try {
        handleGroupRequest(requests, sessionId, from, payload);
      } catch (err) {
        // Never out of the handler: the service shares its process with the message service.
        log.log("error", "group-service.frame-failed", { aid: from, ...errorFields(err) });
      }
    },
    onSessionEnd({ sessionId, from }) {
      online.endSession(from, sessionId);
    },
    post({ groupId, sender, content, contentType = "text", metadata = null }) {
      if (!membership.has(groupId)) throw new GroupServiceError("GROUP_NOT_FOUND", `no group \`${groupId}\``, groupId);
      if (typeof sender !== "string" || sender === "" || typeof content !== "string" || content === "") {
        throw new GroupServiceError("INVALID_MESSAGE", "Expected `sender` and `content` to be non-empty strings", groupId);
      }
      const bytes = messageBytes(content, metadata);
      if (bytes > actions.maxMessageBytes) {
        throw new GroupServiceError("INVALID_MESSAGE", `message too large: ${bytes} bytes of content and metadata as JSON, at most ${actions.maxMessageBytes}`, groupId);
      }
      const message = actions.storeMessage({ groupId, sender, content, contentType, metadata });
      publish(message);
      return message;
    },
    postEvent({ groupId, eventType, content, actor, target }) {
      const metadata: Plain = { event_type: eventType, ...(actor ? { actor } : {}), ...(target ? { target } : {}) };
      return service.post({ groupId, sender: aid, content: content || [actor, eventType, target].filter(Boolean).join(" "), contentType: "event", metadata });
    },
    history: (groupId) => [...store.messages(groupId)],
    events: (groupId) => [...store.events(groupId)],
    onStored(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    groupIds: () => Object.keys(options.groups).sort(),
    members: (groupId) => [...membership.members(groupId).keys()].sort(),
    forgetOnline(aid) {
      online.forget(aid);
    },
    onlineAids(groupId) {
      const out: string[] = [];
      for (const member of online.aids()) {
        if (online.liveSessions(member).length === 0) continue;
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
      if (added) memberJoined(groupId, member, "addMember");
      return added;
    },
    pendingJoinRequests: (groupId) => membership.pendingRequests(groupId),
    updateGroupProfile(groupId, change, by) {
      if (!membership.has(groupId)) throw new GroupServiceError("GROUP_NOT_FOUND", `no group \`${groupId}\``, groupId);
      const live = groupProfile(groupId);
      if (change.announcement !== undefined) {
        live.announcement = { content: change.announcement, updatedBy: by, updatedAt: now() };
        events.record({ groupId, type: "announcement_updated", actor: by, data: { updated_by: by }, summary: `${by} updated the announcement` });
      }
      if (change.rules !== undefined) {
        live.rules = change.rules;
        events.record({ groupId, type: "rules_updated", actor: by, data: { updated_by: by }, summary: `${by} updated the rules` });
      }
    },
    counters: () => ({ ...counters }),
  };
  return service;
}

/** What the message actions read and how they store a message (msg ids count up by `msgIdStep`). */
function actionContext(
  options: GroupServiceOptions,
  p: { store: GroupHistoryStore; membership: Membership; now: () => number; counters: GroupServiceCounters; events: GroupEvents; groupProfile: (groupId: string) => LiveGroupProfile },
): ActionContext {
  const { store, membership, now, counters, events, groupProfile } = p;
  const rateLimit = options.rateLimit === undefined ? { messages: 10, perMs: 10_000 } : options.rateLimit;
  return {
    groups: options.groups,
    store,
    events,
    groupProfile,
    limiter: rateLimit ? new RateLimiter(rateLimit) : undefined,
    now,
    maxMessageChars: options.maxMessageChars ?? 10_000,
    maxMessageBytes: options.maxMessageBytes ?? MAX_MESSAGE_BYTES,
    maxPageBytes: options.maxPageBytes ?? MAX_PAGE_BYTES,
    maxPullLimit: options.maxPullLimit ?? 100,
    members: (groupId) => membership.members(groupId),
    ...(options.memberProfile ? { memberProfile: options.memberProfile } : {}),
    ...(options.isPerson ? { isPerson: options.isPerson } : {}),
    storeMessage({ groupId, sender, content, contentType, metadata }) {
      const list = store.messages(groupId);
      const last = list[list.length - 1];
      const message: GroupMessage = {
        msgId: String(last ? msgIdValue(last.msgId) + (options.msgIdStep ?? 1) : 1),
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
}
