// Regressions found in review, as literal fake-timer timelines. Server and local clocks agree.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { at, msg, setup, T0 } from "./harness.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const acceptedFlags = (t: ReturnType<typeof setup>) =>
  t.events.flatMap((e) => (e.type === "accepted" ? [[e.message.msgId, e.message.engaged]] : []));

describe("engaged speakers: the reply a dispatch sent", () => {
  // The client recorded a sent outcome without its `replyTo`, and the echo of that message is then
  // "already counted", so answering bob never engaged him: his engagement lapsed 60 s after his
  // mention however long we kept talking with him.
  it("a reply to bob's follow-up keeps bob engaged for 60 s from the reply", async () => {
    const t = setup({
      script: (_b, i) =>
        i === 1
          ? { latencyMs: 20_000, outcome: { kind: "sent", replyType: "short", text: "Try a clean build.", msgId: "100", sentAt: T0 + 63_000, replyTo: "2" } }
          : { latencyMs: 1000 },
    });
    // T+0 bob names Alice → dispatch at once (silent, ends T+1); bob engaged until T+60.
    t.client.feedBufferGate([msg(1, 0, "Alice, quick question")]);
    await at(40_000);
    // T+40 bob follows up (engaged) → buffer gate at T+43, cooldown over → dispatch; it answers #2 at T+63.
    t.client.feedBufferGate([msg(2, 40_000, "the build keeps failing")]);
    await at(80_000);
    expect(t.dispatchTimes()).toEqual([0, 43_000]);
    // T+80 bob again: engaged (our T+63 reply to him runs to T+123) → follow-up at T+85, not the cooldown's T+93.
    t.client.feedBufferGate([msg(3, 80_000, "any idea why?")]);
    await at(84_999);
    expect(t.dispatchTimes()).toEqual([0, 43_000]);
    await at(85_000);
    expect(t.dispatchTimes()).toEqual([0, 43_000, 85_000]);
    expect(t.calls[2]!.batch.mentionInfo.triggerType).toBe("engaged");
    expect(acceptedFlags(t)).toEqual([
      ["1", false],
      ["2", true],
      ["3", true],
    ]);
    expect(t.client.stats().ownMessages).toBe(1);
  });
});

describe("engaged speakers: many at once", () => {
  // Past 64 entries the map was pruned with the *new* engagement's end time instead of the
  // current time, so every engagement still running but ending sooner was forgotten.
  it("65 people who named Alice in the last minute all stay engaged", async () => {
    const t = setup();
    const people = Array.from({ length: 65 }, (_, i) => `p${i}.agentcp.io`);
    // T+0 … T+6.4 s: p0 … p64 each name Alice, 100 ms apart (one batch).
    t.client.feedBufferGate(people.map((p, i) => msg(i + 1, i * 100, "Alice, one for you", p)));
    await at(40_000);
    expect(t.client.engagedSpeakers()).toHaveLength(65);
    // T+40 s: p0 (still engaged) follows up without naming Alice — past continuationMs (30 s), so
    // the line is judged on p0's engagement alone, not as a continuation the others' lines interrupted.
    t.client.feedBufferGate([msg(66, 40_000, "and another thing", people[0])]);
    expect(acceptedFlags(t).at(-1)).toEqual(["66", true]);
  });
});
