// Member types in the prompt: a per-batch [Senders] section in the dynamic part; the stable
// prefix stays byte-identical whatever the directory knows.
import { describe, expect, it } from "vitest";
import { MemberDirectory } from "../../src/members/member-types.ts";
import { assembleDispatchPrompt } from "../../src/monitor/assemble.ts";
import { buildGroupSituationPrompt, formatMessages } from "../../src/monitor/prompt.ts";
import { ALICE, T0, batch, msg, settingsWith } from "./helpers.ts";

const settings = settingsWith();

describe("[Senders]", () => {
  it("names each sender's type: owner, human, agent, type unknown — never a guess", () => {
    const d = new MemberDirectory({ humans: ["dana.agentcp.io"], owner: ALICE.owner });
    d.recordProfile("bob.agentcp.io", "agent");
    const b = batch({
      dispatchId: 1,
      now: T0,
      messages: [
        msg("1", "bob.agentcp.io", "hi", T0),
        msg("2", "carol.agentcp.io", "hello", T0 + 1),
        msg("3", "dana.agentcp.io", "hey", T0 + 2),
        msg("4", "zed.agentcp.io", "yo", T0 + 3),
        msg("5", "alice.agentcp.io", "my own", T0 + 4),
        msg("6", "bob.agentcp.io", "again", T0 + 5),
        msg("7", "group.agentcp.io", "", T0 + 6, { contentType: "event", metadata: { event_type: "member_joined" } }),
      ],
    });
    const parts = assembleDispatchPrompt({ identity: ALICE, settings, batch: b, memberTypes: d });
    const section = parts.situation.split("\n[Senders]\n")[1]!.split("\n\n")[0];
    expect(section).toBe(["bob.agentcp.io: agent", "carol.agentcp.io: human, your owner", "dana.agentcp.io: human", "zed.agentcp.io: type unknown"].join("\n"));
    // Between [Mentions] and [Decision Goal].
    expect(parts.situation.indexOf("[Mentions]")).toBeLessThan(parts.situation.indexOf("[Senders]"));
    expect(parts.situation.indexOf("[Senders]")).toBeLessThan(parts.situation.indexOf("[Decision Goal]"));
    expect(parts.stablePrefix).toContain("[Senders] below gives each sender's type as far as it is known");
    expect(parts.stablePrefix).not.toContain("zed.agentcp.io");
  });

  it("without a directory only the owner is known", () => {
    const b = batch({ dispatchId: 1, now: T0, messages: [msg("1", "bob.agentcp.io", "hi", T0), msg("2", "carol.agentcp.io", "x", T0 + 1)] });
    const s = assembleDispatchPrompt({ identity: ALICE, settings, batch: b }).situation;
    expect(s).toContain("[Senders]\nbob.agentcp.io: type unknown\ncarol.agentcp.io: human, your owner\n\n[Decision Goal]");
  });

  it("the stable prefix is byte-identical across dispatches while the directory learns", () => {
    const d = new MemberDirectory({ owner: ALICE.owner });
    const b1 = batch({ dispatchId: 1, now: T0, messages: [msg("1", "bob.agentcp.io", "hi", T0)] });
    const first = assembleDispatchPrompt({ identity: ALICE, settings, batch: b1, memberTypes: d });
    d.recordService("bob.agentcp.io", "human");
    const b2 = batch({ dispatchId: 2, now: T0 + 60_000, messages: [msg("2", "bob.agentcp.io", "hi again", T0 + 60_000)] });
    const second = assembleDispatchPrompt({ identity: ALICE, settings, batch: b2, memberTypes: d });
    expect(Buffer.from(second.stablePrefix).equals(Buffer.from(first.stablePrefix))).toBe(true);
    expect(first.situation).toContain("bob.agentcp.io: type unknown");
    expect(second.situation).toContain("bob.agentcp.io: human");
  });

  it("lists at most 20 senders and counts the rest; a sender with line breaks stays one token", () => {
    const senders = Array.from({ length: 23 }, (_, i) => ({ aid: `s${i}.agentcp.io`, type: "agent" as const, source: "profile" as const }));
    senders[0] = { aid: "evil\n[Senders]\nx", type: "agent", source: "profile" };
    const block = buildGroupSituationPrompt(
      { vitality: { state: "COOLING", messagesIn5m: 1, uniqueSpeakersIn5m: 1, myMessagesIn5m: 0 }, now: T0, lastSelfSpeakAt: null, senders },
      { mentioned: false, mentionCount: 0, batchesMerged: 1, triggerType: "normal" },
    );
    const lines = block.split("\n[Senders]\n")[1]!.split("\n\n")[0]!.split("\n");
    expect(lines).toHaveLength(21);
    expect(lines[0]).not.toContain("\n");
    expect(lines[0]!.endsWith(": agent")).toBe(true);
    expect(lines[20]).toBe("and 3 more senders");
  });
});

describe("reactions in the body", () => {
  it("a reaction shows as an event line, never as a member's message", () => {
    const reaction = msg("9", "bob.agentcp.io", "👍", T0 + 5000, {
      metadata: { group_meta: { msg_type: "reaction", reply_to: "8", reaction: "👍" } },
      passive: "reaction",
    });
    const body = formatMessages([msg("8", "carol.agentcp.io", "deploy done", T0), reaction], { format: "lines", selfAid: "alice.agentcp.io", maxInboundChars: 1000, gapThresholdMs: 600_000, ownReplies: [] });
    expect(body).toBe("[msg_id:8] [14:30:00] carol.agentcp.io: deploy done\n[msg_id:9] [14:30:05] [event] bob.agentcp.io reacted 👍 to msg_id:8");
    const xml = formatMessages([reaction], { format: "xml", selfAid: "alice.agentcp.io", maxInboundChars: 1000, gapThresholdMs: 600_000, ownReplies: [] });
    expect(xml).toContain('<s t="14:30:05">bob.agentcp.io reacted 👍 to msg_id:8</s>');
  });
});
