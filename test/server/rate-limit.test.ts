import { describe, expect, it } from "vitest";
import { RateLimiter, checkRateLimit } from "../../src/server/rate-limit.ts";

describe("checkRateLimit", () => {
  const limit = { messages: 3, perMs: 1000 };

  it("allows up to `messages` sends inside the window", () => {
    expect(checkRateLimit([], limit, 5000)).toEqual({ ok: true });
    expect(checkRateLimit([4100, 4500], limit, 5000)).toEqual({ ok: true });
  });

  it("refuses the next one and says when a slot frees up", () => {
    expect(checkRateLimit([4100, 4500, 4900], limit, 5000)).toEqual({ ok: false, reason: "rate-limited", retryAfterMs: 100 });
  });

  it("forgets sends that left the window (a send exactly perMs ago is out)", () => {
    expect(checkRateLimit([4000, 4500, 4900], limit, 5000)).toEqual({ ok: true });
  });
});

describe("RateLimiter", () => {
  it("keeps one window per key", () => {
    const rl = new RateLimiter({ messages: 1, perMs: 100 });
    expect(rl.take("g1/bob", 0)).toEqual({ ok: true });
    expect(rl.take("g1/alice", 0)).toEqual({ ok: true });
    expect(rl.take("g1/bob", 50)).toEqual({ ok: false, reason: "rate-limited", retryAfterMs: 50 });
    // A refused send does not count against the window.
    expect(rl.take("g1/bob", 100)).toEqual({ ok: true });
  });
});
