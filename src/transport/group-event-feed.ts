// Per group: the service's event log (member joined, left, removed; announcement, rules or meta
// updated) as the official SDK receives it — `group_notify` `group_event` carrying one event, and
// `group_notify` `new_event` saying the log grew (then `pull_events` after what we saw, in pages,
// and `ack_events`). Each event is handed over once, in id order; the first session starts at
// the service's latest event (what happened before was read with the members list), later
// sessions pull what they missed while away.
import type { Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { describe, isPlain, type Plain } from "../wire/plain.ts";

/**
 * A notification from the group service. For an entry of its event log (a `group_event`, or one
 * pulled after `new_event`) `event` is its `event_type` (`member_joined`, `member_left`,
 * `announcement_updated`, …), `data` its data, and the id, actor and target come alongside.
 */
export interface GroupEvent {
  event: string;
  data: Plain;
  /** Server time, when the frame carried one. */
  timestamp: number | undefined;
  /** An event-log entry's id (each handed over once, in order). */
  eventId?: number;
  /** Who did it (event-log entries). */
  actor?: string;
  /** Whom it was done to (event-log entries about a member). */
  target?: string;
}

/** A `GroupEvent` of the SDK after edge validation. */
export interface ServiceEvent {
  eventId: number;
  eventType: string;
  actor: string;
  timestamp: number | undefined;
  target: string | undefined;
  data: Plain;
}

/** Validates one `GroupEvent` object; a reason when it is not one. */
export function parseServiceEvent(v: unknown): { ok: true; event: ServiceEvent } | { ok: false; reason: string } {
  if (!isPlain(v)) return { ok: false, reason: `expected an object, got ${describe(v)}` };
  const { event_id: id, event_type: type } = v;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) return { ok: false, reason: `event_id: expected a non-negative integer, got ${describe(id)}` };
  if (typeof type !== "string" || type === "") return { ok: false, reason: `event_type: expected a non-empty string, got ${describe(type)}` };
  return {
    ok: true,
    event: {
      eventId: id,
      eventType: type,
      actor: typeof v.actor === "string" ? v.actor : "",
      timestamp: typeof v.timestamp === "number" && Number.isFinite(v.timestamp) ? v.timestamp : undefined,
      target: typeof v.target === "string" && v.target !== "" ? v.target : undefined,
      data: isPlain(v.data) ? v.data : {},
    },
  };
}

/** What the connection hands to `onEvent` for a service event: its type as `event`, the rest alongside. */
export function toGroupEvent(e: ServiceEvent): GroupEvent {
  return { event: e.eventType, data: e.data, timestamp: e.timestamp, eventId: e.eventId, actor: e.actor, ...(e.target !== undefined ? { target: e.target } : {}) };
}

export interface GroupEventFeedParams {
  groupId: string;
  /** One `pull_events` on the current session; rejects when it fails. */
  pull(afterEventId: number, limit: number): Promise<unknown>;
  /** Fire-and-forget `ack_events`. */
  ack(eventId: number): void;
  deliver(event: ServiceEvent): void;
  counters: { malformedFrames: number };
  logger: Logger;
}

const PAGE = 50;

export class GroupEventFeed {
  readonly #p: GroupEventFeedParams;
  /** The highest event id handed over (or skipped as before our time); undefined until a session said where the log stands. */
  #seen: number | undefined;
  /** Highest id the service announced that we have not handed over yet. */
  #wanted = 0;
  /** The pull loop in flight (one at a time); a new hint during it makes it go round again. */
  #pulling: Promise<void> | undefined;
  /** Bumped on every session change: a pull of an older session stops. */
  #epoch = 0;

  constructor(p: GroupEventFeedParams) {
    this.#p = p;
  }

