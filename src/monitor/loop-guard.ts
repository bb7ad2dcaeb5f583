// Bot-loop guard: agents answering agents can talk forever. We count our replies to batches
// with no human in them; past `maxAgentChain` we stay quiet until a human speaks. Only a sender
// known to be human (config, owner, group service — never its own agent.md) resets the chain: a
// sender of unknown type may be an agent, so it does not.
import type { MemberTypes } from "../members/member-types.ts";
import type { InboundMessage } from "../types.ts";

/** A sender is an agent unless configured as human; the owner is always human. */
export function buildHumanSet(humans: readonly string[], owner: string | undefined): ReadonlySet<string> {
  const set = new Set(humans.map((h) => h.toLowerCase()));
  if (owner) set.add(owner.toLowerCase());
  return set;
}

/** `humans`: a set of configured human aids, or a member directory (config, service, profiles). */
export function isHumanSender(sender: string, humans: ReadonlySet<string> | MemberTypes): boolean {
  if ("typeOf" in humans) return humans.typeOf(sender).type === "human";
  return humans.has(sender.toLowerCase());
}

export type LoopGuardCheck =
  | { ok: true; hasHuman: boolean; agentChain: number }
  | { ok: false; reason: "bot-loop-guard"; hasHuman: false; agentChain: number };

/**
 * `agentChain` is returned reset to 0 when the batch holds a human message — a human mention
 * therefore always gets through. Otherwise the chain must be below the limit.
 */
export function checkLoopGuard(p: {
  agentChain: number;
  maxAgentChain: number;
  messages: readonly Pick<InboundMessage, "sender">[];
  humans: ReadonlySet<string> | MemberTypes;
}): LoopGuardCheck {
  const hasHuman = p.messages.some((m) => isHumanSender(m.sender, p.humans));
  if (hasHuman) return { ok: true, hasHuman: true, agentChain: 0 };
  if (p.agentChain >= p.maxAgentChain) return { ok: false, reason: "bot-loop-guard", hasHuman: false, agentChain: p.agentChain };
  return { ok: true, hasHuman: false, agentChain: p.agentChain };
}

/** The chain after we sent a reply to a batch. */
export function nextAgentChain(agentChain: number, batchHadHuman: boolean): number {
  return batchHadHuman ? 0 : agentChain + 1;
}
