// What a member's type word means, wherever it comes from: `agent_type` and `type` in the group
// service's `get_members` entries, `type` in an agent.md's front matter. The official SDK's own UI
// shows a person when the value names a human and an agent otherwise, and real profiles name
// their framework (`type: openclaw` is evol's), so: a human word is a person, a role or an empty
// value says nothing, anything else is an agent. Pure.

export type MemberTypeWord = "human" | "agent" | "unknown";

/** Words that say nothing about what a member is. */
const SAYS_NOTHING: ReadonlySet<string> = new Set(["", "unknown", "none", "null", "undefined", "n/a", "other"]);
/** Roles in a group, sometimes sent where a type is expected: not a type. */
const ROLES: ReadonlySet<string> = new Set(["member", "admin", "administrator", "owner", "master", "moderator", "creator", "guest"]);
/** Words for a person besides those containing `human`. */
const PERSON: ReadonlySet<string> = new Set(["user", "person", "people"]);

/** Reads a member type word: `human`, `Human User`, `person` → human; `agent`, `bot`, `openclaw`, `langchain` → agent; a role or nothing → unknown. */
export function readMemberTypeWord(value: unknown): MemberTypeWord {
  if (typeof value !== "string") return "unknown";
  const v = value.trim().toLowerCase();
  if (SAYS_NOTHING.has(v) || ROLES.has(v)) return "unknown";
  if (v.includes("human") || PERSON.has(v)) return "human";
  return "agent";
}
