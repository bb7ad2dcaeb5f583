// Who is a human and who is an agent, per sender aid, from every source we have, in order of
// trust: our own config (`humans`, `agents`, an identity's `owner`) overrides everything; then
// what the group service reports (`get_members` entries with a type, the agent.md it read);
// then the sender's own agent.md when we fetched it. Nothing known → "unknown", never a guess.
// A sender's own word can only lower what it gets: "agent" counts, "human" does not (a bot
// would say it to skip the agent gap and the loop guard) — it stays "unknown", the claim noted.
// Pure: no I/O, no clock; the shell feeds it what the network says.
import type { ProfileType } from "../profile/agent-md.ts";
import { memberKeys, nickKey } from "../group/addressee.ts";
import { readMemberTypeWord } from "../wire/member-type.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import { ChainedNames, FixedNames, NameIndex, type LookalikeNames, type NameSource } from "../monitor/known-names.ts";

export type MemberType = "human" | "agent" | "unknown";
export type MemberTypeSource = "owner" | "config" | "service" | "profile" | "none";

export interface MemberTypeInfo {
  type: MemberType;
  source: MemberTypeSource;
  /** What the sender's own agent.md says when that is all we have and it is not taken as fact. */
  claim?: "human";
}

/**
 * A member our own config names (`humans`, `agents`, the owner): a known member. Everyone else is a
 * stranger to the budget, whatever the group service or their agent.md say — anyone can join an
 * open group, under as many aids as they like.
 */
export function isNamedByConfig(info: MemberTypeInfo): boolean {
  return info.source === "owner" || info.source === "config";
}

/**
 * Someone vouches for who the member is: our config, the owner, or the group service (which the
 * network's operator runs). A member's own agent.md vouches for nobody.
 */
export function isVouched(info: MemberTypeInfo): boolean {
  return info.type !== "unknown" && (info.source === "owner" || info.source === "config" || info.source === "service");
}

/** What the loop guard and the prompt ask. */
export interface MemberTypes {
  typeOf(aid: string): MemberTypeInfo;
  /**
   * The aids our config names (humans, agents, owner) and the ones the group service says are
   * people: look-alikes of these are flagged in prompts. The same object, updated in place.
   */
  lookalikeNames?(): LookalikeNames;
  /** Whether any member other than `selfAid` is known to be an agent (a room where agents may contend). */
  anyAgent?(selfAid: string): boolean;
}

/**
 * Who belongs to a group by its member list, as the names a line may open with: each member's
 * aid and its user part, and the name its agent.md (or the service's entry) gives. Nick keys
 * ({@link nickKey}); the set is rebuilt only when the list or a name changes.
 */
export interface MemberNames {
  memberKeysOf(groupId: string): ReadonlySet<string>;
}

/** The display name a `get_members` entry carries: `name`, `display_name`, or inside its agent_md/profile. */
export function memberNameFromServiceEntry(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  const e = entry as Record<string, unknown>;
  const nested = [e["agent_md"], e["agentmd"], e["profile"]].map((n) => (typeof n === "object" && n !== null ? (n as Record<string, unknown>)["name"] : undefined));
  const name = [e["name"], e["display_name"], ...nested].find((v): v is string => typeof v === "string" && v.trim().length > 0);
  return name?.trim();
}

const NO_KEYS: ReadonlySet<string> = new Set();

// Shared by every person our config names.
const CONFIG_HUMAN: MemberTypeInfo = Object.freeze({ type: "human", source: "config" });
const CONFIG_AGENT: MemberTypeInfo = Object.freeze({ type: "agent", source: "config" });
const OWNER: MemberTypeInfo = Object.freeze({ type: "human", source: "owner" });
const UNKNOWN: MemberTypeInfo = Object.freeze({ type: "unknown", source: "none" });
const AGENT_BY_PROFILE: MemberTypeInfo = Object.freeze({ type: "agent", source: "profile" });
// Only our config and the group service can make a member a person: its own claim grants nothing.
const CLAIMS_HUMAN: MemberTypeInfo = Object.freeze({ type: "unknown", source: "profile", claim: "human" });

/**
 * Reads a member type from whatever a service entry or profile says: a human word is a person, a
 * role or nothing is unknown, anything else — `agent`, `bot`, or the agent's framework such as
 * evol's `openclaw` — is an agent (as the official SDK's UI reads `agent_type`).
 */
export function normalizeMemberType(value: unknown): MemberType {
  return readMemberTypeWord(value);
}

