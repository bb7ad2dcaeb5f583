import { describe, expect, it } from "vitest";
import { HeldMessages, HeldQueue } from "../../src/group/held.ts";

const m = (id: number, isMention = false) => ({ id, isMention });

describe("HeldQueue", () => {
  it("drops from the front in order and keeps the rest", () => {
    const q = new HeldQueue<number>();
    for (let i = 1; i <= 600; i++) q.push(i);
    expect(q.dropFront(3)).toEqual([1, 2, 3]);
    expect(q.dropFront(300)).toHaveLength(300);
    expect(q.length).toBe(297);
    expect(q.takeAll()).toEqual(Array.from({ length: 297 }, (_, i) => i + 304));
    expect(q.length).toBe(0);
    expect(q.dropFront(5)).toEqual([]);
  });
});

describe("HeldMessages", () => {
  it("takes pending (re-queued first) then incoming, and counts merged batches", () => {
    const h = new HeldMessages<{ id: number; isMention: boolean }>();
    h.incoming.push(m(3));
    h.batches++;
    h.requeue([m(1), m(2)], 2);
    h.incoming.push(m(4, true));
    h.batches++;
    expect(h.length).toBe(4);
    expect(h.holdsMention()).toBe(true);
    const { messages, batchesMerged } = h.takeAll();
    expect(messages.map((x) => x.id)).toEqual([1, 2, 3, 4]);
    expect(batchesMerged).toBe(4);
    expect(h.length).toBe(0);
    expect(h.takeAll().batchesMerged).toBe(1);
  });

  it("drops the oldest over capacity: pending before incoming", () => {
    const h = new HeldMessages<{ id: number; isMention: boolean }>();
    h.pending.push(m(1));
    h.pending.push(m(2));
    for (const id of [3, 4, 5]) h.incoming.push(m(id));
    expect(h.dropOverCapacity(5)).toEqual([]);
    expect(h.dropOverCapacity(2).map((x) => x.id)).toEqual([1, 2, 3]);
    expect(h.takeAll().messages.map((x) => x.id)).toEqual([4, 5]);
  });
});
