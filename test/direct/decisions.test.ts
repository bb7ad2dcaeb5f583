// The pure decisions of direct conversations: who is admitted (access.ts) and when an exchange
// ends (exchange.ts), each rule on its edge.
import { describe, expect, it } from "vitest";
import { resolveDirectSettings } from "../../src/config/schema.ts";
import { compileDirectAccess, resolveDmPolicy } from "../../src/direct/access.ts";
import { admitInbound, afterReply, deadlines, endExchange, isEndMarker, openExchange } from "../../src/direct/exchange.ts";

describe("who may DM (compileDirectAccess)", () => {
  const rules = { owner: "Owner.acp.local", humans: ["hank.acp.local"], allowFrom: ["*.friends.example"], denyFrom: ["bad.friends.example", "owner.acp.local"] };
  it.each([
    ["allowlist", "OWNER.acp.local", { admit: true, as: "owner" }],
    ["allowlist", "hank.acp.local", { admit: true, as: "listed" }],
    ["allowlist", "zoe.friends.example", { admit: true, as: "listed" }],
    ["allowlist", "bad.friends.example", { admit: false, reason: "denied" }],
    ["allowlist", "stranger.acp.local", { admit: false, reason: "not-allowed" }],
    ["pairing", "stranger.acp.local", { admit: "pairing-check" }],
    ["pairing", "bad.friends.example", { admit: false, reason: "denied" }],
    ["open", "stranger.acp.local", { admit: true, as: "open" }],
    ["open", "bad.friends.example", { admit: false, reason: "denied" }],
    ["disabled", "owner.acp.local", { admit: false, reason: "dm-disabled" }],
  ] as const)("%s: %s → %j", (policy, peer, expected) => {
    expect(compileDirectAccess({ ...rules, policy })(peer)).toEqual(expected);
  });
  it("the identity's policy, else the host's default, else allowlist", () => {
    expect(resolveDmPolicy("open", "pairing")).toBe("open");
    expect(resolveDmPolicy(undefined, "pairing")).toBe("pairing");
    expect(resolveDmPolicy(undefined)).toBe("allowlist");
  });
});

describe("when an exchange ends (exchange.ts)", () => {
  const settings = resolveDirectSettings({ maxAgentTurns: 2, idleTimeoutMs: 60_000, maxSessionMs: 600_000, reopenAfterMs: 30_000 });
  it("end markers anywhere in the text, the empty message, and an ordinary line", () => {
    expect(isEndMarker("ok, bye [END]", settings.endMarkers)).toBe(true);
    expect(isEndMarker("NO_REPLY", settings.endMarkers)).toBe(true);
    expect(isEndMarker("the end of the week", settings.endMarkers)).toBe(false);
    expect(admitInbound({ exchange: undefined, text: "  ", peerIsPerson: true, settings, now: 0 })).toMatchObject({ answer: false, reason: "peer-empty", exchange: { ended: { at: 0, reason: "peer-empty" } } });
    expect(admitInbound({ exchange: undefined, text: "hi", peerIsPerson: false, settings, now: 5 })).toEqual({ answer: true, opened: true, exchange: { startedAt: 5, lastActivityAt: 5, agentTurns: 0 } });
  });
  it("the turn cap counts replies to agents only", () => {
    let ex = openExchange(0);
    ex = afterReply({ exchange: ex, peerIsPerson: false, settings, now: 1 });
    expect(ex.ended).toBeUndefined();
    ex = afterReply({ exchange: ex, peerIsPerson: false, settings, now: 2 });
    expect(ex.ended).toEqual({ at: 2, reason: "agent-turn-cap" });
    let person = openExchange(0);
    for (let i = 1; i <= 5; i++) person = afterReply({ exchange: person, peerIsPerson: true, settings, now: i });
    expect(person).toEqual({ startedAt: 0, lastActivityAt: 5, agentTurns: 0 });
  });
  it("after an end an agent rests reopenAfterMs from its last message (each message restarts the rest); a person does not", () => {
    const ended = endExchange(openExchange(0), "our-end", 1000);
    expect(admitInbound({ exchange: ended, text: "again", peerIsPerson: false, settings, now: 30_999 })).toMatchObject({ answer: false, reason: "resting", exchange: { lastActivityAt: 30_999 } });
    const rested = admitInbound({ exchange: ended, text: "again", peerIsPerson: false, settings, now: 30_999 }).exchange;
    expect(admitInbound({ exchange: rested, text: "again", peerIsPerson: false, settings, now: 60_998 })).toMatchObject({ answer: false, reason: "resting" });
    expect(admitInbound({ exchange: rested, text: "again", peerIsPerson: false, settings, now: 60_999 })).toMatchObject({ answer: true, opened: true });
    expect(admitInbound({ exchange: ended, text: "again", peerIsPerson: true, settings, now: 1001 })).toMatchObject({ answer: true, opened: true });
  });
  it("an exchange past its idle time or length is a new one; the deadlines are the timers' due times", () => {
    const ex = { startedAt: 0, lastActivityAt: 100, agentTurns: 1 };
    expect(deadlines(ex, settings)).toEqual({ idleAt: 60_100, lengthAt: 600_000 });
    expect(admitInbound({ exchange: ex, text: "hi", peerIsPerson: false, settings, now: 60_100 })).toMatchObject({ answer: true, opened: true, exchange: { agentTurns: 0 } });
    expect(admitInbound({ exchange: ex, text: "hi", peerIsPerson: false, settings, now: 60_099 })).toMatchObject({ answer: true, opened: false, exchange: { agentTurns: 1 } });
    expect(endExchange({ ...ex, ended: { at: 5, reason: "idle" } }, "evicted", 9).ended).toEqual({ at: 5, reason: "idle" });
  });
});
