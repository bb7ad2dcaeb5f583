// Why a dispatch ended without a reply: every reason the monitor gives, each with when it happens.
// Part of the shared base (types.ts re-exports it); docs/behaviour.md has a row for each.
export type SkipReason =
  | "silent"
  | "over-budget"
  | "duplicate-of-recent-reply"
  | "duplicate-of-other-member"
  | "bot-loop-guard"
  | "newer-mention"
  | "empty-after-trim"
  | "send-failed"
  | "backend-failed"
  | "group-closed"
  | "two-phase-declined"
  /** Our own reply to every message of the batch came back meanwhile (after a restart). */
  | "already-answered"
  /** Every open question of an unaddressed batch was answered by someone else first (src/monitor/floor.ts). */
  | "answered-by-other"
  /** In a room of agents, an unmentioned batch whose questions were all put to other members by name. */
  | "addressed-to-other"
  /** An unaddressed batch held only agents' answers to others: an answer is not answered. */
  | "agent-answer"
  /** Everyone who addressed us in the batch has used their share of the addressed allowance. */
  | "sender-over-share"
  /** Only strangers addressed us, and strangers together have used their class's share of the addressed allowance. */
  | "strangers-over-share"
  /** The conversation ended while the reply was written (a direct exchange closed by the peer's end marker or a limit). */
  | "conversation-ended"
  /** In a room of agents, an unaddressed batch whose open questions are left to people for the grace period (then orphaned). */
  | "left-to-people"
  /** An orphaned question past its freshness, or one we answered already. */
  | "orphan-stale"
  /** An orphaned question while agents already wrote one of the room's last lines (orphans.maxAgentShare). */
  | "agents-share";
