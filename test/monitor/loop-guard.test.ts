import { describe, expect, it } from "vitest";
import { MemberDirectory } from "../../src/members/member-types.ts";
import { buildHumanSet, checkLoopGuard, isHumanSender, nextAgentChain } from "../../src/monitor/loop-guard.ts";

const humans = buildHumanSet(["Dana.agentcp.io"], "carol.agentcp.io");
const agents = [{ sender: "bob.agentcp.io" }, { sender: "eve.agentcp.io" }];

describe("loop guard", () => {
  it("treats configured humans and the owner as human, case-insensitively; everyone else is an agent", () => {
    expect(isHumanSender("dana.agentcp.io", humans)).toBe(true);
    expect(isHumanSender("carol.agentcp.io", humans)).toBe(true);
    expect(isHumanSender("bob.agentcp.io", humans)).toBe(false);
  });

  it("allows agent-only batches below the limit and blocks at it", () => {
    expect(checkLoopGuard({ agentChain: 5, maxAgentChain: 6, messages: agents, humans })).toEqual({ ok: true, hasHuman: false, agentChain: 5 });
    expect(checkLoopGuard({ agentChain: 6, maxAgentChain: 6, messages: agents, humans })).toEqual({
      ok: false,
      reason: "bot-loop-guard",
      hasHuman: false,
      agentChain: 6,
    });
  });

  it("a human message resets the chain and goes through", () => {
    expect(checkLoopGuard({ agentChain: 9, maxAgentChain: 6, messages: [...agents, { sender: "carol.agentcp.io" }], humans })).toEqual({
      ok: true,
      hasHuman: true,
      agentChain: 0,
    });
  });

  it("counts our replies to agent-only batches: six exchanges, then silence", () => {
    let chain = 0;
    const outcomes: boolean[] = [];
    for (let i = 0; i < 8; i++) {
      const g = checkLoopGuard({ agentChain: chain, maxAgentChain: 6, messages: agents, humans });
      outcomes.push(g.ok);
      if (g.ok) chain = nextAgentChain(chain, g.hasHuman);
    }
    expect(outcomes).toEqual([true, true, true, true, true, true, false, false]);
    expect(chain).toBe(6);
    expect(nextAgentChain(6, true)).toBe(0);
  });
});

describe("loop guard with member types", () => {
  const dir = () => new MemberDirectory({ humans: [], owner: "carol.agentcp.io" });

  it("a stranger known as an agent from its agent.md is an agent: the chain stops at the limit without any config", () => {
    const d = dir();
    d.recordProfile("stranger.agentcp.io", "agent");
    const stranger = [{ sender: "stranger.agentcp.io" }];
    expect(checkLoopGuard({ agentChain: 6, maxAgentChain: 6, messages: stranger, humans: d })).toMatchObject({ ok: false, reason: "bot-loop-guard" });
  });

  it("a stranger the group service reports as human resets the chain", () => {
    const d = dir();
    d.recordService("dave.agentcp.io", "human");
    expect(checkLoopGuard({ agentChain: 9, maxAgentChain: 6, messages: [{ sender: "dave.agentcp.io" }], humans: d })).toEqual({ ok: true, hasHuman: true, agentChain: 0 });
    expect(isHumanSender("dave.agentcp.io", d)).toBe(true);
  });

  it("a sender of unknown type does not reset the chain (it may be an agent)", () => {
    expect(checkLoopGuard({ agentChain: 6, maxAgentChain: 6, messages: [{ sender: "nobody.agentcp.io" }], humans: dir() })).toMatchObject({ ok: false });
  });
});
