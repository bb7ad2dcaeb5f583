// An agent's place in the queue for one question of a room: every agent computes its own from its
// aid and the question's msg id, and nobody needs the others' to agree on an order. The floor
// (src/monitor/floor.ts) waits this share of the send delay; the orphan watch (src/group/orphans.ts)
// this share of its spread.
/**
 * This agent's place in the queue for one question, in [0, 1): FNV-1a of aid and msg id. Every
 * agent computes its own; nobody needs the others' to agree on an order.
 */
export function floorRank(aid: string, msgId: string): number {
  let h = 0x811c9dc5;
  const s = `${aid.toLowerCase()}\u0000${msgId}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // One extra avalanche round: aids that differ in the last character still spread over [0, 1).
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) / 4294967296;
}

