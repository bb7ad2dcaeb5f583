import { describe, expect, it } from "vitest";
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
