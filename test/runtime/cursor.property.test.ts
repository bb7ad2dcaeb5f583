// Property: whatever the timeline — messages and mentions, the network going away and coming
// back while replies wait for a session, and a close at any moment (often during a send) — the
// cursor the runtime would save never passes a mention that was not answered: each mention at or
// below it was answered by a reply that went out, or given up after its retries. The real group
// client, monitor and cursor bookkeeping (src/runtime/cursor.ts), closed in the runtime's order;
// the model is the deterministic scripted responder and the group service a stand-in sender
// whose sends wait for a session the way the transport's do (fake timers throughout).
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { closeGroupClientForIdentity, initGroupClientForIdentity, type GroupClientEvent } from "../../src/group/group-client.ts";
import { createScriptedBackend, offlineReplyText } from "../../src/backends/deterministic.ts";
import { createGroupMonitor } from "../../src/monitor/monitor.ts";
import { settledCursor, trackCursor, type CursorTrack } from "../../src/runtime/cursor.ts";
import { TransportError } from "../../src/transport/errors.ts";
import type { GroupMessage, GroupSender, GroupSettings } from "../../src/types.ts";
import { ALICE, T0 } from "../monitor/helpers.ts";
import { GENEROUS_BUDGET } from "../support/runtime-harness.ts";
import { reasonOf } from "../support/outcome.ts";

const HUMANS = ["bob.agentcp.io", "carol.agentcp.io"];
const REQUEST_TIMEOUT_MS = 30_000;

/** Sends that need a session: while the network is down one waits for it, up to the request timeout; closing fails it. */
function sessionSender() {
  let up = true;
  let closed = false;
  let nextId = 100_000;
  const waiters = new Set<() => void>();
  const sent: string[] = [];
  const sender: GroupSender = {
    async sendMessage({ content }) {
      if (closed) throw new TransportError("CLOSED", "connection is closed");
      if (!up) {
        await new Promise<void>((resolve, reject) => {
          const wake = () => {
            clearTimeout(timer);
            waiters.delete(wake);
            if (closed) reject(new TransportError("CLOSED", "connection is closed"));
            else resolve();
          };
          const timer = setTimeout(() => {
            waiters.delete(wake);
            reject(new TransportError("NOT_CONNECTED", `not connected within ${REQUEST_TIMEOUT_MS} ms`));
          }, REQUEST_TIMEOUT_MS);
          waiters.add(wake);
        });
      }
      sent.push(content);
      return { msgId: String(nextId++), timestamp: Date.now() };
    },
  };
  const wakeAll = () => {
    for (const w of [...waiters]) w();
  };
  return {
    sender,
    sent,
    setUp(v: boolean) {
      up = v;
      if (v) wakeAll();
    },
    close() {
      closed = true;
      wakeAll();
    },
  };
}

const stepArb = fc.record({
  gapMs: fc.constantFrom(0, 100, 1000, 5000, 20_000, 40_000),
  messages: fc.array(fc.record({ mention: fc.boolean(), sender: fc.nat(HUMANS.length - 1) }), { maxLength: 3 }),
  network: fc.constantFrom("same", "same", "same", "down", "up"),
});
const settingsArb = fc.record({
  bufferGateMs: fc.constantFrom(0, 500, 3000),
  cooldownMs: fc.constantFrom(0, 5000),
  retryBackoffMs: fc.constantFrom(500, 2000),
  maxRetries: fc.constantFrom(1, 10),
});

describe("the saved cursor never passes an unanswered mention (fast-check)", () => {
  it("over messages, outages during sends and a close at any moment", async () => {
    await fc.assert(
      fc.asyncProperty(settingsArb, fc.array(stepArb, { minLength: 1, maxLength: 15 }), fc.option(fc.nat(16), { nil: undefined }), async (tuning, steps, closeAt) => {
        vi.useFakeTimers({ now: T0 });
        try {
          await runTimeline(tuning, steps, closeAt);
        } finally {
          vi.useRealTimers();
        }
      }),
      { numRuns: 150 },
    );
  });
});

