import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  appendOwnTime,
  appendVitalityEvent,
  classifyVitality,
  computeVitality,
  createVitalityWindow,
  windowEvents,
  pruneVitalityWindow,
  vitalityWindowSize,
} from "../../src/group/vitality.ts";

const NOW = 1_700_000_000_000;
const FIVE_MIN = 300_000;

function windowWith(events: Array<[number, string]>) {
  const w = createVitalityWindow({ windowMs: FIVE_MIN, maxEvents: 200 });
  for (const [ts, sender] of events) appendVitalityEvent(w, ts, sender);
  return w;
}

describe("classifyVitality (seed §3.3)", () => {
  it.each([
    [0, 0, "DORMANT"],
    [1, 1, "COOLING"],
    [5, 2, "COOLING"],
    [5, 3, "ACTIVE"],
    [2, 3, "ACTIVE"],
    [6, 1, "ACTIVE"],
    [6, 2, "ACTIVE"],
    [15, 9, "ACTIVE"],
    [16, 1, "HEATED"],
    [200, 40, "HEATED"],
  ] as const)("%i messages, %i speakers → %s", (messages, speakers, state) => {
    expect(classifyVitality(messages, speakers)).toBe(state);
  });
});

describe("computeVitality", () => {
  it("0 / 1 / 5+2 / 6 / 15 / 16 messages in the window", () => {
    const sendersOf = (n: number, speakers: number) =>
      Array.from({ length: n }, (_, i) => [NOW - 1000 * (n - i), `s${i % speakers}`] as [number, string]);
    expect(computeVitality(windowWith([]), NOW, []).state).toBe("DORMANT");
    expect(computeVitality(windowWith(sendersOf(1, 1)), NOW, []).state).toBe("COOLING");
    expect(computeVitality(windowWith(sendersOf(5, 2)), NOW, [])).toEqual({
      state: "COOLING",
      messagesIn5m: 5,
      uniqueSpeakersIn5m: 2,
      myMessagesIn5m: 0,
      updatedAt: NOW,
    });
    expect(computeVitality(windowWith(sendersOf(5, 3)), NOW, []).state).toBe("ACTIVE");
    expect(computeVitality(windowWith(sendersOf(6, 2)), NOW, []).state).toBe("ACTIVE");
    expect(computeVitality(windowWith(sendersOf(15, 4)), NOW, []).state).toBe("ACTIVE");
    expect(computeVitality(windowWith(sendersOf(16, 4)), NOW, []).state).toBe("HEATED");
  });

  it("keeps an event stamped exactly now - 5 min and drops one a millisecond older", () => {
    const w = windowWith([
      [NOW - 300_001, "old"],
      [NOW - 300_000, "edge"],
      [NOW - 10, "new"],
    ]);
    expect(computeVitality(w, NOW, [])).toMatchObject({ messagesIn5m: 2, uniqueSpeakersIn5m: 2 });
    // computeVitality does not mutate; prune does.
    expect(vitalityWindowSize(w)).toBe(3);
    pruneVitalityWindow(w, NOW);
    expect(vitalityWindowSize(w)).toBe(2);
    pruneVitalityWindow(w, NOW + 300_000);
    expect(vitalityWindowSize(w)).toBe(0);
    expect(w.ev).toEqual([]);
  });

  it("counts our own messages in the same window", () => {
    const mine = [NOW - 400_000, NOW - 299_000, NOW - 5_000];
    expect(computeVitality(windowWith([[NOW - 1, "bob"]]), NOW, mine).myMessagesIn5m).toBe(2);
  });

  it("keeps events ordered when a late pull delivers older messages", () => {
    const w = windowWith([
      [NOW - 100, "a"],
      [NOW - 300, "b"],
      [NOW - 200, "c"],
      [NOW - 300, "d"],
    ]);
    expect(windowEvents(w)).toEqual({ ts: [NOW - 300, NOW - 300, NOW - 200, NOW - 100], senders: ["b", "d", "c", "a"] });
  });

  it("keeps at most maxEvents (the newest)", () => {
    const w = createVitalityWindow({ windowMs: FIVE_MIN, maxEvents: 200 });
    for (let i = 0; i < 1000; i++) appendVitalityEvent(w, NOW - 1000 + i, `s${i}`);
    expect(vitalityWindowSize(w)).toBe(200);
    expect(w.ev.length).toBeLessThanOrEqual(2 * 400);
    expect(windowEvents(w).ts[0]).toBe(NOW - 1000 + 800);
    expect(computeVitality(w, NOW, [])).toMatchObject({ state: "HEATED", messagesIn5m: 200, uniqueSpeakersIn5m: 200 });
  });
});

describe("appendOwnTime", () => {
  it("prunes by the window and caps the list", () => {
    const times: number[] = [];
    appendOwnTime(times, NOW - 400_000, NOW, FIVE_MIN, 3);
    expect(times).toEqual([]);
    for (let i = 0; i < 5; i++) appendOwnTime(times, NOW - 10 + i, NOW, FIVE_MIN, 3);
    expect(times).toEqual([NOW - 8, NOW - 7, NOW - 6]);
  });
});

describe("vitality window against a plain list (property)", () => {
  it("holds exactly the newest maxEvents in order through late arrivals, prunes and weeks-long gaps (offset rebases)", () => {
    type Op = { kind: "add"; dt: number; late: number; sender: string } | { kind: "prune"; dt: number };
    const DAY = 86_400_000;
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant("add" as const), dt: fc.oneof(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 20 * DAY })), late: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 600_000 })), sender: fc.constantFrom("a", "b", "c", "d") }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("prune" as const), dt: fc.integer({ min: 0, max: 400_000 }) }) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), fc.integer({ min: 1, max: 50 }), (ops, maxEvents) => {
        const w = createVitalityWindow({ windowMs: FIVE_MIN, maxEvents });
        let model: Array<{ ts: number; sender: string }> = [];
        let now = NOW;
        for (const o of ops) {
          now += o.dt;
          if (o.kind === "add") {
            const ts = now - o.late;
            appendVitalityEvent(w, ts, o.sender);
            // Insert after every event with ts <= the new one (stable), keep the newest maxEvents.
            let at = model.length;
            while (at > 0 && model[at - 1]!.ts > ts) at--;
            model.splice(at, 0, { ts, sender: o.sender });
            if (model.length > maxEvents) model = model.slice(model.length - maxEvents);
          } else {
            pruneVitalityWindow(w, now);
            model = model.filter((e) => e.ts >= now - FIVE_MIN);
          }
          expect(windowEvents(w)).toEqual({ ts: model.map((e) => e.ts), senders: model.map((e) => e.sender) });
          const live = model.filter((e) => e.ts >= now - FIVE_MIN);
          expect(computeVitality(w, now, [])).toMatchObject({ messagesIn5m: live.length, uniqueSpeakersIn5m: new Set(live.map((e) => e.sender)).size });
        }
      }),
      { numRuns: 300 },
    );
  });
});
