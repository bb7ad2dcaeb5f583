// The connection's groups: one GroupFeed each, wired to pull_messages and ack_messages on the
// current session, the saved cursor and the settled-ack limit; and one GroupEventFeed each, wired
// to pull_events and ack_events, handing the service's events to `onEvent`. A new session starts
// every group from get_cursor; which session is current is the connection's to say.
// Acks are coalesced, as the SDK's sync loop acks the last id of a run: what a turn delivers (a
// socket read's frames, a pull page) is acked once per group, after the turn, with the highest id
// settled by then — never one request per message, never past the settled cursor.
import type { Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { computeBackoffDelay, type BackoffSettings } from "../util/backoff.ts";
import type { GroupConnectionParams } from "./connection-options.ts";
import type { ConnectionCounters } from "./connection.ts";
import { TransportError } from "./errors.ts";
import { GroupFeed } from "./group-feed.ts";
import { GroupEventFeed, toGroupEvent } from "./group-event-feed.ts";
import type { ResponseFrame } from "./pending-requests.ts";
import { isMsgIdNumber } from "../wire/msg-id.ts";
import { isPlain, type Plain } from "../wire/plain.ts";
import { parsePullData } from "../wire/responses.ts";

const MAX_HELD_PUSHES = 5000;

export interface GroupFeedsParams {
  groups: readonly string[];
  connection: Pick<GroupConnectionParams, "getCursor" | "ackCursor" | "onMessages" | "pageSize" | "onEvent">;
  /** A request that must succeed on the current session. */
  call(action: string, groupId: string, params?: Plain): Promise<ResponseFrame>;
  counters: ConnectionCounters;
  logger: Logger;
  retry: BackoffSettings;
  random: () => number;
}

export class GroupFeeds {
  readonly map = new Map<string, GroupFeed>();
  readonly events = new Map<string, GroupEventFeed>();
  readonly #p: GroupFeedsParams;
  /** Last msg id acknowledged per group, so an unchanged cursor is not acked again. */
  readonly #acked = new Map<string, number>();
  /** Groups with an ack due at the end of this turn: the highest id accepted so far. */
  #due = new Map<string, number>();
  #flushQueued = false;

  constructor(p: GroupFeedsParams) {
    this.#p = p;
    for (const groupId of new Set(p.groups)) {
      if (typeof groupId !== "string" || groupId === "") {
        throw new TransportError("INVALID_ARGUMENT", `Expected \`groups\` to hold non-empty strings, got \`${String(groupId)}\``);
      }
      this.map.set(groupId, this.#makeFeed(groupId));
      this.events.set(groupId, this.#makeEventFeed(groupId));
    }
  }

  /** At the end of this turn, acks min(highest accepted, the settled cursor) when it moved. */
  ack(groupId: string, accepted: number): void {
    if (!(accepted > (this.#due.get(groupId) ?? 0))) return;
    this.#due.set(groupId, accepted);
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#flushQueued = false;
    const due = this.#due;
    this.#due = new Map();
    // A feed closed meanwhile (the connection closing) acks nothing more.
    for (const [groupId, accepted] of due) if (this.map.get(groupId)?.status !== "closed") this.#ackNow(groupId, accepted);
  }

  #ackNow(groupId: string, accepted: number): void {
    const limit = this.#p.connection.ackCursor;
    const msgId = limit ? Math.min(accepted, limit(groupId)) : accepted;
    if (!(msgId > 0) || msgId <= (this.#acked.get(groupId) ?? 0)) return;
    this.#acked.set(groupId, msgId);
    void this.#p.call("ack_messages", groupId, { msg_id: msgId }).catch((err) => {
      // Not acked after all: let the next attempt send it again.
      if ((this.#acked.get(groupId) ?? 0) === msgId) this.#acked.delete(groupId);
      this.#p.logger.log("debug", "transport.ack-failed", { groupId, msgId, ...errorFields(err) });
    });
  }

  /**
   * A new session: each group starts after max(the service's current_msg_id, the saved cursor) —
   * the SDK's sync starting point; its event log from the same answer — pulls, and is ready once
   * fed (a group whose pull failed is waited for through its retries). `current`: still that session.
   */
  async connectAll(sessionId: string, current: () => boolean): Promise<void> {
    await Promise.all(
      [...this.map.values()].map(async (feed) => {
        const cursor = await this.#startCursor(feed.groupId, sessionId, current);
        if (current()) await feed.connect(cursor);
        if (current()) await feed.whenLive();
      }),
    );
  }

  /** The session went down: every feed waits for the next one. */
  disconnectAll(): void {
    for (const feed of this.map.values()) feed.disconnect();
    for (const feed of this.events.values()) feed.disconnect();
  }

  async #startCursor(groupId: string, sessionId: string, current: () => boolean): Promise<number> {
    const saved = this.#savedCursor(groupId);
    try {
      const frame = await this.#p.call("get_cursor", groupId);
      const cursor = isPlain(frame.data) && isPlain(frame.data.msg_cursor) ? frame.data.msg_cursor.current_msg_id : undefined;
      const latestEvent = isPlain(frame.data) && isPlain(frame.data.event_cursor) ? frame.data.event_cursor.latest_event_id : undefined;
      if (current()) this.events.get(groupId)?.connect(isMsgIdNumber(latestEvent) ? latestEvent : undefined);
      if (isMsgIdNumber(cursor)) return Math.max(saved, cursor);
      this.#p.counters.malformedFrames++;
      this.#p.logger.log("warn", "transport.bad-cursor", { groupId, sessionId });
    } catch (err) {
      if (current()) this.#p.logger.log("warn", "transport.get-cursor-failed", { groupId, sessionId, ...errorFields(err) });
    }
    return saved;
  }

  /** The saved cursor; a broken getter counts as 0 (everything is pulled again, nothing lost). */
  #savedCursor(groupId: string): number {
    try {
      const c = this.#p.connection.getCursor(groupId);
      return Number.isSafeInteger(c) && c >= 0 ? c : 0;
    } catch (err) {
      this.#p.logger.log("error", "transport.get-cursor-failed", { groupId, ...errorFields(err) });
      return 0;
    }
  }

  async #pull(groupId: string, after: number, limit: number) {
    const frame = await this.#p.call("pull_messages", groupId, { after_msg_id: after, limit });
    const parsed = parsePullData(groupId, frame.data);
    if (!parsed.ok) {
      this.#p.counters.malformedFrames++;
      throw new TransportError("BAD_RESPONSE", `pull_messages response: ${parsed.reason}`, { action: "pull_messages", groupId });
    }
    if (parsed.page.invalid.length > 0) {
      this.#p.counters.malformedMessages += parsed.page.invalid.length;
      this.#p.logger.log("warn", "transport.messages-dropped", { groupId, via: "pull_messages", reasons: parsed.page.invalid.slice(0, 5) });
    }
    return parsed.page;
  }

  #makeEventFeed(groupId: string): GroupEventFeed {
    return new GroupEventFeed({
      groupId,
      pull: async (after, limit) => (await this.#p.call("pull_events", groupId, { after_event_id: after, limit })).data,
      ack: (eventId) =>
        void this.#p.call("ack_events", groupId, { event_id: eventId }).catch((err) => this.#p.logger.log("debug", "transport.ack-failed", { groupId, eventId, ...errorFields(err) })),
      deliver: (event) => {
        try {
          this.#p.connection.onEvent?.(groupId, toGroupEvent(event));
        } catch (err) {
          this.#p.logger.log("error", "transport.event-handler-failed", { groupId, event: event.eventType, ...errorFields(err) });
        }
      },
      counters: this.#p.counters,
      logger: this.#p.logger,
    });
  }

  #makeFeed(groupId: string): GroupFeed {
    return new GroupFeed({
      groupId,
      onMessages: (g, messages) => this.#p.connection.onMessages(g, messages),
      pull: (after, limit) => this.#pull(groupId, after, limit),
      ack: (msgId) => this.ack(groupId, msgId),
      retryDelay: (attempt) => computeBackoffDelay(attempt, this.#p.retry, this.#p.random),
      counters: this.#p.counters,
      logger: this.#p.logger,
      pageSize: this.#p.connection.pageSize ?? 50,
      maxHeld: MAX_HELD_PUSHES,
    });
  }
}
