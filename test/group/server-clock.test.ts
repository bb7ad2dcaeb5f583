import { describe, expect, it } from "vitest";
import { MAX_CLOCK_SKEW_MS, createServerClock, observeServerTime, serverNow } from "../../src/group/server-clock.ts";

describe("server clock", () => {
  it("is the local time until a server timestamp is seen", () => {
    expect(serverNow(createServerClock(), 5_000)).toBe(5_000);
  });

  it("is the newest server timestamp plus local time elapsed since it arrived", () => {
    const c = createServerClock();
    // The local clock runs five minutes ahead of the server.
    observeServerTime(c, 1_000_000, 1_300_000);
    expect(serverNow(c, 1_300_000)).toBe(1_000_000);
    expect(serverNow(c, 1_302_500)).toBe(1_002_500);
    observeServerTime(c, 1_010_000, 1_304_000);
    expect(serverNow(c, 1_305_000)).toBe(1_011_000);
  });

  it("never falls more than MAX_CLOCK_SKEW_MS behind the local clock: a backlog from hours ago is not now", () => {
    const c = createServerClock();
    const local = 10 * 3_600_000;
    // Pulled after a restart: stamped two hours before the local clock.
    observeServerTime(c, local - 2 * 3_600_000, local);
    expect(serverNow(c, local)).toBe(local);
    // Still anchored by a server a few minutes behind.
    observeServerTime(c, local - 120_000, local + 1000);
    expect(serverNow(c, local + 2000)).toBe(local - 119_000);
    expect(MAX_CLOCK_SKEW_MS).toBe(600_000);
  });

  it("ignores timestamps behind the estimate and never runs backwards", () => {
    const c = createServerClock();
    observeServerTime(c, 10_000, 0);
    observeServerTime(c, 9_000, 500); // a late or historical message
    expect(serverNow(c, 500)).toBe(10_500);
    observeServerTime(c, 10_200, 1_000); // stamped before the estimate (11_000): no news
    expect(serverNow(c, 1_000)).toBe(11_000);
    observeServerTime(c, 20_000, 1_000); // the server is ahead of our estimate: jump forward
    expect(serverNow(c, 1_000)).toBe(20_000);
  });
});
