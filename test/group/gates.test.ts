// The group's timers (src/group/gates.ts) on their own: what arrives, and the local time at which
// they start a dispatch — written out literally (T+…). The dispatcher is a stand-in that records
// the start and takes everything held, as the real one does; the ingest is read only for vitality.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { triggerOf } from "../../src/group/dispatch-gate.ts";
import { DispatchGates, type GatesState } from "../../src/group/gates.ts";
import { HeldMessages } from "../../src/group/held.ts";
import type { GroupIngest } from "../../src/group/ingest.ts";
import type { GroupSettings, InboundMessage, TriggerType, VitalityState } from "../../src/types.ts";

const T0 = 1_700_000_000_000;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

async function at(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(T0 + ms - Date.now());
}

const line = (id: string, flags: Partial<Pick<InboundMessage, "isMention" | "engaged">> = {}): InboundMessage => ({
  msgId: id, groupId: "g1", sender: "bob.agentcp.io", content: `line ${id}`, contentType: "text", timestamp: Date.now(), metadata: null, isMention: false, engaged: false, ...flags,
});

function setup(settings: Partial<GroupSettings> = {}, vitality: VitalityState = "COOLING") {
  const held = new HeldMessages<InboundMessage>();
  const s = {
    closed: false,
    dispatching: false as boolean,
    held,
    // Only vitalityAt is read (the cooldown's scale).
    ingest: { vitalityAt: () => ({ state: vitality, messagesIn5m: 0, uniqueSpeakersIn5m: 0, myMessagesIn5m: 0, updatedAt: Date.now() }) } as unknown as GroupIngest,
    settings: { ...DEFAULT_GROUP_SETTINGS, ...settings },
    localNow: () => Date.now(),
  } satisfies GatesState;
  /** Dispatch starts: T+ms and the trigger of what they took. */
  const starts: Array<[number, TriggerType, string[]]> = [];
  /** Each started dispatch's signal (aborted by a mention arriving while it runs). */
  const signals: AbortSignal[] = [];
  const gates: DispatchGates = new DispatchGates(s, (now) => {
    const { messages } = held.takeAll();
    gates.taken();
    const { trigger } = triggerOf(messages);
    signals.push(gates.dispatchStarted(trigger, now));
    starts.push([now - T0, trigger, messages.map((m) => m.msgId)]);
  });
  /** Messages arrive at the current time, as one feed. */
  const feed = (...lines: InboundMessage[]) => {
    for (const l of lines) held.add(l);
    held.batchArrived();
    const now = Date.now();
    if (lines.some((l) => l.isMention)) gates.mentionArrived(now, true);
    else gates.talkArrived(now, lines.some((l) => l.engaged));
  };
  /** A dispatch runs from now for `ms`, then ends (the lock released, afterDispatch). */
  const runFor = async (ms: number) => {
    s.dispatching = true;
    await vi.advanceTimersByTimeAsync(ms);
    s.dispatching = false;
    gates.dispatchEnded(Date.now());
    gates.afterDispatch(Date.now());
  };
  return { s, gates, held, starts, signals, feed, runFor };
}

describe("the buffer gate: a trailing debounce with a cap", () => {
  it("T+0 a line; quiet → the gate opens at T+3s", async () => {
    const t = setup();
    t.feed(line("1"));
    await at(2999);
    expect(t.starts).toEqual([]);
    await at(3000);
    expect(t.starts).toEqual([[3000, "normal", ["1"]]]);
  });

  it("a line every 2 s keeps pushing it back, but never past T+15s (bufferGateMaxWaitMs)", async () => {
    const t = setup();
    for (let ms = 0; ms <= 16_000; ms += 2000) {
      await at(ms);
      t.feed(line(String(ms / 2000 + 1)));
    }
    // Lines at T+0 … T+14s went at T+15s; the one at T+16s waits for its own gate (T+19s).
    expect(t.starts).toEqual([[15_000, "normal", ["1", "2", "3", "4", "5", "6", "7", "8"]]]);
    await at(19_000);
    expect(t.starts.at(-1)).toEqual([19_000, "normal", ["9"]]);
  });
});

describe("the cooldown after a dispatch, scaled by vitality", () => {
  it.each([
    ["COOLING", 30_000],
    ["HEATED", 60_000],
  ] as const)("%s: a dispatch ends at T+0; a line at T+1s waits for T+%i", async (vitality, expected) => {
    const t = setup({}, vitality);
    await t.runFor(0);
    await at(1000);
    t.feed(line("1"));
    await at(expected - 1);
    expect(t.starts).toEqual([]);
    await at(expected);
    expect(t.starts).toEqual([[expected, "normal", ["1"]]]);
  });
});

describe("follow-ups and mentions skip the cooldown", () => {
  it("T+0 a dispatch ends; T+1s an engaged follow-up goes T+6s (engagedFollowUpMs 5 s), not at T+30s", async () => {
    const t = setup();
    await t.runFor(0);
    await at(1000);
    t.feed(line("1", { engaged: true }));
    await at(5999);
    expect(t.starts).toEqual([]);
    await at(6000);
    expect(t.starts).toEqual([[6000, "engaged", ["1"]]]);
  });

  it("a person's mention goes at once, taking everything held; an agent's waits agentMentionGapMs", async () => {
    const person = setup();
    person.feed(line("1"));
    await at(1000);
    person.feed(line("2", { isMention: true }));
    expect(person.starts).toEqual([[1000, "mention", ["1", "2"]]]);

    const agent = setup({ agentMentionGapMs: 4000 });
    agent.held.add(line("3", { isMention: true }));
    agent.gates.mentionArrived(Date.now(), false);
    await at(1000 + 3999);
    expect(agent.starts).toEqual([]);
    await at(1000 + 4000);
    expect(agent.starts).toEqual([[5000, "mention", ["3"]]]);
  });

  it("a mention during a running dispatch ends its send delay (the signal) and goes the moment the lock is released", async () => {
    const t = setup();
    t.feed(line("1", { isMention: true }));
    // The dispatcher holds the lock while it runs.
    t.s.dispatching = true;
    await at(2000);
    expect(t.signals[0]!.aborted).toBe(false);
    t.feed(line("2", { isMention: true }));
    expect(t.signals[0]!.aborted).toBe(true);
    expect(t.gates.mentionWaiting).toBe(true);
    expect(t.starts).toHaveLength(1);
    await at(5000);
    t.s.dispatching = false;
    t.gates.dispatchEnded(Date.now());
    t.gates.afterDispatch(Date.now());
    expect(t.starts).toEqual([[0, "mention", ["1"]], [5000, "mention", ["2"]]]);
  });
});

describe("retries, reset", () => {
  it("a failed dispatch is retried after its backoff with everything held then", async () => {
    const t = setup();
    t.gates.retryIn(2000);
    t.held.requeue([line("1")], 1);
    await at(1000);
    t.feed(line("2"));
    await at(1999);
    expect(t.starts).toEqual([]);
    await at(2000);
    expect(t.starts).toEqual([[2000, "normal", ["1", "2"]]]);
  });

  it("reset clears every timer and waiting flag (close, or a batch of only reactions)", async () => {
    const t = setup();
    t.feed(line("1"));
    t.feed(line("2", { engaged: true }));
    t.gates.retryIn(2000);
    expect(vi.getTimerCount()).toBe(3);
    t.gates.reset();
    expect(vi.getTimerCount()).toBe(0);
    expect(t.gates.mentionWaiting).toBe(false);
  });
});
