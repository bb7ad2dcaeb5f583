import { describe, expect, it } from "vitest";
import { CONFIRM_GAP_MS, createServerClock, observeServerTime, serverNow, serverNowLowerBound } from "../../src/group/server-clock.ts";

describe("server clock", () => {
  it("is the local time until a server timestamp is seen", () => {
    expect(serverNow(createServerClock(), 5_000)).toBe(5_000);
  });

  it("a local clock behind: the newest server timestamp plus local time elapsed since it arrived, at once", () => {
    const c = createServerClock();
    // The server runs five minutes ahead of the local clock: a timestamp from the future is proof.
    observeServerTime(c, 1_300_000, 1_000_000);
    expect(serverNow(c, 1_000_000)).toBe(1_300_000);
    expect(serverNow(c, 1_002_500)).toBe(1_302_500);
    observeServerTime(c, 1_310_000, 1_004_000);
    expect(serverNow(c, 1_005_000)).toBe(1_311_000);
  });

  it("a local clock ahead: the lower estimate is taken when a later delivery confirms it", () => {
    const c = createServerClock();
    // The local clock runs five minutes ahead of the server.
    observeServerTime(c, 1_000_000, 1_300_000);
    // One delivery cannot tell a five-minute-old message from a skewed clock.
    expect(serverNow(c, 1_300_000)).toBe(1_300_000);
    expect(serverNowLowerBound(c, 1_300_000)).toBe(1_000_000);
    // Agreeing but in the same moment (another page of the same pull): still not confirmed.
    observeServerTime(c, 1_000_500, 1_300_100);
    expect(serverNow(c, 1_300_100)).toBe(1_300_100);
    // A later delivery that agrees: live traffic, so the clock is five minutes ahead.
    observeServerTime(c, 1_000_000 + CONFIRM_GAP_MS, 1_300_000 + CONFIRM_GAP_MS);
    expect(serverNow(c, 1_305_000)).toBe(1_005_000);
    expect(serverNowLowerBound(c, 1_305_000)).toBe(1_005_000);
  });

  it("a backlog from hours ago is never 'now', however it is paged; the next live message clears it", () => {
    const c = createServerClock();
    const local = 10 * 3_600_000;
    // Pulled after a restart: stamped two hours and one hour before the local clock, 1 s apart.
    observeServerTime(c, local - 2 * 3_600_000, local);
    observeServerTime(c, local - 3_600_000, local + 1000);
    expect(serverNow(c, local + 1000)).toBe(local + 1000);
    // The next page 10 s later, stamped half an hour ago: it disagrees with the last one.
    observeServerTime(c, local - 1_800_000, local + 10_000);
    expect(serverNow(c, local + 10_000)).toBe(local + 10_000);
    // A live message on time clears the pending lower estimate.
    observeServerTime(c, local + 11_000 - 300, local + 11_000);
    expect(serverNowLowerBound(c, local + 11_000)).toBe(local + 11_000);
    expect(c.candidate).toBeNull();
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
