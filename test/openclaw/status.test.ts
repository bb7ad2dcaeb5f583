// The account status the host shows (channels status): fed by the runtime's observers.
import { describe, expect, it } from "vitest";
import { createAccountLiveStatus } from "../../src/openclaw/status.ts";
import { listAcpGroupGroups, listAcpGroupPeers, normalizeAcpGroupTarget } from "../../src/openclaw/admin.ts";
import type { DispatchDecision } from "../../src/monitor/decision.ts";

const decision = (over: Partial<DispatchDecision>): DispatchDecision =>
  ({ identityId: "bot", groupId: "g1", dispatchId: 1, attempt: 0, trigger: "mention", at: 1000, messageIds: [], addressing: [], vitality: { state: "COOLING", messagesIn5m: 0, uniqueSpeakersIn5m: 0, myMessagesIn5m: 0, updatedAt: 0 }, mentionInfo: { mentioned: true, mentionCount: 1, batchesMerged: 1, triggerType: "mention" }, replyType: null, budgetRatio: 0, budgetPool: "addressed", modelCalls: 0, tokens: 0, delayMs: 0, agentChain: 0, outcome: { kind: "skipped", reason: "silent" }, ...over }) as DispatchDecision;

describe("account live status", () => {
  it("signed in, per group: session, last in and out, last skip, refused and over-share counts", () => {
    let now = 5000;
    const s = createAccountLiveStatus({ aid: "bot.acp.local", now: () => now });
    s.attach({ groups: ["g1", "g2"], connectionFor: (g) => ({ status: g === "g1" ? "open" : "reconnecting" }) });
    expect(s.snapshot()).toMatchObject({ signedIn: false, lastInboundAt: null, lastOutboundAt: null });
    s.markSignedIn();
    s.observers.onMessages("g1", [{ msgId: "1", groupId: "g1", sender: "a", content: "x", contentType: "text", timestamp: 1, metadata: null }]);
    now = 6000;
    s.observers.onDecision(decision({ outcome: { kind: "sent", text: "hi", replyType: "short", sentAt: 6100 } }));
    s.observers.onDecision(decision({ at: 7000, outcome: { kind: "skipped", reason: "sender-over-share" }, detail: "m.acp.local addressed:5m:messages 10/10" }));
    s.observers.onGroupEvent("g2", { type: "dropped", msgId: "9", sender: "spam", reason: "refused-sender", stage: "arrival", atLocal: 0 });
    expect(s.snapshot()).toEqual({
      aid: "bot.acp.local",
      signedIn: true,
      signedInAt: 5000,
      lastError: null,
      lastInboundAt: 5000,
      lastOutboundAt: 6100,
      // This run does not say where its agent.md stands.
      profile: null,
      groups: [
        { groupId: "g1", session: "open", lastInboundAt: 5000, lastOutboundAt: 6100, lastSkip: { at: 7000, reason: "sender-over-share", detail: "m.acp.local addressed:5m:messages 10/10" }, refused: 0, overShare: 1 },
        { groupId: "g2", session: "reconnecting", lastInboundAt: null, lastOutboundAt: null, lastSkip: null, refused: 1, overShare: 0 },
      ],
    });
    s.markError(new Error("refused: certificate expired"));
    expect(s.snapshot().lastError).toBe("refused: certificate expired");
  });
});

describe("directory and targets", () => {
  const cfg = { channels: { "acp-group": { humans: ["h.acp.local"], agents: ["a.acp.local"], identities: { bot: { aid: "bot.acp.local", owner: "me.acp.local" } }, groups: { "*": {}, lobby: { subject: "The lobby" }, lab: {} } } } };
  it("says whether the identity's agent.md is published yet, as the running identity sees it now", () => {
    const s = createAccountLiveStatus({ aid: "bot.acp.local", now: () => 0 });
    expect(s.snapshot().profile).toBeNull();
    let profileState = "pending";
    s.attach({
      groups: ["g1"],
      get profileState() {
        return profileState;
      },
    });
    expect(s.snapshot().profile).toBe("pending");
    profileState = "published";
    expect(s.snapshot().profile).toBe("published");
  });

  it("groups as group:<id> targets with their subject; peers with their member type", () => {
    expect(listAcpGroupGroups({ cfg, accountId: "bot", running: ["lab", "extra"] })).toEqual([
      { kind: "group", id: "group:lobby", name: "The lobby" },
      { kind: "group", id: "group:lab" },
      { kind: "group", id: "group:extra" },
    ]);
    expect(listAcpGroupGroups({ cfg, accountId: "bot", query: "lob" })).toEqual([{ kind: "group", id: "group:lobby", name: "The lobby" }]);
    expect(listAcpGroupPeers({ cfg, accountId: "bot", known: [{ aid: "x.acp.local", type: "agent" }, { aid: "bot.acp.local", type: "agent" }] }).map((e) => e.name)).toEqual([
      "x.acp.local (agent)",
      "a.acp.local (agent)",
      "h.acp.local (human)",
      "me.acp.local (human, owner)",
    ]);
  });
  it("acp-group:<group>, group:<group> and a bare id normalise to group:<group>; empty or spaced ids do not", () => {
    expect(normalizeAcpGroupTarget("acp-group:lobby")).toBe("group:lobby");
    expect(normalizeAcpGroupTarget("group:lobby")).toBe("group:lobby");
    expect(normalizeAcpGroupTarget(" lobby ")).toBe("group:lobby");
    expect(normalizeAcpGroupTarget("acp-group:")).toBeUndefined();
    expect(normalizeAcpGroupTarget("two words")).toBeUndefined();
  });
});
