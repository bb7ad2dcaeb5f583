// A pull page that cannot come through shrinks; one message that cannot come through alone is
// skipped as a counted `oversize` drop; whenLive (what `ready` waits for) resolves only once the
// group is fed. Literal timelines of the page sizes asked for.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { GroupMessage } from "../../src/types.ts";
import { GroupFeed, type GroupFeedCounters } from "../../src/transport/group-feed.ts";
import { TransportError } from "../../src/transport/errors.ts";
import type { PullPage } from "../../src/wire/responses.ts";
import { createMemoryLogger } from "../../src/log.ts";

const m = (id: number): GroupMessage => ({ msgId: String(id), groupId: "g1", sender: "bob", content: `m${id}`, contentType: "text", timestamp: id, metadata: null });

function setup(p: { history: number[]; fail: (after: number, page: number[], limit: number) => TransportError | undefined }) {
  const fed: number[] = [];
  const asked: Array<[number, number]> = [];
  const acks: number[] = [];
  const counters: GroupFeedCounters = { handlerErrors: 0, pullFailures: 0, messagesFed: 0, heldOverflows: 0, gapResyncs: 0, pageShrinks: 0, droppedOversize: 0 };
  const logger = createMemoryLogger();
  const feed = new GroupFeed({
    groupId: "g1",
    onMessages: (_g, ms) => void fed.push(...ms.map((x) => Number(x.msgId))),
    pull: async (after, limit) => {
      asked.push([after, limit]);
      const rest = p.history.filter((id) => id > after);
      const page = rest.slice(0, limit);
      const err = p.fail(after, page, limit);
      if (err) throw err;
      return { messages: page.map(m), hasMore: rest.length > page.length, latestMsgId: p.history.at(-1), invalid: [] } satisfies PullPage;
    },
    ack: (id) => acks.push(id),
    retryDelay: () => 1000,
    counters,
    logger,
    pageSize: 8,
    maxHeld: 100,
  });
  return { feed, fed, asked, acks, counters, logger };
}

const tooLarge = (ids: number[]) => new TransportError("RESPONSE_TOO_LARGE", "too large", { action: "pull_messages", msgIds: ids, bytes: 3_000_000 });

describe("GroupFeed page shrinking and oversize skips", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }));
  afterEach(() => vi.useRealTimers());

  it("halves a page that comes back too large down to one message, skips the one too large alone with its id, grows back after", async () => {
    // msg 4 can never come through; any page holding it is too large.
    const t = setup({ history: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], fail: (_a, page) => (page.includes(4) ? tooLarge(page) : undefined) });
    await t.feed.connect(0);
    await t.feed.whenLive();
    expect(t.asked).toEqual([
      [0, 8], [0, 4], [0, 2], // shrinks until 1..2 come through
      [2, 4], [2, 2], [2, 1], // 3 alone, at 1
      [3, 2], [3, 1], // 4 alone still too large: skipped
      [4, 1], [5, 2], [7, 4], // grows back
    ]);
    expect(t.fed).toEqual([1, 2, 3, 5, 6, 7, 8, 9, 10]);
    expect([t.counters.droppedOversize, t.counters.pullFailures]).toEqual([1, 0]);
    expect(t.logger.entries.filter((e) => e.event === "transport.message-dropped").map((e) => e.fields)).toEqual([
      { groupId: "g1", reason: "oversize", msgId: "4", bytes: 3_000_000 },
    ]);
    expect(t.acks).toContain(4);
    expect(t.feed.lastFed).toBe(10);
  });

  it("a forged id in the frame never skips past the message itself: the smallest id above the cursor wins", async () => {
    const t = setup({ history: [1, 2, 3], fail: (_a, page) => (page.includes(2) ? tooLarge([9, ...page.map(Number), 3]) : undefined) });
    await t.feed.connect(1);
    await t.feed.whenLive();
    expect(t.fed).toEqual([3]);
    expect(t.logger.entries.find((e) => e.event === "transport.message-dropped")?.fields.msgId).toBe("2");
  });

  it("a timeout halves the page too; at one message a timeout is an ordinary failure, retried later, and whenLive waits for it", async () => {
    let slow = true;
    const t = setup({
      history: [1, 2, 3],
      fail: (_a, _p, limit) => (slow && limit >= 1 ? new TransportError("REQUEST_TIMEOUT", "no answer", { action: "pull_messages" }) : undefined),
    });
    let live = false;
    void t.feed.connect(0);
    void t.feed.whenLive().then(() => (live = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(t.asked).toEqual([[0, 8], [0, 4], [0, 2], [0, 1]]);
    expect([t.counters.pageShrinks, t.counters.pullFailures, t.counters.droppedOversize]).toEqual([3, 1, 0]);
    expect(live).toBe(false);
    slow = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.fed).toEqual([1, 2, 3]);
    expect(live).toBe(true);
  });
});
