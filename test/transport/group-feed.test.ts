import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import type { GroupMessage } from "../../src/types.ts";
import { freshMessages } from "../../src/transport/feed-sequence.ts";
import { GroupFeed, type GroupFeedCounters } from "../../src/transport/group-feed.ts";
import type { PullPage } from "../../src/wire/responses.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { waitFor } from "./helpers.ts";

const m = (id: number): GroupMessage => ({
  msgId: String(id),
  groupId: "g1",
  sender: "bob.agentcp.io",
  content: `m${id}`,
  contentType: "text",
  timestamp: 1000 + id,
  metadata: null,
});
const ids = (list: readonly GroupMessage[]) => list.map((x) => Number(x.msgId));
const counters = (): GroupFeedCounters => ({ handlerErrors: 0, pullFailures: 0, messagesFed: 0, heldOverflows: 0, gapResyncs: 0, pageShrinks: 0, droppedOversize: 0 });
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

/** A feed against an in-memory server whose pull answers are released by the test. */
function setup(opts: { history?: number[]; pageSize?: number; retryDelay?: (attempt: number) => number } = {}) {
  const history = [...(opts.history ?? [])];
  const fed: number[][] = [];
  const acks: number[] = [];
  const pulls: number[] = [];
  const gates: Array<() => void> = [];
  let failNext = 0;
  let manual = false;
  const c = counters();
  const logger = createMemoryLogger();
  const feed = new GroupFeed({
    groupId: "g1",
    onMessages: (_g, messages) => {
      if (failNext > 0) {
        failNext--;
        throw new Error("handler exploded");
      }
      fed.push(ids(messages));
    },
    pull: async (after, limit) => {
      pulls.push(after);
      // The server answers from the history as it is now; the answer may reach us later.
      const rest = history.filter((id) => id > after);
      const page = rest.slice(0, limit);
      if (manual) await new Promise<void>((r) => gates.push(r));
      return { messages: page.map(m), hasMore: rest.length > page.length, latestMsgId: history.at(-1), invalid: [] } satisfies PullPage;
    },
    ack: (id) => acks.push(id),
    retryDelay: opts.retryDelay ?? ((attempt) => [100, 200, 400][attempt] ?? 800),
    counters: c,
    logger,
    pageSize: opts.pageSize ?? 50,
    maxHeld: 100,
  });
  return {
    feed, history, fed, acks, pulls, counters: c, logger,
    failNext: (n: number) => void (failNext = n),
    holdPulls: () => void (manual = true),
    releasePull: () => gates.shift()?.(),
  };
}

