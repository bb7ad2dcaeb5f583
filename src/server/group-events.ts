// The local group service's event log, as the official SDK reads it: every membership or profile
// change (member joined, left, removed; announcement, rules or meta updated) becomes an event
// `{ event_id, event_type, actor, timestamp, target?, data? }` with an id counting up per group,
// kept in the history store. The members online hear of it at once, twice over as the SDK's
// handler expects: `group_notify` `group_event` (the event itself) and `group_notify` `new_event`
// (`latest_event_id`, `event_type`, `summary`: a hint to pull). Anyone can catch up with
// `pull_events` after their cursor and `ack_events`; `get_cursor` reports the event cursor.
import { describe, type Plain } from "../wire/plain.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import type { ActionResult } from "./actions.ts";
import type { GroupHistoryStore, StoredGroupEvent } from "./history-store.ts";

/** The event types the local service records (the SDK knows more: banned, dissolved, …). */
export type LocalEventType = "member_joined" | "member_left" | "member_removed" | "announcement_updated" | "rules_updated" | "meta_updated";

export interface RecordEventParams {
  groupId: string;
  type: LocalEventType;
  /** Who did it (the joiner, the leaver, whoever updated the announcement). */
  actor: string;
  /** Whom it was done to (the member who joined, left or was removed). */
  target?: string;
  data?: Plain;
  /** One line for `new_event`'s summary, naming who and what. */
  summary: string;
  /** Told besides the members online (e.g. the member who just left). */
  alsoTell?: readonly string[];
}

export interface EventCursor {
  start_event_id: number;
  current_event_id: number;
  latest_event_id: number;
  unread_count: number;
}

const DEFAULT_PULL_LIMIT = 50;
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const ok = (data: unknown = null): ActionResult => ({ code: RESULT_CODES.OK, data, error: "" });
const fail = (code: number, error: string): ActionResult => ({ code, data: null, error });

export class GroupEvents {
  readonly #store: GroupHistoryStore;
  readonly #now: () => number;
  /** Sends the frames to the group's members online and to `alsoTell`. */
  readonly #notify: (groupId: string, frames: readonly unknown[], alsoTell: readonly string[]) => void;
  readonly #maxPullLimit: number;

  constructor(p: {
    store: GroupHistoryStore;
    now: () => number;
    notify: (groupId: string, frames: readonly unknown[], alsoTell: readonly string[]) => void;
    maxPullLimit: number;
  }) {
    this.#store = p.store;
    this.#now = p.now;
    this.#notify = p.notify;
    this.#maxPullLimit = p.maxPullLimit;
  }

  /** Appends the event to the group's log and tells the members online. */
  record(p: RecordEventParams): StoredGroupEvent {
    const last = this.#store.events(p.groupId).at(-1);
    const event: StoredGroupEvent = {
      event_id: (last?.event_id ?? 0) + 1,
      event_type: p.type,
      actor: p.actor,
      timestamp: this.#now(),
      ...(p.target !== undefined ? { target: p.target } : {}),
      ...(p.data !== undefined ? { data: p.data } : {}),
    };
    this.#store.appendEvent(p.groupId, event);
    const at = event.timestamp;
    // The event itself first: a client that has it needs no pull for the hint that follows.
    this.#notify(
      p.groupId,
      [
        { action: "group_notify", group_id: p.groupId, event: "group_event", data: event, timestamp: at },
        { action: "group_notify", group_id: p.groupId, event: "new_event", data: { latest_event_id: event.event_id, event_type: p.type, summary: p.summary }, timestamp: at },
      ],
      p.alsoTell ?? [],
    );
    return event;
  }

  /** The `event_cursor` of `get_cursor` for `aid`. */
  cursor(groupId: string, aid: string): EventCursor {
    const events = this.#store.events(groupId);
    const current = this.#store.eventCursor(groupId, aid);
    return {
      start_event_id: events[0]?.event_id ?? 0,
      current_event_id: current,
      latest_event_id: events.at(-1)?.event_id ?? 0,
      unread_count: events.filter((e) => e.event_id > current).length,
    };
  }

  /** `pull_events { after_event_id?, limit? }`: after_event_id 0 (or absent) means after the member's cursor. */
  pull(groupId: string, aid: string, params: Plain): ActionResult {
    const after = params.after_event_id ?? 0;
    if (!isCount(after)) return fail(RESULT_CODES.INVALID_PARAMS, `after_event_id: expected a non-negative integer, got ${describe(after)}`);
    const limit = params.limit ?? DEFAULT_PULL_LIMIT;
    if (!isCount(limit) || limit === 0) return fail(RESULT_CODES.INVALID_PARAMS, `limit: expected a positive integer, got ${describe(limit)}`);
    const from = after === 0 ? this.#store.eventCursor(groupId, aid) : after;
    const events = this.#store.events(groupId);
    const start = events.findIndex((e) => e.event_id > from);
    const page = start < 0 ? [] : events.slice(start, start + Math.min(limit, this.#maxPullLimit));
    return ok({ events: page, has_more: start >= 0 && start + page.length < events.length, latest_event_id: events.at(-1)?.event_id ?? 0 });
  }

  /** `ack_events { event_id }`: the member's event cursor moves forward (never past the latest). */
  ack(groupId: string, aid: string, params: Plain): ActionResult {
    const id = params.event_id;
    if (!isCount(id)) return fail(RESULT_CODES.INVALID_PARAMS, `event_id: expected a non-negative integer, got ${describe(id)}`);
    const next = Math.min(id, this.#store.events(groupId).at(-1)?.event_id ?? 0);
    if (next > this.#store.eventCursor(groupId, aid)) this.#store.setEventCursor(groupId, aid, next);
    return ok();
  }
}
