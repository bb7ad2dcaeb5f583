import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RecentSenders, SEEN_OTHER_CAPACITY, SeenIds } from "../../src/group/seen-ids.ts";
import { numericMsgId } from "../../src/wire/msg-id.ts";

const seen = () => {
  const s = new SeenIds();
  return (id: string) => s.checkAndAdd(id, numericMsgId(id));
};

describe("SeenIds", () => {
  it("flags repeats of numeric ids, including late arrivals inside gaps", () => {
    const dup = seen();
    expect(["1", "3", "2", "2", "3", "4", "1"].map(dup)).toEqual([false, false, false, true, true, false, true]);
  });

  it("accepts a backlog far below the newest id once, then remembers it", () => {
    const dup = seen();
    expect(dup("5000")).toBe(false);
    expect(["100", "101", "199"].map(dup)).toEqual([false, false, false]);
    expect(["100", "199", "5000"].map(dup)).toEqual([true, true, true]);
  });

  it("forgets ids that fell more than 1024 below the newest (the transport's cursor covers those)", () => {
    const dup = seen();
    expect(["1", "2", "3", "1026"].map(dup)).toEqual([false, false, false, false]);
    expect(dup("2")).toBe(false); // out of the window: forgotten, accepted once more
    expect(dup("2")).toBe(true);
    expect(dup("3")).toBe(true); // still inside (1026 − 1024 < 3)
  });

  it("bounds non-numeric ids to the last 512", () => {
    const dup = seen();
    for (let i = 0; i < 513; i++) expect(dup(`id-${i}`)).toBe(false);
    expect(dup("id-512")).toBe(true);
    expect(dup("id-0")).toBe(false);
  });

  it("never calls a new id a duplicate, and always catches a repeat of one of the last 8 arrivals near the top", () => {
    const ids = fc.array(fc.oneof(fc.integer({ min: 0, max: 3000 }).map(String), fc.constantFrom("a", "b", "007")), { maxLength: 300 });
    fc.assert(
      fc.property(ids, (list) => {
        const dup = seen();
        const everSeen = new Set<string>();
        const recent: string[] = [];
        let top = -1;
        for (const id of list) {
          const flagged = dup(id);
          if (flagged) expect(everSeen.has(id)).toBe(true);
          const n = numericMsgId(id);
          if (recent.includes(id) && (n === undefined || n > top - 1024)) expect(flagged).toBe(true);
          everSeen.add(id);
          recent.push(id);
          if (recent.length > 8) recent.shift();
          if (n !== undefined && n > top) top = n;
        }
      }),
    );
  });
});

describe("SeenIds against a plain model", () => {
  it("answers exactly as a set of the window's ids plus a ring of the last 512 older ones, for runs, gaps, repeats and late arrivals", () => {
    // Ids move like real traffic: mostly the next one, sometimes a gap, a repeat, a late one inside the
    // window, or one far below it; now and then a non-numeric id.
    const step = fc.oneof(
      { weight: 10, arbitrary: fc.constant({ kind: "next" as const, d: 1 }) },
      { weight: 2, arbitrary: fc.integer({ min: 2, max: 1500 }).map((d) => ({ kind: "gap" as const, d })) },
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 1100 }).map((d) => ({ kind: "back" as const, d })) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 20 }).map((d) => ({ kind: "text" as const, d })) },
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 600 }), (steps) => {
        const s = new SeenIds();
        let top = -1;
        const windowSeen = new Set<number>();
        const ring: Array<string | number> = [];
        const ringSet = new Set<string | number>();
        const ringPath = (key: string | number): boolean => {
          if (ringSet.has(key)) return true;
          ring.push(key);
          ringSet.add(key);
          if (ring.length > SEEN_OTHER_CAPACITY) ringSet.delete(ring.shift()!);
          return false;
        };
        for (const st of steps) {
          const id = st.kind === "text" ? `t${st.d}` : st.kind === "back" ? Math.max(0, top - st.d) : top < 0 ? st.d : top + st.d;
          let expected: boolean;
          if (typeof id === "string") expected = ringPath(id);
          else if (id > top) {
            expected = false;
            windowSeen.add(id);
            top = id;
          } else if (id <= top - 1024) expected = ringPath(id);
          else {
            expected = windowSeen.has(id);
            windowSeen.add(id);
          }
          expect(s.checkAndAdd(String(id), typeof id === "number" ? id : undefined)).toBe(expected);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe("RecentSenders", () => {
  it("resolves the sender of one of the last 64 messages", () => {
    const r = new RecentSenders();
    for (let i = 0; i < 70; i++) r.add(String(i), `s${i}`);
    expect(r.senderOf("69")).toBe("s69");
    expect(r.senderOf("6")).toBe("s6");
    expect(r.senderOf("5")).toBeUndefined();
  });

  it("answers the newest sender of an id seen twice, before and after the ring wraps", () => {
    const r = new RecentSenders();
    expect(r.senderOf("1")).toBeUndefined();
    r.add("1", "old");
    r.add("2", "x");
    r.add("1", "new");
    expect(r.senderOf("1")).toBe("new");
    expect(r.senderOf("2")).toBe("x");
    for (let i = 0; i < 61; i++) r.add(`f${i}`, "filler"); // 64 entries: full
    r.add("1", "newest"); // overwrites the oldest slot ("1" → "old")
    expect(r.senderOf("1")).toBe("newest");
    expect(r.senderOf("2")).toBe("x");
  });
});
