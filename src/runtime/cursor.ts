// Which cursor is safe to save for a group: the client reports what it accepted, dispatched and
// dropped, and the saved cursor never passes a message that has not been settled.
import type { GroupClientEvent } from "../group/group-client.ts";
import { numericMsgId } from "../wire/msg-id.ts";

export interface CursorTrack {
  restoredCursor: number;
  /** Numeric ids accepted and not yet settled (dispatched or dropped for good). */
  unsettled: Set<number>;
  /** dispatchId → numeric ids in that batch. */
  inFlight: Map<number, number[]>;
}

/** Follows accepted / dispatched / dropped messages so the saved cursor never skips an unsettled one. */
export function trackCursor(g: CursorTrack, e: GroupClientEvent): void {
  switch (e.type) {
    case "accepted": {
      const n = numericMsgId(e.message.msgId);
      if (n !== undefined) g.unsettled.add(n);
      break;
    }
    case "dispatch-start": {
      const ids: number[] = [];
      for (const m of e.batch.messages) {
        const n = numericMsgId(m.msgId);
        if (n !== undefined) ids.push(n);
      }
      g.inFlight.set(e.batch.dispatchId, ids);
      break;
    }
    case "dispatch-end": {
      const ids = g.inFlight.get(e.dispatchId);
      g.inFlight.delete(e.dispatchId);
      // A failed attempt that will be retried stays unsettled; a dropped one is reported as drops.
      // A dispatch cut off by close (model call or send delay aborted) said nothing: like a held
      // message, it stays unsettled so the next run answers it instead of losing it.
      if (e.ok && ids && !(e.outcome.kind === "skipped" && e.outcome.reason === "group-closed")) {
        // Messages the dispatch handed back (see SentOutcome.notHandled) are held again: still unsettled.
        const back = e.outcome.kind === "sent" ? e.outcome.notHandled : undefined;
        for (const n of ids) if (back === undefined || !back.includes(String(n))) g.unsettled.delete(n);
      }
      break;
    }
    case "dropped": {
      // Refused on arrival (a duplicate, our own echo): never accepted, and a duplicate's id may
      // belong to an accepted original that is still unsettled.
      if (e.stage === "arrival") break;
      // Closing drops what is still held; those stay unsettled so the next run pulls them again.
      if (e.reason === "group-closed") break;
      const n = numericMsgId(e.msgId);
      if (n !== undefined) g.unsettled.delete(n);
      break;
    }
    default:
      break;
  }
}

/**
 * The cursor to persist: everything at or below it has been dispatched or dropped for good. A
 * message still buffered, pending or in flight keeps the cursor just before it, so a restart
 * pulls it again instead of losing it; anything dispatched has a lower id, so nothing repeats.
 */
export function settledCursor(g: CursorTrack & { client: { readonly cursor: number } }): number {
  let cursor = Math.max(g.restoredCursor, g.client.cursor);
  for (const n of g.unsettled) if (n - 1 < cursor) cursor = n - 1;
  return Math.max(cursor, 0);
}