async function runTimeline(
  tuning: { bufferGateMs: number; cooldownMs: number; retryBackoffMs: number; maxRetries: number },
  steps: Array<{ gapMs: number; messages: Array<{ mention: boolean; sender: number }>; network: string }>,
  closeAt: number | undefined,
) {
  const settings: GroupSettings = {
    ...DEFAULT_GROUP_SETTINGS,
    ...tuning,
    bufferGateMaxWaitMs: tuning.bufferGateMs + 2000,
    delay: { ...DEFAULT_GROUP_SETTINGS.delay, enabled: false },
    budget: { ...DEFAULT_GROUP_SETTINGS.budget, ...GENEROUS_BUDGET },
  };
  const net = sessionSender();
  const backend = createScriptedBackend({ mode: "mention", replyText: (r) => offlineReplyText(r, "[offline responder]") });
  const monitor = createGroupMonitor({ identityId: "alice", identity: ALICE, groupId: "g1", settings, humans: HUMANS, backend, sender: net.sender });
  const events: GroupClientEvent[] = [];
  let track!: CursorTrack & { client: { readonly cursor: number } };
  const client = initGroupClientForIdentity({
    identityId: "alice",
    groupId: "g1",
    identity: ALICE,
    humans: HUMANS,
    settings,
    dispatch: monitor.handle,
    onEvent: (e) => {
      events.push(e);
      trackCursor(track, e);
    },
  });
  track = Object.assign({ restoredCursor: 0, unsettled: new Set<number>(), inFlight: new Map<number, number[]>() }, { client });

  // The runtime's close: monitors first, then the transport (waiting sends fail), then the client.
  let closing: Promise<void> | undefined;
  const close = () => {
    monitor.close();
    net.close();
    closing = closeGroupClientForIdentity(client);
  };
  let nextId = 1;
  const mentions: number[] = [];
  for (const [i, step] of steps.entries()) {
    await vi.advanceTimersByTimeAsync(step.gapMs);
    if (step.network === "down") net.setUp(false);
    if (step.network === "up") net.setUp(true);
    const batch: GroupMessage[] = step.messages.map((m) => {
      const id = nextId++;
      if (m.mention) mentions.push(id);
      return { msgId: String(id), groupId: "g1", sender: HUMANS[m.sender]!, content: m.mention ? `Alice, question ${id}?` : `note ${id}`, contentType: "text", timestamp: Date.now(), metadata: null };
    });
    if (closing === undefined) client.feedBufferGate(batch);
    else for (const m of batch) if (m.content.startsWith("Alice")) mentions.pop();
    if (closeAt === i && closing === undefined) close();
  }
  if (closing === undefined) {
    // Never closed mid-run: the network comes back, everything plays out, then the identity closes.
    net.setUp(true);
    for (let k = 0; k < 60 && (client.stats().held > 0 || client.stats().dispatching); k++) await vi.advanceTimersByTimeAsync(60_000);
    close();
  }
  // Whatever was in flight ends (a model call or a send cut off by the close).
  for (let k = 0; k < 10; k++) await vi.advanceTimersByTimeAsync(60_000);
  await closing;

  const cursor = settledCursor(track);
  const answered = new Set<string>();
  const starts = new Map<number, string[]>();
  const givenUp = new Set<string>();
  for (const e of events) {
    if (e.type === "dispatch-start") starts.set(e.batch.dispatchId, e.batch.messages.map((m) => m.msgId));
    // Answered, or a decision not to answer (the model stayed silent, a repeat, …): settled for good.
    // A reply that did not get out (a failed send, a close) is neither.
    const decided = e.type === "dispatch-end" && e.ok && ((e.outcome.kind === "sent") || !["send-failed", "group-closed", "backend-failed"].includes(reasonOf(e.outcome) ?? ""));
    if (e.type === "dispatch-end" && decided) for (const id of starts.get(e.dispatchId) ?? []) if (!((e.outcome.kind === "sent" ? e.outcome.notHandled : undefined) ?? []).includes(id)) answered.add(id);
    if (e.type === "dropped" && (e.reason === "retries-exhausted" || e.reason === "answered")) givenUp.add(e.msgId);
  }
  for (const id of mentions) {
    if (id > cursor) continue; // left for the next run
    const outcomes = events.flatMap((e) => (e.type === "dispatch-end" ? [JSON.stringify([starts.get(e.dispatchId), e.ok ? e.outcome : "failed"])] : e.type === "dropped" ? [`drop ${e.msgId} ${e.reason}`] : []));
    expect([id, answered.has(String(id)) || givenUp.has(String(id))], `cursor ${cursor}, sent ${JSON.stringify(net.sent)} ${outcomes.join("\n")}`).toEqual([id, true]);
  }
}
