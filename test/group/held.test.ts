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
    h.add(m(3));
    h.batchArrived();
    h.requeue([m(1), m(2)], 2);
    h.add(m(4, true));
    h.batchArrived();
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
    h.requeue([m(1), m(2)], 1);
    for (const id of [3, 4, 5]) h.add(m(id));
    expect(h.length).toBe(5);
    expect(h.dropOverCapacity(5)).toEqual([]);
    expect(h.dropOverCapacity(2).map((x) => x.id)).toEqual([1, 2, 3]);
    expect(h.length).toBe(2);
    expect(h.takeAll().messages.map((x) => x.id)).toEqual([4, 5]);
    expect(h.length).toBe(0);
  });

  it("keeps its count equal to what the queues hold through every change", () => {
    const h = new HeldMessages<{ id: number; isMention: boolean }>();
    const held = () => h.incoming.length + h.pending.length;
    for (let i = 0; i < 10; i++) h.add(m(i, i === 7));
    h.flush();
    for (let i = 10; i < 14; i++) h.add(m(i));
    expect([h.length, held()]).toEqual([14, 14]);
    expect(h.removeWhere((x) => x.id % 2 === 0).map((x) => x.id)).toEqual([0, 2, 4, 6, 8, 10, 12]);
    expect([h.length, held()]).toEqual([7, 7]);
    h.dropOverCapacity(5);
    expect([h.length, held()]).toEqual([5, 5]);
    expect(h.snapshot().map((x) => x.id)).toEqual([5, 7, 9, 11, 13]);
    expect(h.holdsMention()).toBe(true);
    const { messages } = h.takeAll();
    h.requeue(messages, 1);
    expect([h.length, held()]).toEqual([5, 5]);
  });
});
