import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { LATENCY_SAMPLES, MIN_LATENCY_SAMPLES, RoomTalk } from "../../src/group/exchanges.ts";
import { mayBeOrphaned, orphanGraceMs } from "../../src/group/orphans.ts";

const ORPHANS = DEFAULT_GROUP_SETTINGS.orphans;

describe("RoomTalk: who is in an exchange", () => {
  it("`bob: …` and `@bob …` put both in an exchange even before bob spoke; `bob, …` and a bare `bob …` only once bob has spoken", () => {
    const t = new RoomTalk();
    t.observe("sam", "dan: did you try the mirror?", 1000, true);
    expect([t.inExchangeSince("sam", 0), t.inExchangeSince("dan", 0)]).toEqual([true, true]);
    t.observe("eve", "@kim have a look", 2000, true);
    expect(t.inExchangeSince("kim", 2000)).toBe(true);
    t.observe("lee", "guys, is the wiki down?", 3000, true);
    t.observe("max", "well who knows?", 3000, true);
    expect([t.inExchangeSince("lee", 0), t.inExchangeSince("max", 0), t.inExchangeSince("guys", 0), t.inExchangeSince("well", 0)]).toEqual([false, false, false, false]);
    t.observe("well", "hi all", 4000, true);
    t.observe("max", "well, that is odd", 5000, true);
    expect(t.inExchangeSince("max", 5000)).toBe(true);
  });

  it("an exchange is dated: inExchangeSince reads the latest, nick variants (`jacob` for `jacob_`) are the same speaker", () => {
    const t = new RoomTalk();
    t.observe("jacob_", "hello", 0, true);
    t.observe("ann", "jacob: reboot it", 10_000, true);
    expect(t.inExchangeSince("jacob_", 10_000)).toBe(true);
    expect(t.inExchangeSince("jacob_", 10_001)).toBe(false);
    expect(t.addressesSomeone("ann", "jacob, still there?")).toBe(true);
    expect(t.addressesSomeone("jacob_", "jacob: note to self?")).toBe(false);
  });

  it("the answer latency is the median of people's replies by name after the addressee's line, once 8 are seen; agents' replies do not count", () => {
    const t = new RoomTalk();
    for (let i = 0; i < MIN_LATENCY_SAMPLES; i++) {
      t.observe(`p${i}`, "build is green", i * 100_000, true);
      t.observe("bot", `p${i}: noted`, i * 100_000 + 1000, false);
      expect(t.answerLatencyMs()).toBeUndefined();
      t.observe(`h${i}`, `p${i}: nice`, i * 100_000 + (i + 1) * 10_000, true);
    }
    // 10 s … 80 s: median of eight is (40 + 50) / 2.
    expect(t.answerLatencyMs()).toBe(45_000);
  });

  it("its latency is the median of the latest 64 replies, whatever the mix of speakers and gaps", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 120_000 })), { minLength: 1, maxLength: 400 }), (steps) => {
        const t = new RoomTalk();
        let ts = 0;
        const lat: number[] = [];
        for (const [a, b, gap] of steps) {
          t.observe(`u${a}`, "hi", ts, true);
          ts += gap;
          t.observe(`v${b}`, `u${a}: hello`, ts, true);
          lat.push(gap);
          ts += 1;
        }
        const kept = lat.slice(-LATENCY_SAMPLES).sort((x, y) => x - y);
        const n = kept.length;
        const median = n < MIN_LATENCY_SAMPLES ? undefined : n % 2 ? kept[(n - 1) / 2] : (kept[n / 2 - 1]! + kept[n / 2]!) / 2;
        expect(t.answerLatencyMs()).toBe(median);
      }),
    );
  });
});

describe("mayBeOrphaned and the grace", () => {
  const q = (sender: string, content: string, timestamp: number) => ({ sender, content, timestamp, isMention: false, passive: undefined });

  it("a question to the room from someone in no exchange; not one opening with an address, not a follow-up inside an exchange (within freshMs before), not a mention", () => {
    const t = new RoomTalk();
    t.observe("dan", "sam: try another mirror", 0, true);
    expect(mayBeOrphaned(q("sam", "how do I change it?", 60_000), t, ORPHANS)).toBe(false);
    expect(mayBeOrphaned(q("sam", "how do I change it?", ORPHANS.freshMs + 1), t, ORPHANS)).toBe(true);
    expect(mayBeOrphaned(q("ann", "dan: which mirror?", 60_000), t, ORPHANS)).toBe(false);
    expect(mayBeOrphaned(q("ann", "which mirror is fastest?", 60_000), t, ORPHANS)).toBe(true);
    expect(mayBeOrphaned(q("ann", "which mirror is fastest.", 60_000), t, ORPHANS)).toBe(false);
    expect(mayBeOrphaned({ ...q("ann", "which mirror is fastest?", 60_000), isMention: true }, t, ORPHANS)).toBe(false);
  });

  it("grace: graceMs until the pace is known; then 1.5 × the latency within [graceMs/2, min(2 × graceMs, freshMs − spreadMs − 20 s)]", () => {
    expect(orphanGraceMs(ORPHANS, undefined)).toBe(60_000);
    expect(orphanGraceMs(ORPHANS, 10_000)).toBe(30_000);
    expect(orphanGraceMs(ORPHANS, 30_000)).toBe(45_000);
    expect(orphanGraceMs(ORPHANS, 60_000)).toBe(90_000);
    expect(orphanGraceMs(ORPHANS, 500_000)).toBe(120_000);
    expect(orphanGraceMs({ ...ORPHANS, freshMs: 100_000 }, 500_000)).toBe(50_000);
    expect(orphanGraceMs({ ...ORPHANS, adaptiveGrace: false }, 10_000)).toBe(60_000);
  });
});

describe("RoomTalk: the member list", () => {
  it("`alice, …` addresses a listed member who has not spoken (an agent of the room), not a word that is nobody's name", () => {
    const t = new RoomTalk(() => new Set(["alice"]));
    expect(t.addressesSomeone("sam", "Alice, can you hear me?")).toBe(true);
    expect(t.addressesSomeone("sam", "guys, can you hear me?")).toBe(false);
  });
});
