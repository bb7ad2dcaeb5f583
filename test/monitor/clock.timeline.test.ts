// One clock inside a dispatch: the group client and the monitor wired as the runtime wires them
// (neither is given a clock), and the machine's wall clock stepped an hour while a dispatch runs
// (an NTP correction, a user setting the time). Server time inside the dispatch must follow the
// clock the group client times on, not the wall clock. The hosted model is a scripted stand-in
// (it cannot exist here); the transport is a recording fake.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { initGroupClientForIdentity } from "../../src/group/group-client.ts";
import { createGroupMonitor, type DispatchDecision } from "../../src/monitor/monitor.ts";
import { TransportError } from "../../src/transport/errors.ts";
import type { AgentBackend, GroupMessage, GroupSender } from "../../src/types.ts";
import { ALICE, T0, settingsWith } from "./helpers.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const HOUR = 3_600_000;

function gm(id: string, atMs: number, content: string, sender: string): GroupMessage {
  return { msgId: id, groupId: "g1", sender, content, contentType: "text", timestamp: T0 + atMs, metadata: null };
}

/** Monotonic offset from T+0: the fake `performance` clock, which a wall-clock step does not move. */
const elapsed = () => performance.now();
async function at(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms - elapsed());
}

/** Answers after 1 s; the wall clock steps by `stepMs` half-way through the first call. */
function steppingBackend(stepMs: number): AgentBackend & { calls: number } {
  const b = {
    name: "stepping-clock",
    calls: 0,
    async generate() {
      b.calls++;
      await new Promise((r) => setTimeout(r, 500));
      if (b.calls === 1) vi.setSystemTime(Date.now() + stepMs);
      await new Promise((r) => setTimeout(r, 500));
      return { text: "The build is green.", usage: { promptTokens: 100, completionTokens: 10 } };
    },
  };
  return b;
}

/** First send: the connection drops after the server stored it (maybe sent); later sends succeed. */
function droppingSender() {
  const attempts: number[] = [];
  const sender: GroupSender = {
    async sendMessage() {
      attempts.push(elapsed());
      if (attempts.length === 1) throw new TransportError("CONNECTION_LOST", "send: connection lost", { action: "send_message", groupId: "g1" });
      return { msgId: String(900 + attempts.length), timestamp: T0 + elapsed() };
    },
  };
  return { sender, attempts };
}

function wire(backend: AgentBackend, sender: GroupSender) {
  const decisions: DispatchDecision[] = [];
  const settings = settingsWith();
  const monitor = createGroupMonitor({
    identityId: "alice",
    identity: ALICE,
    groupId: "g1",
    settings,
    humans: ["carol.agentcp.io"],
    backend,
    sender,
    random: () => 0.5,
    onDecision: (d) => decisions.push(structuredClone({ ...d })),
  });
  const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings, dispatch: monitor.handle });
  return { monitor, client, decisions };
}

describe("the wall clock steps during a dispatch", () => {
  it.each([
    ["forward", HOUR],
    ["back", -HOUR],
  ])("an hour %s during the model call: the maybe-sent reply's echo is found, so it goes out once", async (_dir, stepMs) => {
    const backend = steppingBackend(stepMs);
    const { sender, attempts } = droppingSender();
    const w = wire(backend, sender);
    // T+0s    carol names Alice → mention dispatch at once (server time T+0s)
    // T+0.5s  the wall clock steps an hour; the model answers at T+1s
    // T+1s    the send: connection lost after the server stored it
    // T+2s    the reconnect pull brings our own message back, stamped T+1s by the server
    // T+3s    the retry looks for that echo since (T+1s − 60 s) and finds it: no second send
    w.client.feedBufferGate([gm("1", 0, "Alice, is the build green?", "carol.agentcp.io")]);
    await at(2000);
    w.client.feedBufferGate([gm("77", 1000, "The build is green.", ALICE.aid)]);
    await at(30_000);
    expect(attempts).toEqual([1000]);
    expect(w.decisions.map((d) => [d.dispatchId, d.at - T0, d.outcome.kind === "sent", d.detail ?? null])).toEqual([
      [1, 0, false, "retry-with-batch:maybe-sent"],
      [2, 3000, true, "delivered-before:echo"],
    ]);
    expect(backend.calls).toBe(1);
  });

  it("an hour forward during the model call: the call is charged at T+0s and the reply dated T+1s in server time, not an hour later", async () => {
    const backend = steppingBackend(HOUR);
    const sends: number[] = [];
    const sender: GroupSender = {
      async sendMessage() {
        sends.push(elapsed());
        return { msgId: String(900 + sends.length), timestamp: 0 };
      },
    };
    const w = wire(backend, sender);
    // T+0s carol names Alice → model call T+0s…T+1s → sent at T+1s; the send's answer carries no
    // server stamp, so the monitor's own server-time estimate dates it.
    w.client.feedBufferGate([gm("1", 0, "Alice, is the build green?", "carol.agentcp.io")]);
    await at(5000);
    expect(sends).toEqual([1000]);
    const snap = w.monitor.snapshot();
    expect(snap.budgetEvents.map((e) => e[0] - T0)).toEqual([0]);
    expect(w.client.memory.lastSelfSpeakAt! - T0).toBe(1000);
  });
});
