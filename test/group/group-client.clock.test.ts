// The server-time estimate through the engine, when the clocks disagree or the first thing seen is
// history: literal fake-timer timelines. Local time is the fake clock; each message's timestamp is
// what the server stamped.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { GroupMessage } from "../../src/types.ts";
import { at, msg, setup, T0 } from "./harness.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const MIN = 60_000;
const SPEAKERS = ["bob.agentcp.io", "carol.agentcp.io", "dave.agentcp.io"];

describe("a restart with a backlog: history never becomes 'now'", () => {
  it("T+0s a backlog stamped T-9min…T-6min (a mention among it) → dispatched at T+0s with now = T+0s, vitality counts only the last 5 minutes", async () => {
    // Server and local clocks agree; the agent was down for ten minutes.
    const t = setup();
    const backlog: GroupMessage[] = [];
    for (let i = 0; i < 12; i++) backlog.push(msg(i + 1, -9 * MIN + i * 15_000, `note ${i + 1}`, SPEAKERS[i % 3]));
    backlog.push(msg(13, -6 * MIN, "Alice, can you check the build?", "bob.agentcp.io"));
    t.client.feedBufferGate(backlog);

    expect(t.client.serverNow()).toBe(T0);
    // Everything was said more than five minutes ago: the group is quiet now.
    expect(t.client.computeVitality()).toMatchObject({ state: "DORMANT", messagesIn5m: 0 });
    await at(0);
    expect(t.calls.map((c) => [c.at, c.batch.mentionInfo.triggerType, c.batch.now - T0, c.batch.vitality.state])).toEqual([[0, "mention", 0, "DORMANT"]]);

    // T+10s: the first live message; the estimate stays on the clock that was right all along.
    await at(10_000);
    t.client.feedBufferGate([msg(14, 10_000, "anyone?", "carol.agentcp.io")]);
    expect(t.client.serverNow()).toBe(T0 + 10_000);
    expect(t.client.computeVitality()).toMatchObject({ state: "COOLING", messagesIn5m: 1 });
  });

  it("the same backlog in three pages 50 ms apart is still not 'now'", async () => {
    const t = setup();
    const page = (from: number) => Array.from({ length: 4 }, (_, i) => msg(from + i, -8 * MIN + (from + i) * 10_000, `note ${from + i}`, SPEAKERS[i % 3]));
    t.client.feedBufferGate(page(1));
    await at(50);
    t.client.feedBufferGate(page(5));
    await at(100);
    t.client.feedBufferGate(page(9));
    expect(t.client.serverNow()).toBe(T0 + 100);
    expect(t.client.computeVitality()).toMatchObject({ state: "DORMANT", messagesIn5m: 0 });
  });
});

describe("a local clock far ahead of the server", () => {
  it("15 minutes ahead: a busy group reads busy from the second live delivery on (T+0s, T+5s, … every 5 s)", async () => {
    // Our clock reads T0 while the server's reads T0 − 15 min.
    const t = setup();
    const server = (localMs: number) => localMs - 15 * MIN;
    for (let i = 0; i < 8; i++) {
      await at(i * 5_000);
      t.client.feedBufferGate([msg(i + 1, server(i * 5_000), `line ${i + 1}`, SPEAKERS[i % 3])]);
      if (i === 0) expect(t.client.serverNow()).toBe(T0); // one delivery cannot tell history from skew
      if (i === 1) expect(t.client.serverNow()).toBe(T0 + 5_000 - 15 * MIN);
    }
    // T+35s: 8 messages from 3 speakers within five minutes of the server's now.
    expect(t.client.serverNow()).toBe(T0 + 35_000 - 15 * MIN);
    expect(t.client.computeVitality()).toMatchObject({ state: "ACTIVE", messagesIn5m: 8, uniqueSpeakersIn5m: 3 });
  });

  it("the wall clock set an hour ahead (or back) mid-conversation changes nothing: timers and server time run on a monotonic clock", async () => {
    const t = setup({ settings: { cooldownMs: 0 }, script: () => ({}) });
    t.client.feedBufferGate([msg(1, 0, "one", "bob.agentcp.io")]);
    await at(2_000);
    t.client.feedBufferGate([msg(2, 2_000, "two", "carol.agentcp.io")]);
    // T+2s: someone sets our wall clock an hour forward; the server's is untouched.
    vi.setSystemTime(Date.now() + 60 * MIN);
    expect(t.client.serverNow()).toBe(T0 + 2_000);
    // The buffer gate armed at T+2s still fires 3 s later, not an hour off.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(t.calls.map((c) => [c.batch.now - T0, c.ids])).toEqual([[5_000, ["1", "2"]]]);
    // And set back two hours: a message still waits its 3 s, not two hours and 3 s.
    vi.setSystemTime(Date.now() - 120 * MIN);
    t.client.feedBufferGate([msg(3, 5_000, "three", "dave.agentcp.io")]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(t.calls.map((c) => [c.batch.now - T0, c.ids])).toEqual([
      [5_000, ["1", "2"]],
      [8_000, ["3"]],
    ]);
    expect(t.client.computeVitality()).toMatchObject({ state: "ACTIVE", messagesIn5m: 3, uniqueSpeakersIn5m: 3 });
  });
});