describe("GroupFeed", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a live feed hands each push to a handler that returns no promise at once, in the same call; one that returns a promise gets the next batch only after it settles", async () => {
    const t = setup();
    await t.feed.connect(0);
    t.feed.push([m(1)]);
    t.feed.push([m(2), m(3)]);
    // No turn has passed: delivered and acked inside push().
    expect(t.fed).toEqual([[1], [2, 3]]);
    expect(t.acks).toEqual([1, 3]);
    expect(t.feed.lastFed).toBe(3);

    // An async handler: batches wait for the one before them, in wire order.
    const order: string[] = [];
    let release!: () => void;
    const slow = new GroupFeed({
      groupId: "g1",
      onMessages: (_g, messages) => {
        order.push(`start ${ids(messages).join(",")}`);
        if (messages[0]!.msgId !== "1") return;
        return new Promise<void>((r) => (release = () => (order.push("end 1"), r())));
      },
      pull: async () => ({ messages: [], hasMore: false, latestMsgId: 0, invalid: [] }),
      ack: () => {},
      retryDelay: () => 100,
      counters: counters(),
      logger: createMemoryLogger(),
      pageSize: 50,
      maxHeld: 100,
    });
    await slow.connect(0);
    slow.push([m(1)]);
    slow.push([m(2)]);
    expect(order).toEqual(["start 1"]);
    release();
    await turns();
    expect(order).toEqual(["start 1", "end 1", "start 2"]);
    expect(slow.lastFed).toBe(2);
  });

  it("pulls every page after the cursor on connect and acks each accepted page", async () => {
    const t = setup({ history: [1, 2, 3, 4, 5, 6, 7], pageSize: 3 });
    await t.feed.connect(2);
    expect(t.pulls).toEqual([2, 5]);
    expect(t.fed).toEqual([[3, 4, 5], [6, 7]]);
    expect(t.acks).toEqual([5, 7]);
    expect(t.feed.lastFed).toBe(7);
    expect(t.feed.status).toBe("live");
  });

  it("holds pushes that arrive during the pull and feeds them after it, without duplicates", async () => {
    const t = setup({ history: [1, 2, 3] });
    t.holdPulls();
    const synced = t.feed.connect(0);
    await turns();
    // The server stored 4 and 5 after answering the pull; their pushes overtake the page.
    t.history.push(4, 5);
    t.feed.push([m(3), m(4)]);
    t.feed.push([m(5)]);
    expect(t.fed).toEqual([]);
    t.releasePull();
    await synced;
    await turns();
    expect(t.fed).toEqual([[1, 2, 3], [4, 5]]);
    expect(t.acks).toEqual([3, 5]);
  });

  it("never feeds an id at or below lastFed, even when pushed again", async () => {
    const t = setup({ history: [1, 2] });
    await t.feed.connect(0);
    t.feed.push([m(2), m(1), m(3), m(3)]);
    await turns();
    expect(t.fed).toEqual([[1, 2], [3]]);
  });

  it("re-pulls after a handler failure with backoff and drops pushes meanwhile", async () => {
    const t = setup({ history: [1, 2] });
    t.failNext(2);
    await t.feed.connect(0);
    expect(t.fed).toEqual([]);
    expect(t.feed.status).toBe("retrying");
    expect(t.counters.handlerErrors).toBe(1);
    expect(t.acks).toEqual([]);
    t.history.push(3);
    t.feed.push([m(3)]); // dropped: feeding it would skip 1 and 2
    await turns();
    expect(t.fed).toEqual([]);
    // T+99: nothing; T+100: first retry pull (fails again); then +200: second retry succeeds.
    await vi.advanceTimersByTimeAsync(99);
    expect(t.pulls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.pulls).toEqual([0, 0]);
    expect(t.counters.handlerErrors).toBe(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(t.pulls).toEqual([0, 0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.pulls).toEqual([0, 0, 0]);
    expect(t.fed).toEqual([[1, 2, 3]]);
    expect(t.acks).toEqual([3]);
    expect(t.logger.entries.filter((e) => e.event === "transport.handler-failed")).toHaveLength(2);
  });

  it("logs an error, and feeds nothing old, when the server's history is behind the cursor", async () => {
    const t = setup({ history: [1, 2] });
    await t.feed.connect(5);
    expect(t.fed).toEqual([]);
    expect(t.logger.entries.filter((e) => e.event === "transport.cursor-ahead-of-server").map((e) => e.fields)).toEqual([
      { groupId: "g1", cursor: 5, serverLatest: 2 },
    ]);
  });

  it("pulls instead of feeding a push that skips an id", async () => {
    const t = setup({ history: [1] });
    await t.feed.connect(0);
    t.history.push(2, 3);
    t.feed.push([m(3)]); // the push of 2 never came
    await turns();
    expect(t.pulls).toEqual([0, 1]);
    expect(t.fed).toEqual([[1], [2, 3]]);
    expect(t.counters.gapResyncs).toBe(1);
  });

  it("our own stored send fills its id: the next push is no gap, and an echo of it is still fed once", async () => {
    const t = setup({ history: [1] });
    await t.feed.connect(0);
    // #2 is ours (not echoed), #3 someone else's.
    t.history.push(2, 3);
    t.feed.noteOwnSend(2);
    t.feed.push([m(3)]);
    await turns();
    expect(t.pulls).toEqual([0]);
    expect(t.fed).toEqual([[1], [3]]);
    expect(t.counters.gapResyncs).toBe(0);
    // An echoing service: #4 noted, then its push carries it → fed like any message, once.
    t.history.push(4);
    t.feed.noteOwnSend(4);
    t.feed.push([m(4)]);
    t.feed.push([m(4)]);
    await turns();
    expect(t.fed).toEqual([[1], [3], [4]]);
    expect(t.pulls).toEqual([0]);
  });

  it("a batch push whose range claims more than it carries is replaced by a pull", async () => {
    const t = setup({ history: [1] });
    await t.feed.connect(0);
    t.history.push(2, 3, 4);
    // start 2, count 3 → covers 2..4, carries only 2.
    t.feed.push([m(2)], { startMsgId: 2, count: 3, latestMsgId: 4 });
    await turns();
    expect(t.pulls).toEqual([0, 1]);
    expect(t.fed).toEqual([[1], [2, 3, 4]]);
    expect(t.counters.gapResyncs).toBe(1);
    // A complete batch: fed directly.
    t.history.push(5, 6);
    t.feed.push([m(5), m(6)], { startMsgId: 5, count: 2, latestMsgId: 6 });
    await turns();
    expect(t.pulls).toEqual([0, 1]);
    expect(t.fed.at(-1)).toEqual([5, 6]);
  });

  it("pulls when new_message announces an id it has not seen, and only then", async () => {
    const t = setup({ history: [1] });
    await t.feed.connect(0);
    t.feed.notifyLatest(1);
    await turns();
    expect(t.pulls).toEqual([0]);
    t.history.push(2, 3);
    t.feed.notifyLatest(3);
    await turns();
    expect(t.pulls).toEqual([0, 1]);
    expect(t.fed).toEqual([[1], [2, 3]]);
  });

  it("ignores a page that arrives after the connection dropped and resumes from lastFed", async () => {
    const t = setup({ history: [1, 2, 3] });
    t.holdPulls();
    void t.feed.connect(0);
    await turns();
    t.feed.disconnect();
    t.releasePull();
    await turns();
    expect(t.fed).toEqual([]);
    const again = t.feed.connect(0);
    await turns();
    t.releasePull();
    await again;
    expect(t.fed).toEqual([[1, 2, 3]]);
  });

  it("a push with a gap after ids it continues probes that gap, not the ids before it: a later lost message is still pulled", async () => {
    // Found by the exactly-once property (seed 894275278): pushes [1] and [3] held during the first
    // pull were checked as one batch; the probe took 0..1 as the gap, found nothing there and
    // decided the group's ids skip numbers, so a later push past a lost #4 was fed without it.
    const t = setup({ history: [] });
    await t.feed.connect(0);
    t.history.push(1, 2, 3);
    t.feed.push([m(1), m(3)]);
    await turns();
    expect(t.fed.flat()).toEqual([1, 2, 3]);
    t.history.push(4, 5);
    t.feed.push([m(5)]);
    await turns();
    expect(t.fed.flat()).toEqual([1, 2, 3, 4, 5]);
    expect(t.logger.entries.filter((e) => e.event === "transport.sparse-ids")).toEqual([]);
  });

  it("delivers every message exactly once, in order, across random pushes, losses, failures and reconnects (property)", async () => {
    vi.useRealTimers();
    type Op = "post" | "postLost" | "postTwo" | "repush" | "notify" | "disconnect" | "reconnect" | "fail" | "settle";
    const op = fc.constantFrom<Op>("post", "post", "post", "postLost", "postTwo", "repush", "notify", "disconnect", "reconnect", "fail", "settle", "settle");
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), async (ops, pageSize) => {
        const t = setup({ pageSize, retryDelay: () => 0 });
        let connected = true;
        const feeds: number[] = [];
        void t.feed.connect(0);
        for (const o of ops) {
          if (o === "post" || o === "postLost") {
            const id = t.history.length + 1;
            t.history.push(id);
            if (o === "post" && connected) t.feed.push([m(id)]);
          } else if (o === "postTwo") {
            const id = t.history.length + 1;
            t.history.push(id, id + 1);
            if (connected) t.feed.push([m(id), m(id + 1)]);
          } else if (o === "repush" && connected && t.history.length > 0) t.feed.push([m(t.history.length)]);
          else if (o === "notify" && connected) t.feed.notifyLatest(t.history.length);
          else if (o === "disconnect" && connected) {
            t.feed.disconnect();
            connected = false;
          } else if (o === "reconnect") {
            connected = true;
            void t.feed.connect(0);
          } else if (o === "fail") t.failNext(1);
          else if (o === "settle") await turns(3);
        }
        connected = true;
        await t.feed.connect(0);
        await waitFor(() => t.fed.flat().length >= t.history.length, "all messages fed", 2000);
        await turns(5);
        feeds.push(...t.fed.flat());
        t.feed.close();
        for (const batch of t.fed) expect(batch).toEqual([...batch].sort((a, b) => a - b));
        expect(feeds).toEqual(t.history);
      }),
      { numRuns: Number(process.env.FEED_RUNS ?? 150) },
    );
  });
});

describe("freshMessages", () => {
  it("keeps ids above the cursor, once each, in id order", () => {
    expect(ids(freshMessages([m(5), m(3), m(9), m(3), m(2)], 2))).toEqual([3, 5, 9]);
  });

  it("the same messages whether they come in order (taken as they are) or not (sorted): a property over pushes, pages and replays", () => {
    const batch = fc.oneof(
      // In order from somewhere around the cursor: the path almost every push and page takes.
      fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 12 })).map(([from, n]) => Array.from({ length: n }, (_, i) => from + i)),
      fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12 }),
    );
    fc.assert(
      fc.property(batch, fc.integer({ min: 0, max: 40 }), (list, after) => {
        const expected = [...new Set(list.filter((id) => id > after))].sort((a, b) => a - b);
        const input = list.map(m);
        const out = freshMessages(input, after);
        expect(ids(out)).toEqual(expected);
        // A new array: the caller's batch is never handed on to be changed.
        expect(out).not.toBe(input);
      }),
    );
  });
});