  /**
   * A new session, with the service's event cursor when get_cursor gave one. The first time the
   * feed starts at its latest event; afterwards it pulls what was logged since what it saw.
   */
  connect(latestEventId: number | undefined): void {
    this.#epoch++;
    this.#pulling = undefined;
    if (this.#seen === undefined) {
      if (latestEventId !== undefined) {
        this.#seen = latestEventId;
        if (latestEventId > 0) this.#p.ack(latestEventId);
      }
      return;
    }
    if (latestEventId !== undefined && latestEventId > this.#seen) this.#want(latestEventId);
  }

  disconnect(): void {
    this.#epoch++;
    this.#pulling = undefined;
  }

  /** `new_event`: the log reached `latestEventId`. */
  notifyLatest(latestEventId: number): void {
    if (this.#seen === undefined) {
      // No cursor was read (a service without event_cursor): what is announced now is the start.
      this.#seen = Math.max(0, latestEventId - 1);
    }
    if (latestEventId > this.#seen) this.#want(latestEventId);
  }

  /** `group_event`: one event, handed over at once when it is the next one; a gap is pulled. */
  event(raw: unknown): void {
    const parsed = parseServiceEvent(raw);
    if (!parsed.ok) {
      this.#p.counters.malformedFrames++;
      this.#p.logger.log("warn", "transport.frame-dropped", { reason: "bad-field", detail: `group_event data.${parsed.reason}`, groupId: this.#p.groupId });
      return;
    }
    const e = parsed.event;
    this.#seen ??= e.eventId - 1;
    if (e.eventId <= this.#seen) return;
    if (e.eventId > this.#seen + 1 || this.#pulling) return this.#want(e.eventId);
    this.#handOver([e]);
  }

  #handOver(events: readonly ServiceEvent[]): void {
    let last: number | undefined;
    for (const e of [...events].sort((a, b) => a.eventId - b.eventId)) {
      if (this.#seen !== undefined && e.eventId <= this.#seen) continue;
      this.#seen = e.eventId;
      last = e.eventId;
      this.#p.deliver(e);
    }
    if (last !== undefined) this.#p.ack(last);
  }

  #want(upTo: number): void {
    this.#wanted = Math.max(this.#wanted, upTo);
    if (this.#pulling) return;
    const epoch = this.#epoch;
    const run = this.#pullLoop(epoch).finally(() => {
      if (this.#pulling === run) this.#pulling = undefined;
    });
    this.#pulling = run;
  }

  async #pullLoop(epoch: number): Promise<void> {
    try {
      while (epoch === this.#epoch && this.#seen !== undefined && this.#wanted > this.#seen) {
        const page = readPage(await this.#p.pull(this.#seen, PAGE));
        if (epoch !== this.#epoch) return;
        if (!page.ok) {
          this.#p.counters.malformedFrames++;
          this.#p.logger.log("warn", "transport.frame-dropped", { reason: "bad-field", detail: `pull_events ${page.reason}`, groupId: this.#p.groupId });
          return;
        }
        const before = this.#seen;
        this.#handOver(page.events);
        if (page.latest !== undefined) this.#wanted = Math.max(this.#wanted, page.latest);
        // A page that brought nothing new ends the loop (a confused service must not spin it).
        if (!page.hasMore || this.#seen === before) {
          if (this.#seen === before) this.#wanted = this.#seen;
          return;
        }
      }
    } catch (err) {
      // The next hint or the next session pulls again.
      if (epoch === this.#epoch) this.#p.logger.log("warn", "transport.pull-events-failed", { groupId: this.#p.groupId, after: this.#seen, ...errorFields(err) });
    }
  }
}

function readPage(data: unknown): { ok: true; events: ServiceEvent[]; hasMore: boolean; latest: number | undefined } | { ok: false; reason: string } {
  if (!isPlain(data) || !Array.isArray(data.events)) return { ok: false, reason: `data.events: expected an array, got ${describe(isPlain(data) ? data.events : data)}` };
  const events: ServiceEvent[] = [];
  for (const raw of data.events) {
    const parsed = parseServiceEvent(raw);
    if (parsed.ok) events.push(parsed.event);
  }
  const latest = typeof data.latest_event_id === "number" && Number.isSafeInteger(data.latest_event_id) ? data.latest_event_id : undefined;
  return { ok: true, events, hasMore: data.has_more === true, latest };
}