/**
 * The member type a `get_members` entry carries, if any: `agent_type` (what the official SDK's UI
 * reads), `type`, `member_type`, a boolean `human`, or the type inside an `agent_md` / `agentmd` / `profile` object the
 * service attached.
 * Undefined when the entry has no aid; type "unknown" when it says nothing usable.
 */
export function memberTypeFromServiceEntry(entry: unknown): { aid: string; type: MemberType } | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  const e = entry as Record<string, unknown>;
  const aid = [e["agent_id"], e["aid"], e["id"], e["member"]].find((v): v is string => typeof v === "string" && v.length > 0);
  if (aid === undefined) return undefined;
  for (const key of ["agent_type", "type", "member_type"]) {
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
 * People our config names without listing them: a replay's config names every sender of its log
 * as a person, and a table of them would grow with the log. `has` answers for an aid (lower-cased),
 * `names` gives them for look-alike tags, in the order they count.
 */
export interface UnlistedPeople {
  has(lowerAid: string): boolean;
  names: NameSource;
}

/**
 * One identity's directory. Config and owner are fixed at construction; service and profile
 * facts are recorded as they arrive and may change (a member republishes its profile).
 */
export class MemberDirectory implements MemberTypes, MemberNames {
  readonly #config = new Map<string, MemberTypeInfo>();
  /** Per group: the aids of its member list (lower-cased), as the service last reported it. */
  readonly #groups = new Map<string, Set<string>>();
  /** Per aid (lower-cased): the name its agent.md or the service gave. */
  readonly #names: BoundedMap<string, string>;
  /** Per group: the nick keys of its members; dropped when a list or a name changes. */
  readonly #keys = new Map<string, ReadonlySet<string>>();
  /** Bounded: a group of strangers churning ids cannot grow these without limit (oldest written first out). */
  readonly #service: BoundedMap<string, MemberType>;
  readonly #profile: BoundedMap<string, MemberType>;
  readonly #maxEntries: number;
  /** The config's names and the service's people, for look-alike tags: kept in step with #config and #service. */
  readonly #lookalikes: { readonly config: NameSource; readonly persons: NameIndex };
  /** The config's agents (a few): {@link anyAgent} never walks the config's people. */
  readonly #configAgents: readonly string[];
  /** {@link anyAgent} per asking aid, until the service's or a profile's word changes. */
  readonly #anyAgent = new Map<string, boolean>();
  /** People our config names without listing them (after #config: the agents and the owner come first). */
  readonly #people: UnlistedPeople | undefined;

  /** `people`: people our config names without listing them (see {@link UnlistedPeople}); `humans` lists the others. */
  constructor(p: { humans?: readonly string[]; agents?: readonly string[]; owner?: string | undefined; people?: UnlistedPeople; maxEntries?: number } = {}) {
    for (const a of p.agents ?? []) this.#config.set(a.toLowerCase(), CONFIG_AGENT);
    for (const h of p.humans ?? []) this.#config.set(h.toLowerCase(), CONFIG_HUMAN);
    // The owner is always human, whatever else is configured (config load rejects the conflict).
    if (p.owner) this.#config.set(p.owner.toLowerCase(), OWNER);
    const maxEntries = p.maxEntries ?? 10_000;
    this.#maxEntries = maxEntries;
    this.#names = new BoundedMap(maxEntries);
    this.#service = new BoundedMap(maxEntries);
    this.#profile = new BoundedMap(maxEntries);
    this.#people = p.people;
    const config = new FixedNames(this.#config);
    this.#lookalikes = Object.freeze({ config: p.people ? new ChainedNames([config, p.people.names]) : config, persons: new NameIndex() });
    this.#configAgents = [...this.#config].flatMap(([aid, info]) => (info.type === "agent" ? [aid] : []));
  }

  lookalikeNames(): LookalikeNames {
    return this.#lookalikes;
  }

  /** The aids the group service says are people, oldest written first. */
  servicePersons(): string[] {
    return [...this.#service].flatMap(([aid, type]) => (type === "human" ? [aid] : []));
  }

  typeOf(aid: string): MemberTypeInfo {
    const key = aid.toLowerCase();
    const fixed = this.#config.get(key);
    if (fixed) return fixed;
    if (this.#people?.has(key)) return CONFIG_HUMAN;
    const service = this.#service.get(key);
    if (service) return { type: service, source: "service" };
    const profile = this.#profile.get(key);
    if (profile) return profile === "human" ? CLAIMS_HUMAN : AGENT_BY_PROFILE;
    return UNKNOWN;
  }

  anyAgent(selfAid: string): boolean {
    const self = selfAid.toLowerCase();
    let any = this.#anyAgent.get(self);
    if (any === undefined) {
      any = this.#configAgents.some((aid) => aid !== self) || [this.#service, this.#profile].some((map) => [...map].some(([aid, type]) => type === "agent" && aid !== self && this.#config.get(aid)?.type !== "human" && this.#people?.has(aid) !== true));
      // A handful of identities ask: the bound only stops a caller that makes up aids.
      if (this.#anyAgent.size >= 64) this.#anyAgent.clear();
      this.#anyAgent.set(self, any);
    }
    return any;
  }

  /** Every member with a known type (the host's directory lists them), by precedence; not the {@link UnlistedPeople}. */
  known(): Array<{ aid: string; type: MemberType }> {
    const out = new Map<string, MemberType>();
    // A member's own "human" is an unverified claim: listed as unknown.
    for (const [aid, type] of this.#profile) out.set(aid, type === "human" ? "unknown" : type);
    for (const [aid, type] of this.#service) out.set(aid, type);
    for (const [aid, info] of this.#config) out.set(aid, info.type);
    return [...out].map(([aid, type]) => ({ aid, type }));
  }

  /** A type the group service reported (a `get_members` entry, its reading of the member's agent.md). */
  recordService(aid: string, type: MemberType): void {
    this.#record(this.#service, aid, type);
  }

  /**
   * Every typed entry of a `get_members` answer; returns how many carried a type. With the
   * group's id, the answer is also that group's member list (it replaces the one before).
   */
  recordServiceMembers(entries: readonly unknown[], groupId?: string): number {
    let typed = 0;
    const aids = new Set<string>();
    for (const entry of entries) {
      const m = memberTypeFromServiceEntry(entry);
      if (!m) continue;
      aids.add(m.aid.toLowerCase());
      const name = memberNameFromServiceEntry(entry);
      if (name !== undefined) this.#recordName(m.aid, name);
      if (m.type !== "unknown") {
        this.recordService(m.aid, m.type);
        typed++;
      }
    }
    if (groupId !== undefined) {
      this.#groups.set(groupId, aids);
      this.#keys.delete(groupId);
    }
    return typed;
  }

  /** The type (and name, when it has one) a sender's own agent.md declares, when we fetched it ("human" is kept as an unverified claim). */
  recordProfile(aid: string, type: ProfileType, name?: string): void {
    this.#record(this.#profile, aid, type);
    if (name !== undefined && name.trim() !== "") this.#recordName(aid, name.trim());
  }

  memberKeysOf(groupId: string): ReadonlySet<string> {
    const cached = this.#keys.get(groupId);
    if (cached) return cached;
    const aids = this.#groups.get(groupId);
    if (!aids) return NO_KEYS;
    const keys = new Set<string>();
    for (const aid of aids) {
      for (const k of memberKeys(aid)) keys.add(k);
      const name = this.#names.get(aid);
      if (name !== undefined) keys.add(nickKey(name));
    }
    keys.delete("");
    this.#keys.set(groupId, keys);
    return keys;
  }

  #recordName(aid: string, name: string): void {
    const key = aid.toLowerCase();
    if (this.#names.get(key) === name) return;
    this.#names.set(key, name);
    this.#keys.clear();
  }

  /** True when nothing but our config could answer for `aid` yet: worth fetching its agent.md. */
  needsLookup(aid: string): boolean {
    const key = aid.toLowerCase();
    return !this.#config.has(key) && this.#people?.has(key) !== true && !this.#service.has(key) && !this.#profile.has(key);
  }

  #record(map: BoundedMap<string, MemberType>, aid: string, type: MemberType): void {
    const key = aid.toLowerCase();
    this.#anyAgent.clear();
    if (map === this.#service) this.#notePerson(key, type);
    // "unknown" from a source erases what it said before; it never erases another source.
    if (type === "unknown") {
      map.delete(key);
      return;
    }
    map.set(key, type);
  }

  /**
   * Keeps the look-alike persons in step with what #service is about to hold: in its order (a
   * write makes an aid the newest), without the entry its bound is about to drop.
   */
  #notePerson(key: string, type: MemberType): void {
    const persons = this.#lookalikes.persons;
    if (type !== "unknown" && !this.#service.has(key) && this.#service.size >= this.#maxEntries) {
      for (const [oldest, oldType] of this.#service) {
        if (oldType === "human") persons.delete(oldest);
        break;
      }
    }
    persons.delete(key);
    if (type === "human") persons.add(key);
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
