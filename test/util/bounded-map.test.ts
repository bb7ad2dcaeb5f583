// The one bounded table: writing makes a key the newest, past `max` the oldest written goes,
// reads never reorder. A fast-check model (an array in write order) holds it for any sequence.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BoundedMap, BoundedSet } from "../../src/util/bounded-map.ts";

describe("BoundedMap", () => {
  it("keeps the newest `max` written; a rewrite makes a key newest, a read does not", () => {
    const m = new BoundedMap<string, number>(3);
    m.set("a", 1).set("b", 2).set("c", 3);
    expect(m.get("a")).toBe(1); // read: a stays oldest
    m.set("d", 4);
    expect([...m.keys()]).toEqual(["b", "c", "d"]);
    m.set("b", 20); // rewrite: b becomes newest
    m.set("e", 5);
    expect([...m]).toEqual([["d", 4], ["b", 20], ["e", 5]]);
    expect(m.has("c")).toBe(false);
    expect(m.size).toBe(3);
    expect(m.delete("b")).toBe(true);
    expect([...m.values()]).toEqual([4, 5]);
    m.clear();
    expect(m.size).toBe(0);
  });

  it("refuses a max that is not a positive integer", () => {
    expect(() => new BoundedMap(0)).toThrow("Expected `max` to be a positive integer, got `0`");
    expect(() => new BoundedSet(1.5)).toThrow(TypeError);
  });

  it("matches a write-ordered model for any sequence of writes, reads and deletes", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), key: fc.integer({ min: 0, max: 12 }), value: fc.integer() }),
      fc.record({ kind: fc.constant("get" as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant("delete" as const), key: fc.integer({ min: 0, max: 12 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 80 }), (max, ops) => {
        const m = new BoundedMap<number, number>(max);
        let model: Array<[number, number]> = [];
        for (const o of ops) {
          if (o.kind === "set") {
            m.set(o.key, o.value);
            model = [...model.filter(([k]) => k !== o.key), [o.key, o.value] as [number, number]].slice(-max);
          } else if (o.kind === "get") {
            expect(m.get(o.key)).toBe(model.find(([k]) => k === o.key)?.[1]);
          } else {
            expect(m.delete(o.key)).toBe(model.some(([k]) => k === o.key));
            model = model.filter(([k]) => k !== o.key);
          }
          expect([...m]).toEqual(model);
        }
      }),
    );
  });
});

describe("BoundedSet", () => {
  it("keeps the newest `max` added; re-adding makes a value newest", () => {
    const s = new BoundedSet<number>(2);
    s.add(1).add(2).add(1).add(3);
    expect([...s]).toEqual([1, 3]);
    expect(s.has(2)).toBe(false);
    expect(s.size).toBe(2);
    expect(s.delete(1)).toBe(true);
    expect([...s.values()]).toEqual([3]);
  });
});
