// The saved cursor never passes a message that is not settled: accepted, in flight, handed back
// by a dispatch that delivered an earlier reply, then settled by the dispatch that answers it.
import { describe, expect, it } from "vitest";
import { settledCursor, trackCursor, type CursorTrack } from "../../src/runtime/cursor.ts";
import type { DispatchBatch, InboundMessage } from "../../src/types.ts";

const msg = (id: string) => ({ msgId: id }) as InboundMessage;
const batch = (dispatchId: number, ids: string[]) => ({ dispatchId, messages: ids.map(msg) }) as unknown as DispatchBatch;

describe("trackCursor / settledCursor", () => {
  it("accepted 5, 6 → cursor 4; a dispatch of both that hands 6 back → 5; its own dispatch → 6", () => {
    const g: CursorTrack & { client: { cursor: number } } = { restoredCursor: 4, unsettled: new Set(), inFlight: new Map(), client: { cursor: 6 } };
    trackCursor(g, { type: "accepted", message: msg("5"), batchSeq: 1, atLocal: 0 });
    trackCursor(g, { type: "accepted", message: msg("6"), batchSeq: 2, atLocal: 0 });
    expect(settledCursor(g)).toBe(4);
    trackCursor(g, { type: "dispatch-start", batch: batch(1, ["5", "6"]), atLocal: 0 });
    trackCursor(g, { type: "dispatch-end", dispatchId: 1, atLocal: 0, ok: true, outcome: { kind: "sent", text: "hi", replyType: "short", notHandled: ["6"] } });
    expect(settledCursor(g)).toBe(5);
    trackCursor(g, { type: "dispatch-start", batch: batch(2, ["6"]), atLocal: 0 });
    trackCursor(g, { type: "dispatch-end", dispatchId: 2, atLocal: 0, ok: true, outcome: { kind: "sent", text: "hi", replyType: "short" } });
    expect(settledCursor(g)).toBe(6);
  });
});
