// The one abortable wait, on a fake clock (vitest fakes node:timers/promises: fakeNodeBuiltins in
// vitest.config.ts) and once on node's own timers for the AbortError it rejects with there.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { wait } from "../../src/util/wait.ts";

describe("wait (fake clock)", () => {
  beforeEach(() => void vi.useFakeTimers({ now: 0 }));
  afterEach(() => void vi.useRealTimers());

  it("resolves after ms: T+999 still waiting, T+1000 done", async () => {
    let done = false;
    void wait(1000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an abort at T+300 rejects with the signal's reason and clears the timer", async () => {
    const stop = new AbortController();
    const reason = new Error("closing");
    const waiting = wait(1000, stop.signal);
    const settled = waiting.then(() => "resolved", (err: unknown) => err);
    await vi.advanceTimersByTimeAsync(300);
    expect(vi.getTimerCount()).toBe(1);
    stop.abort(reason);
    expect(await settled).toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an already aborted signal rejects at once, with no timer armed, whatever ms", async () => {
    const stop = new AbortController();
    stop.abort("gone");
    await expect(wait(1000, stop.signal)).rejects.toBe("gone");
    await expect(wait(0, stop.signal)).rejects.toBe("gone");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ms ≤ 0 resolves at once without a timer", async () => {
    await expect(wait(0)).resolves.toBeUndefined();
    await expect(wait(-5, new AbortController().signal)).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("wait (node's timers)", () => {
  it("rejects with the signal's reason, not node's AbortError, when aborted mid-wait", async () => {
    const stop = new AbortController();
    const reason = new Error("closing");
    const waiting = wait(60_000, stop.signal);
    queueMicrotask(() => stop.abort(reason));
    await expect(waiting).rejects.toBe(reason);
  });
});
