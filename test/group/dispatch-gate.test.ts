import { describe, expect, it } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { bufferDeadline, checkMentionDispatch, checkNormalDispatch, retryDelayMs, scaledCooldownMs, triggerOf } from "../../src/group/dispatch-gate.ts";
import type { InboundMessage } from "../../src/types.ts";

const idle = { now: 100_000, dispatching: false, retryPending: false, mentionWaiting: false, lastDispatchEndedAt: null, cooldownMs: 30_000 };

describe("checkNormalDispatch", () => {
  it("goes when nothing blocks it", () => {
    expect(checkNormalDispatch(idle)).toEqual({ ok: true });
    expect(checkNormalDispatch({ ...idle, lastDispatchEndedAt: 70_000 })).toEqual({ ok: true });
  });

  it("returns the blocking reason, lock first", () => {
    expect(checkNormalDispatch({ ...idle, dispatching: true, retryPending: true })).toEqual({ ok: false, reason: "dispatching" });
    expect(checkNormalDispatch({ ...idle, retryPending: true })).toEqual({ ok: false, reason: "retry-backoff" });
    expect(checkNormalDispatch({ ...idle, mentionWaiting: true })).toEqual({ ok: false, reason: "mention-waiting" });
    expect(checkNormalDispatch({ ...idle, lastDispatchEndedAt: 70_001 })).toEqual({ ok: false, reason: "cooldown", waitMs: 1 });
    expect(checkNormalDispatch({ ...idle, lastDispatchEndedAt: 90_000 })).toEqual({ ok: false, reason: "cooldown", waitMs: 20_000 });
  });
});

describe("checkMentionDispatch", () => {
  const base = { now: 100_000, dispatching: false, lastMentionDispatchAt: null, mentionMinIntervalMs: 0 };
  it("ignores cooldown; waits only for the lock and the spacing", () => {
    expect(checkMentionDispatch(base)).toEqual({ ok: true });
    expect(checkMentionDispatch({ ...base, dispatching: true })).toEqual({ ok: false, reason: "dispatching" });
    expect(checkMentionDispatch({ ...base, lastMentionDispatchAt: 99_000, mentionMinIntervalMs: 5000 })).toEqual({
      ok: false,
      reason: "mention-interval",
      waitMs: 4000,
    });
    expect(checkMentionDispatch({ ...base, lastMentionDispatchAt: 95_000, mentionMinIntervalMs: 5000 })).toEqual({ ok: true });
  });
});

describe("timing helpers", () => {
  it("bufferDeadline: now + gate, capped", () => {
    expect(bufferDeadline({ now: 1000, gateMs: 3000, capAt: 15_000 })).toBe(4000);
    expect(bufferDeadline({ now: 14_000, gateMs: 3000, capAt: 15_000 })).toBe(15_000);
  });

  it("scaledCooldownMs: HEATED ×2 by default, others ×1", () => {
    expect(["DORMANT", "COOLING", "ACTIVE", "HEATED"].map((s) => scaledCooldownMs(DEFAULT_GROUP_SETTINGS, s as "HEATED"))).toEqual([
      30_000, 30_000, 30_000, 60_000,
    ]);
  });

  it("retryDelayMs: base × 2^attempt", () => {
    expect([0, 1, 2, 3].map((a) => retryDelayMs(2000, a))).toEqual([2000, 4000, 8000, 16_000]);
  });

  it("triggerOf: mention beats engaged beats normal", () => {
    const m = (isMention: boolean, engaged: boolean) => ({ isMention, engaged }) as InboundMessage;
    expect(triggerOf([m(false, false)])).toEqual({ trigger: "normal", mentionCount: 0 });
    expect(triggerOf([m(false, false), m(false, true)])).toEqual({ trigger: "engaged", mentionCount: 0 });
    expect(triggerOf([m(true, false), m(false, true), m(true, false)])).toEqual({ trigger: "mention", mentionCount: 2 });
  });
});
