// Who is a human and who is an agent, per sender aid, from every source we have, in order of
// trust: our own config (`humans`, `agents`, an identity's `owner`) overrides everything; then
// what the group service reports (`get_members` entries with a type, the agent.md it read);
// then the sender's own agent.md when we fetched it. Nothing known → "unknown", never a guess.
// Pure: no I/O, no clock; the shell feeds it what the network says.
import type { ProfileType } from "../profile/agent-md.ts";

export type MemberType = "human" | "agent" | "unknown";
export type MemberTypeSource = "owner" | "config" | "service" | "profile" | "none";

export interface MemberTypeInfo {
  type: MemberType;
  source: MemberTypeSource;
}

/** What the loop guard and the prompt ask. */
export interface MemberTypes {
  typeOf(aid: string): MemberTypeInfo;
}

const UNKNOWN: MemberTypeInfo = Object.freeze({ type: "unknown", source: "none" });

/** Reads a member type from whatever shape a service entry or profile uses; anything else is unknown. */
export function normalizeMemberType(value: unknown): MemberType {
  if (typeof value !== "string") return "unknown";
  const v = value.trim().toLowerCase();
  if (v === "human" || v === "user" || v === "person") return "human";
  if (v === "agent" || v === "bot" || v === "ai") return "agent";
  return "unknown";
}

/**
 * The member type a `get_members` entry carries, if any: `type`, `member_type`, `agent_type`,
 * a boolean `human`, or the type inside an `agent_md` / `agentmd` / `profile` object the
 * service attached.
 * Undefined when the entry has no aid; type "unknown" when it says nothing usable.
 */
export function memberTypeFromServiceEntry(entry: unknown): { aid: string; type: MemberType } | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  const e = entry as Record<string, unknown>;
  const aid = [e["agent_id"], e["aid"], e["id"], e["member"]].find((v): v is string => typeof v === "string" && v.length > 0);
  if (aid === undefined) return undefined;
  for (const key of ["type", "member_type", "agent_type"]) {
    const t = normalizeMemberType(e[key]);
    if (t !== "unknown") return { aid, type: t };
  }
  // The local group server marks members with a boolean `human`.
  if (typeof e["human"] === "boolean") return { aid, type: e["human"] ? "human" : "agent" };
  for (const key of ["agent_md", "agentmd", "profile"]) {
    const nested = e[key];
    if (typeof nested === "object" && nested !== null) {
      const t = normalizeMemberType((nested as Record<string, unknown>)["type"]);
      if (t !== "unknown") return { aid, type: t };
    }
  }
  return { aid, type: "unknown" };
}

/**
 * One identity's directory. Config and owner are fixed at construction; service and profile
 * facts are recorded as they arrive and may change (a member republishes its profile).
 */
export class MemberDirectory implements MemberTypes {
  readonly #config = new Map<string, MemberTypeInfo>();
  readonly #service = new Map<string, MemberType>();
  readonly #profile = new Map<string, MemberType>();
  readonly #maxEntries: number;

  constructor(p: { humans?: readonly string[]; agents?: readonly string[]; owner?: string | undefined; maxEntries?: number } = {}) {
    for (const a of p.agents ?? []) this.#config.set(a.toLowerCase(), { type: "agent", source: "config" });
    for (const h of p.humans ?? []) this.#config.set(h.toLowerCase(), { type: "human", source: "config" });
    // The owner is always human, whatever else is configured (config load rejects the conflict).
    if (p.owner) this.#config.set(p.owner.toLowerCase(), { type: "human", source: "owner" });
    this.#maxEntries = p.maxEntries ?? 10_000;
  }

  typeOf(aid: string): MemberTypeInfo {
    const key = aid.toLowerCase();
    const fixed = this.#config.get(key);
    if (fixed) return fixed;
    const service = this.#service.get(key);
    if (service) return { type: service, source: "service" };
    const profile = this.#profile.get(key);
    if (profile) return { type: profile, source: "profile" };
    return UNKNOWN;
  }

  /** Every member with a known type (the host's directory lists them), by precedence. */
  known(): Array<{ aid: string; type: MemberType }> {
    const out = new Map<string, MemberType>();
    for (const [aid, type] of this.#profile) out.set(aid, type);
    for (const [aid, type] of this.#service) out.set(aid, type);
    for (const [aid, info] of this.#config) out.set(aid, info.type);
    return [...out].map(([aid, type]) => ({ aid, type }));
  }

  /** A type the group service reported (a `get_members` entry, its reading of the member's agent.md). */
  recordService(aid: string, type: MemberType): void {
    this.#record(this.#service, aid, type);
  }

  /** Every typed entry of a `get_members` answer; returns how many carried a type. */
  recordServiceMembers(entries: readonly unknown[]): number {
    let typed = 0;
    for (const entry of entries) {
      const m = memberTypeFromServiceEntry(entry);
      if (m && m.type !== "unknown") {
        this.recordService(m.aid, m.type);
        typed++;
      }
    }
    return typed;
  }

  /** The type a sender's own agent.md declares, when we fetched it. */
  recordProfile(aid: string, type: ProfileType): void {
    this.#record(this.#profile, aid, type);
  }

  /** True when nothing but our config could answer for `aid` yet: worth fetching its agent.md. */
  needsLookup(aid: string): boolean {
    const key = aid.toLowerCase();
    return !this.#config.has(key) && !this.#service.has(key) && !this.#profile.has(key);
  }

  #record(map: Map<string, MemberType>, aid: string, type: MemberType): void {
    const key = aid.toLowerCase();
    // "unknown" from a source erases what it said before; it never erases another source.
    if (type === "unknown") {
      map.delete(key);
      return;
    }
    map.delete(key);
    map.set(key, type);
    // Bounded: a group of strangers churning ids cannot grow this without limit (oldest first out).
    if (map.size > this.#maxEntries) map.delete(map.keys().next().value as string);
  }
}

/**
 * The senders of `messages` other than `selfAid` (and other than messages `include` rejects), in
 * first-seen order, with their types. Per prompt build: most batches repeat a few senders, so
 * an exact-string set answers repeats before any lower-casing.
 */
export function senderTypes<M extends { sender: string }>(
  messages: readonly M[],
  selfAid: string,
  types: MemberTypes,
  include?: (m: M) => boolean,
): Array<{ aid: string } & MemberTypeInfo> {
  const self = selfAid.toLowerCase();
  const exact = new Set<string>();
  const seen = new Set<string>();
  const out: Array<{ aid: string } & MemberTypeInfo> = [];
  for (const m of messages) {
    if (exact.has(m.sender) || (include && !include(m))) continue;
    exact.add(m.sender);
    const key = m.sender.toLowerCase();
    if (key === self || seen.has(key)) continue;
    seen.add(key);
    out.push({ aid: m.sender, ...types.typeOf(m.sender) });
  }
  return out;
}
