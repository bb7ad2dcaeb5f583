// Two of our agents DMing each other stop: timelines on a fake clock with the real direct
// conversations, monitors and dispatch pipeline (the model scripted: it answers every line after
// one second). Expected times are written out; nothing is computed by the code under test.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { directAgent, events, memoryNet, outcomes, type Agent } from "./harness.ts";

const ALICE = "alice.acp.local";
const BOB = "bob.acp.local";
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const sec = (ms: number) => `T+${(ms - T0) / 1000}s`;

describe("two of our agents in a direct exchange (fake clock, in-memory network, the real pipeline)", () => {
  let agents: Agent[] = [];
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    for (const a of agents) a.runtime.close();
    agents = [];
    vi.useRealTimers();
  });
  const pair = (direct: Record<string, unknown>) => {
    const net = memoryNet();
    const alice = directAgent({ net, name: "alice", identity: { dmPolicy: "open", direct }, latencyMs: 1000 });
    const bob = directAgent({ net, name: "bob", identity: { dmPolicy: "open", direct }, latencyMs: 1000 });
    agents = [alice, bob];
    return { net, alice, bob };
  };
  const said = (net: ReturnType<typeof memoryNet>) => net.wire.map((w) => `${sec(w.at)} ${w.from.split(".")[0]} → ${w.to.split(".")[0]}: ${w.text}`);

  it("stop at the turn cap: T+0s bob opens · each answers after 1 s · T+5s alice's 3rd reply ends it (cap 3) and she sends [END] · bob's answer in flight is dropped · silence after", async () => {
    const { net, alice, bob } = pair({ maxAgentTurns: 3 });
    await bob.link.sendDirect({ peer: ALICE, text: "Hi Alice, shall we compare notes?" });
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(said(net)).toEqual([
      "T+0s bob → alice: Hi Alice, shall we compare notes?",
      "T+1s alice → bob: alice #1: the build passes on my side.",
      "T+2s bob → alice: bob #1: the build passes on my side.",
      "T+3s alice → bob: alice #2: Which branch are you on?",
      "T+4s bob → alice: bob #2: Which branch are you on?",
      "T+5s alice → bob: alice #3: Tuesday works, 10 am.",
      "T+5s alice → bob: [END]",
    ]);
    expect(outcomes(alice)).toEqual(["sent", "sent", "sent"]);
    // Bob was writing his 3rd when the end marker came: it never went out.
    expect(outcomes(bob)).toEqual(["sent", "sent", "conversation-ended"]);
    expect(events(alice, "direct.exchange-ended")).toEqual([{ peer: BOB, reason: "agent-turn-cap", agentTurns: 3, lastedMs: 5000 }]);
    expect(events(bob, "direct.exchange-ended")).toEqual([{ peer: ALICE, reason: "peer-end-marker", agentTurns: 2, lastedMs: 4000 }]);
    expect(alice.runtime.conversations.openCount + bob.runtime.conversations.openCount).toBe(0);
  });

  it("without the end marker the cap still holds: alice stops at T+5s, bob's reply at T+6s finds her resting, and she stays quiet until she has rested 10 min", async () => {
    const { net, alice, bob } = pair({ maxAgentTurns: 3, announceEnd: false });
    await bob.link.sendDirect({ peer: ALICE, text: "ping" });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(said(net).map((l) => l.split(":")[0])).toEqual([
      "T+0s bob → alice",
      "T+1s alice → bob",
      "T+2s bob → alice",
      "T+3s alice → bob",
      "T+4s bob → alice",
      "T+5s alice → bob",
      "T+6s bob → alice",
    ]);
    expect(events(alice, "direct.not-answered")).toEqual([{ peer: BOB, reason: "resting", key: expect.any(String) }]);
    expect(outcomes(bob)).toEqual(["sent", "sent", "sent"]);
    // T+9m59s: still resting (quiet since T+6s: 9m53s < 10m).
    await vi.advanceTimersByTimeAsync(9 * 60_000 - 1000);
    await bob.link.sendDirect({ peer: ALICE, text: "still there?" });
    await vi.advanceTimersByTimeAsync(5000);
    expect(events(alice, "direct.not-answered").map((e) => e.reason)).toEqual(["resting", "resting"]);
    // Ten quiet minutes after that: a new exchange, answered.
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const before = net.wire.length;
    await bob.link.sendDirect({ peer: ALICE, text: "new topic" });
    await vi.advanceTimersByTimeAsync(1000);
    expect(net.wire.slice(before).map((w) => `${w.from.split(".")[0]}: ${w.text}`)).toEqual(["bob: new topic", "alice: alice #4: I'd rather measure first; numbers beat guesses."]);
  });

  it("the idle timeout and the maximum length end an exchange on their own timers, and close() leaves none armed", async () => {
    const net = memoryNet();
    const dave = directAgent({ net, name: "dave", owner: "owner.acp.local", identity: { direct: { idleTimeoutMs: 60_000, maxSessionMs: 150_000 } } });
    agents = [dave];
    const owner = net.link("owner.acp.local");
    // T+0s first line; T+59s another (idle re-armed); T+2m quiet → ended idle at T+1m59s.
    await owner.sendDirect({ peer: dave.aid, text: "first" });
    await vi.advanceTimersByTimeAsync(59_000);
    await owner.sendDirect({ peer: dave.aid, text: "second" });
    await vi.advanceTimersByTimeAsync(61_000);
    expect(events(dave, "direct.exchange-ended")).toEqual([{ peer: "owner.acp.local", reason: "idle", agentTurns: 0, lastedMs: 119_000 }]);
    // A lively one: a line every 50 s from T+2m; the length (150 s) ends it at T+4m30s.
    const start = Date.now();
    for (let i = 0; i < 4; i++) {
      await owner.sendDirect({ peer: dave.aid, text: `lively ${i}` });
      await vi.advanceTimersByTimeAsync(50_000);
    }
    const ended = events(dave, "direct.exchange-ended");
    expect(ended.at(-1)).toEqual({ peer: "owner.acp.local", reason: "max-length", agentTurns: 0, lastedMs: 150_000 });
    expect(Date.now() - start).toBe(200_000);
    // The owner is a person: no turn cap, every line answered.
    expect(outcomes(dave)).toEqual(["sent", "sent", "sent", "sent", "sent", "sent"]);
    dave.runtime.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("at most maxConversations open exchanges: the least recently active is ended first, the owner's last", async () => {
    const net = memoryNet();
    const dave = directAgent({ net, name: "dave", owner: "owner.acp.local", identity: { dmPolicy: "open", direct: { maxConversations: 2 } } });
    agents = [dave];
    const write = async (who: string, text: string) => {
      await net.link(`${who}.acp.local`).sendDirect({ peer: dave.aid, text });
      await vi.advanceTimersByTimeAsync(1000);
    };
    await write("owner", "T+0s owner");
    await write("erin", "T+1s erin");
    expect(dave.runtime.conversations.openCount).toBe(2);
    // A third: erin's is the least recently active that is not the owner's.
    await write("frank", "T+2s frank");
    await write("gina", "T+3s gina");
    expect(events(dave, "direct.exchange-ended")).toEqual([
      { peer: "erin.acp.local", reason: "evicted", agentTurns: 1, lastedMs: 1000 },
      { peer: "frank.acp.local", reason: "evicted", agentTurns: 1, lastedMs: 1000 },
    ]);
    expect(dave.runtime.conversations.openCount).toBe(2);
  });
});
