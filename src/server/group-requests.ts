// One request to the group service, from payload to response: size and shape checked at the edge
// (a frame without a request_id has nobody to answer and is dropped), routed to the online
// registry, membership or message actions, answered on the caller's session; a join goes to the
// event log and a stored message is fanned out after the response.
import type { GroupMessage, Logger } from "../types.ts";
import type { WireResponse } from "../wire/frames.ts";
import { isPlain } from "../wire/plain.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import { handleAction, isMessageAction, type ActionContext, type ActionResult } from "./actions.ts";
import { MEMBERSHIP_ACTIONS, type Membership } from "./membership.ts";
import { ONLINE_ACTIONS, type OnlineRegistry } from "./online-registry.ts";
import type { ServiceAgentHost } from "./service-agent.ts";

export interface RequestCounters {
  requests: number;
  malformedFrames: number;
  oversizeFrames: number;
}

export interface GroupRequestDeps {
  maxFrameBytes: number;
  counters: RequestCounters;
  log: Logger;
  online: OnlineRegistry;
  membership: Membership;
  actions: ActionContext;
  /** The message service hosting the group service; undefined until attached. */
  host: () => ServiceAgentHost | undefined;
  /** A message a request stored: to the members and the service's listeners. */
  publish(message: GroupMessage): void;
  /** A member joined by this request: the event log records it (and tells the members online). */
  joined(groupId: string, aid: string, via: string): void;
  /** A member left by this request: the event log records it (and tells the members online and the leaver). */
  left(groupId: string, aid: string): void;
}

/** Handles one payload from `from` on `sessionId`. Throws only on a bug; the caller logs it. */
export function handleGroupRequest(deps: GroupRequestDeps, sessionId: string, from: string, payload: string): void {
  const { counters, log } = deps;
  const bytes = Buffer.byteLength(payload, "utf8");
  if (bytes > deps.maxFrameBytes) {
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
  let result: ActionResult & { joined?: string; left?: string };
  if (!action) result = { code: RESULT_CODES.INVALID_PARAMS, data: null, error: "action: expected a string" };
  else if (ONLINE_ACTIONS.has(action)) result = deps.online.handle(from, sessionId, action);
  else if (params !== null && !isPlain(params)) result = { code: RESULT_CODES.INVALID_PARAMS, data: null, error: "params: expected an object" };
  else if (MEMBERSHIP_ACTIONS.has(action)) result = deps.membership.handle(from, action, raw.group_id, params ?? {});
  else if (isMessageAction(action)) result = handleAction(deps.actions, { aid: from }, action, raw.group_id, params);
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
  if (!deps.host()?.send({ sessionId, to: from, payload: JSON.stringify(response) })) {
    log.log("debug", "group-service.response-lost", { aid: from, action, sessionId });
  }
  if (result.joined && typeof raw.group_id === "string") deps.joined(raw.group_id, result.joined, action);
  if (result.left && typeof raw.group_id === "string") deps.left(raw.group_id, result.left);
  if (result.stored) deps.publish(result.stored);
}
