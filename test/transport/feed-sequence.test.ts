// The feed's id arithmetic alone, without a feed, a timer or a socket.
import { describe, expect, it } from "vitest";
import { claimedUpTo, continuesFrom, highestId, isRefusal, oversizeSkipId } from "../../src/transport/feed-sequence.ts";
import { TransportError } from "../../src/transport/errors.ts";
import type { GroupMessage } from "../../src/types.ts";

const m = (id: number): GroupMessage => ({ msgId: String(id), groupId: "g", sender: "a", content: "x", contentType: "text", timestamp: id, metadata: null });

describe("feed sequence", () => {
  it("highestId: the largest id, never below the floor", () => {
    expect(highestId([m(3), m(9), m(5)], 0)).toBe(9);
    expect(highestId([m(3)], 7)).toBe(7);
    expect(highestId([], 4)).toBe(4);
  });

  it("claimedUpTo: a batch's latest id or start + count − 1, whichever is higher", () => {
    expect(claimedUpTo(undefined)).toBe(0);
    expect(claimedUpTo({ startMsgId: 10, count: 3, latestMsgId: undefined })).toBe(12);
    expect(claimedUpTo({ startMsgId: 10, count: 3, latestMsgId: 20 })).toBe(20);
    expect(claimedUpTo({ startMsgId: 10, count: 0, latestMsgId: undefined })).toBe(0);
  });

  it("continuesFrom: consecutive ids, or just increasing ones in a sparse group", () => {
    expect(continuesFrom([m(6), m(7)], 5, false)).toBe(true);
    expect(continuesFrom([m(7), m(8)], 5, false)).toBe(false);
    expect(continuesFrom([m(7), m(9)], 5, true)).toBe(true);
  });

  it("oversizeSkipId: the smallest named id above the cursor, else the next id", () => {
    const err = new TransportError("RESPONSE_TOO_LARGE", "too large", { msgIds: [3, 12, 11, 40] });
    expect(oversizeSkipId(10, err)).toBe(11);
    expect(oversizeSkipId(50, err)).toBe(51);
    expect(oversizeSkipId(5, new Error("no context"))).toBe(6);
  });

  it("isRefusal: not found, dissolved, suspended, not a member, banned", () => {
    for (const code of [1001, 1003, 1004, 1006, 1007]) expect(isRefusal(new TransportError("REQUEST_FAILED", "x", { resultCode: code }))).toBe(true);
    for (const code of [1002, 1009, 1010]) expect(isRefusal(new TransportError("REQUEST_FAILED", "x", { resultCode: code }))).toBe(false);
    expect(isRefusal(new Error("timeout"))).toBe(false);
  });
});
