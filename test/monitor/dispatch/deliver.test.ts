// The deliver step (src/monitor/dispatch/deliver.ts): one send of a prepared reply, and the
// outcome it hands the group client — sent (with the key the group's memory takes), retry carrying
// the reply when it did not surely get out, or skipped.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dedupKeyOf } from "../../../src/monitor/dedup.ts";
import { classifySendError, deliver, sendOnce } from "../../../src/monitor/dispatch/deliver.ts";
import { TransportError } from "../../../src/transport/errors.ts";
import type { GroupSender, UnsentReply } from "../../../src/types.ts";
import { T0, batch, msg, testGroup } from "../helpers.ts";
import { stepRun } from "./step.ts";

const OWNER = "carol.agentcp.io";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const reply = (extra: Partial<UnsentReply> = {}): UnsentReply => ({
  ids: new Set(["1"]),
  text: "Yes, green.",
  replyType: "short",
  replyTo: "1",
  metadata: { reply_to: "1", answered_through: "1" },
  key: dedupKeyOf("Yes, green."),
  hasHuman: true,
  ratio: 0.1,
  maybeSent: false,
  since: T0 - 60_000,
  afterMsgId: 40,
  writtenBy: 1,
  ...extra,
});

/** A sender whose sends fail with `code` (none: they succeed as msg 77), and whose history holds `stored`. */
function sender(p: { fail?: string; stored?: { msgId: string; timestamp: number }; historyFails?: boolean } = {}): GroupSender & { sends: number; looked: number } {
  const s = {
    sends: 0,
    looked: 0,
    async sendMessage() {
      s.sends++;
      if (p.fail) throw new TransportError(p.fail as "NOT_CONNECTED", "send failed");
      return { msgId: "77", timestamp: T0 + 500 };
    },
    async findSent() {
      s.looked++;
      if (p.historyFails) throw new TransportError("REQUEST_TIMEOUT", "history");
      return p.stored;
    },
  };
  return s;
}

describe("classifySendError", () => {
  it("never left / may have reached the server / refused", () => {
    expect(classifySendError(new TransportError("NOT_CONNECTED", "x"))).toBe("not-sent");
    expect(classifySendError(new TransportError("CONNECTION_LOST", "x"))).toBe("maybe-sent");
    expect(classifySendError(new TransportError("REQUEST_TIMEOUT", "x"))).toBe("maybe-sent");
    expect(classifySendError(new TransportError("RATE_LIMITED", "x"))).toBe("failed");
    expect(classifySendError(new Error("boom"))).toBe("failed");
    expect(classifySendError(null)).toBe("failed");
  });
});

describe("sendOnce", () => {
  it.each([
    // the reply's last send, our echo seen, the history, the send → the result, sends, history reads
    ["first send", false, false, {}, { ok: true, msgId: "77", via: "send" }, 1, 0],
    ["first send, refused", false, false, { fail: "RATE_LIMITED" }, { ok: false, kind: "failed" }, 1, 0],
    ["maybe sent, our echo came back", true, true, {}, { ok: true, msgId: "90", via: "echo" }, 0, 0],
    ["maybe sent, in the history", true, false, { stored: { msgId: "91", timestamp: T0 + 100 } }, { ok: true, msgId: "91", via: "history" }, 0, 1],
    ["maybe sent, not in the history: sent again", true, false, {}, { ok: true, msgId: "77", via: "send" }, 1, 1],
    ["maybe sent, the history cannot be read: still maybe sent, nothing sent", true, false, { historyFails: true }, { ok: false, kind: "maybe-sent" }, 0, 1],
    ["maybe sent, no connection now", true, false, { fail: "NOT_CONNECTED" }, { ok: false, kind: "not-sent" }, 1, 1],
  ] as const)("%s", async (_name, maybeSent, echoed, s, result, sends, looked) => {
    const memory = testGroup().memory;
    if (echoed) memory.recordEcho({ msgId: "90", content: "Yes, green.", timestamp: T0 - 1000, metadata: null });
    const snd = sender(s);
    expect(await sendOnce({ reply: reply({ maybeSent }), groupId: "g1", sender: snd, memory })).toMatchObject(result);
    expect([snd.sends, snd.looked]).toEqual([sends, looked]);
  });
});

describe("deliver", () => {
  const question = () => batch({ dispatchId: 2, now: T0, messages: [msg("1", OWNER, "Alice, green?", T0, { isMention: true })] });

  it("sent: the outcome carries what the group's memory takes (text, msg id, server time, key); the agent chain resets for a person", async () => {
    const { run, m, sender: s } = stepRun({ batch: question(), restored: { agentChain: 3 } });
    const out = await deliver(run, reply());
    expect(out).toEqual({ kind: "sent", replyType: "short", text: "Yes, green.", budgetRatio: 0.1, msgId: "1000", sentAt: T0, key: dedupKeyOf("Yes, green."), replyTo: "1" });
    expect(s.sent.map((x) => [x.content, x.metadata])).toEqual([["Yes, green.", { reply_to: "1", answered_through: "1" }]]);
    expect(m.state.agentChain).toBe(0);
  });

  it.each([
    // the send's failure → the outcome
    ["NOT_CONNECTED", { kind: "retry", reason: "send-failed", carry: { reply: { maybeSent: false } } }, "retry-with-batch:not-sent"],
    ["CONNECTION_LOST", { kind: "retry", reason: "send-failed", carry: { reply: { maybeSent: true } } }, "retry-with-batch:maybe-sent"],
    ["RATE_LIMITED", { kind: "skipped", reason: "send-failed" }, undefined],
  ] as const)("%s → %j", async (code, outcome, detail) => {
    const { run, decisions, logger } = stepRun({ batch: question() });
    (run.m.sender as { sendMessage: GroupSender["sendMessage"] }).sendMessage = async () => {
      throw new TransportError(code, "send failed");
    };
    expect(await deliver(run, reply())).toMatchObject(outcome);
    expect(decisions.map((d) => [d.outcome.kind, d.detail])).toEqual([[outcome.kind, detail]]);
    expect(logger.entries.find((e) => e.event === "monitor.send-failed")).toMatchObject({ level: "warn", fields: { code, dispatchId: 2 } });
  });

  it("closed while the reply waited for its send: group-closed, nothing carried (the next run answers it)", async () => {
    const { run, m } = stepRun({ batch: question() });
    (run.m.sender as { sendMessage: GroupSender["sendMessage"] }).sendMessage = async () => {
      m.close();
      throw new TransportError("CONNECTION_LOST", "closing");
    };
    expect(await deliver(run, reply())).toEqual({ kind: "skipped", reason: "group-closed", budgetRatio: 0 });
  });

  it("a retry that finds its reply delivered already says how, and hands back what arrived since", async () => {
    const group = testGroup();
    group.memory.recordEcho({ msgId: "90", content: "Yes, green.", timestamp: T0 - 1000, metadata: null });
    const { run, sender: s } = stepRun({ batch: question(), group });
    const out = await deliver(run, reply({ maybeSent: true }), ["2"]);
    expect(out).toMatchObject({ kind: "sent", msgId: "90", sentAt: T0 - 1000, notHandled: ["2"] });
    expect(run.record.detail).toBe("delivered-before:echo");
    expect(s.sent).toEqual([]);
  });
});
