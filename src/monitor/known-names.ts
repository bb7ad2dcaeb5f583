// Whom a sender may not pass for, and how a name that imitates one is shown ("sarn(≈sam)"). The
// names come in layers by trust: ourselves and our owner, the members our config names, the
// people the group service names. The directory keeps its layers and updates them as the service
// reports people (src/members/member-types.ts), so a prompt build costs what its batch does, not
// what the directory holds. Pure: no I/O, no clock.
import { lookalikeKey } from "./confusables.ts";
import { cleanSenderName, sanitizeSender, SENDER_CACHE_LIMIT, withTag, type NameDisplay } from "./sanitize.ts";
import { BoundedMap } from "../util/bounded-map.ts";

// Look-alike keys of the names a process meets: a few hundred ns each, and names repeat.
const keyCache = new BoundedMap<string, string>(SENDER_CACHE_LIMIT);
function keyOf(name: string): string {
  const head = name.length > 256 ? name.slice(0, 256) : name;
  let key = keyCache.get(head);
  if (key === undefined) {
    key = lookalikeKey(head);
    keyCache.set(head, key);
  }
  return key;
}

/** `sam` of `sam.acp.local`; a bare nick is its own. */
function userPart(name: string): string {
  const dot = name.indexOf(".");
  return dot > 0 ? name.slice(0, dot) : name;
}

// What makes a name a disguise of a plainer one: a letter from outside ASCII, a digit or bar in
// place of a letter, "rn" for m, "vv" for w, a capital I among small letters.
const DISGUISE = /[^\x00-\x7F]|[01|]|rn|vv|(?<=[a-z])I/g;
const disguise = (name: string): number => name.match(DISGUISE)?.length ?? 0;

/**
 * How far a name is trusted to be who it says: our config (3: the owner, ourselves and every
 * member it names), a person by the group service's word (2), anyone else (1). A name is shown as
 * a look-alike only of a name trusted more than itself — two configured aids that look alike are
 * both real.
 */
export type NameRank = 1 | 2 | 3;

/** Names of one trust, as a layer of {@link KnownNames} reads them. */
export interface NameSource {
  /** Grows with every change: a view that cached how it showed names knows to forget them. */
  readonly version: number;
  /** Whether a name lower-cases to `lower`. */
  hasLower(lower: string): boolean;
  /** The oldest name (lower-cased) under a look-alike key of whole names, or of user parts with `user`. */
  oldestUnder(key: string, user: boolean): string | undefined;
}

/**
 * Names of one trust that never change (our config's), read from the table that already holds
 * them under their lower-cased aids: a replay's config names every sender of its log, and a copy
 * would be one more table of them. Keyed on the first look-up that needs it.
 */
export class FixedNames implements NameSource {
  readonly version = 0;
  readonly #names: ReadonlyMap<string, unknown>;
  #byKey: Map<string, string> | undefined;
  #byUser: Map<string, string> | undefined;

  /** `names`: lower-cased keys, in the order they count (the oldest first); the caller never changes it. */
  constructor(names: ReadonlyMap<string, unknown>) {
    this.#names = names;
  }

  get size(): number {
    return this.#names.size;
  }

  hasLower(lower: string): boolean {
    return this.#names.has(lower);
  }

  oldestUnder(key: string, user: boolean): string | undefined {
    if (this.#names.size === 0) return undefined;
    if (this.#byKey === undefined || this.#byUser === undefined) {
      const byKey = (this.#byKey = new Map());
      const byUser = (this.#byUser = new Map());
      for (const name of this.#names.keys()) {
        for (const [map, k] of [[byKey, keyOf(name)], [byUser, keyOf(userPart(name))]] as const) if (k !== "" && !map.has(k)) map.set(k, name);
      }
    }
    return (user ? this.#byUser : this.#byKey).get(key);
  }
}

/**
 * Names of one trust too many to hold or key (a replay's config names every sender of its log,
 * however many): whether a name is one of them is asked of `has`, and which is the oldest under a
 * look-alike key is found by walking them in order (`walk`: the names oldest first, repeats
 * allowed), once per key — a replay shows only its `--strangers` with look-alike tags, so a few
 * keys are asked. The answers are kept, bounded.
 */
export class WalkedNames implements NameSource {
  readonly version = 0;
  readonly #has: (lower: string) => boolean;
  readonly #walk: () => Iterable<string>;
  /** "w"/"u" + key → the oldest name under it, null when none. */
  readonly #found = new BoundedMap<string, string | null>(SENDER_CACHE_LIMIT);

  constructor(p: { has(lower: string): boolean; walk(): Iterable<string> }) {
    this.#has = p.has;
    this.#walk = p.walk;
  }

  hasLower(lower: string): boolean {
    return this.#has(lower);
  }

  oldestUnder(key: string, user: boolean): string | undefined {
    // No name is kept under an empty key (FixedNames and NameIndex leave them out too).
    if (key === "") return undefined;
    const at = (user ? "u" : "w") + key;
    let found = this.#found.get(at);
    if (found === undefined) {
      found = null;
      for (const name of this.#walk()) {
        const lower = name.toLowerCase();
        if (this.#has(lower) && keyOf(user ? userPart(lower) : lower) === key) {
          found = lower;
          break;
        }
      }
      this.#found.set(at, found);
    }
    return found ?? undefined;
  }
}

/** Layers of one trust read as one, the earlier first (a directory's fixed config, then the people it names without listing them). */
export class ChainedNames implements NameSource {
  readonly #parts: readonly NameSource[];

  constructor(parts: readonly NameSource[]) {
    this.#parts = parts;
  }

  get version(): number {
    return this.#parts.reduce((sum, p) => sum + p.version, 0);
  }

  hasLower(lower: string): boolean {
    return this.#parts.some((p) => p.hasLower(lower));
  }

  oldestUnder(key: string, user: boolean): string | undefined {
    for (const p of this.#parts) {
      const name = p.oldestUnder(key, user);
      if (name !== undefined) return name;
    }
    return undefined;
  }
}

/**
 * Names of one trust, oldest added first, under their look-alike keys (and their user part's
 * key). Names come and go: a person the service names, then no longer does. Under one key the
 * oldest name is the one shown. The keys are computed on the first look-up that needs them — a
 * sender who is itself a configured name never does — and kept up to date from then on.
 */
export class NameIndex implements NameSource {
  /** Each name as given → lower-cased. */
  readonly #names = new Map<string, string>();
  /** Lower-cased → how many names as given lower-case to it, of the names not lower-case already (an aid from a directory always is). */
  readonly #lower = new Map<string, number>();
  /** Look-alike key → names as given under it, oldest first; undefined until first needed. */
  #byKey: Map<string, Set<string>> | undefined;
  #byUser: Map<string, Set<string>> | undefined;
  #version = 0;
  /** Counts the look-alike keys this index computed (tests prove a prompt build does not rebuild). */
  readonly #onKey: (() => void) | undefined;

  constructor(names: Iterable<string> = [], p: { onKey?: () => void } = {}) {
    this.#onKey = p.onKey;
    for (const n of names) this.add(n);
  }

  get version(): number {
    return this.#version;
  }

  get size(): number {
    return this.#names.size;
  }

  hasLower(lower: string): boolean {
    return this.#names.get(lower) === lower || this.#lower.has(lower);
  }

  /** Adds `name` as the newest; a name already here keeps its place. */
  add(name: string): void {
    if (this.#names.has(name)) return;
    const lower = name.toLowerCase();
    this.#names.set(name, lower);
    if (lower !== name) this.#lower.set(lower, (this.#lower.get(lower) ?? 0) + 1);
    this.#version++;
    if (this.#byKey !== undefined) this.#index(name);
  }

  delete(name: string): void {
    const lower = this.#names.get(name);
    if (lower === undefined) return;
    this.#names.delete(name);
    if (lower !== name) {
      const n = this.#lower.get(lower)!;
      if (n === 1) this.#lower.delete(lower);
      else this.#lower.set(lower, n - 1);
    }
    this.#version++;
    if (this.#byKey === undefined || this.#byUser === undefined) return;
    for (const [map, key] of [[this.#byKey, this.#keyOf(name)], [this.#byUser, this.#keyOf(userPart(name))]] as const) {
      const under = map.get(key);
      under?.delete(name);
      if (under?.size === 0) map.delete(key);
    }
  }

  oldestUnder(key: string, user: boolean): string | undefined {
    if (this.#names.size === 0) return undefined;
    if (this.#byKey === undefined || this.#byUser === undefined) {
      this.#byKey = new Map();
      this.#byUser = new Map();
      for (const name of this.#names.keys()) this.#index(name);
    }
    const under = (user ? this.#byUser : this.#byKey).get(key);
    if (under === undefined) return undefined;
    for (const name of under) return this.#names.get(name);
    return undefined;
  }

  #index(name: string): void {
    for (const [map, key] of [[this.#byKey!, this.#keyOf(name)], [this.#byUser!, this.#keyOf(userPart(name))]] as const) {
      if (key === "") continue;
      const under = map.get(key);
      if (under === undefined) map.set(key, new Set([name]));
      else under.add(name);
    }
  }

  #keyOf(name: string): string {
    this.#onKey?.();
    return keyOf(name);
  }
}

/** A layer of names that share one trust. */
export interface NameLayer {
  rank: NameRank;
  names: NameSource;
}

/**
 * The names a sender may not pass for, in layers (most trusted first; of one trust, the earlier
 * layer first). It remembers how it showed each sender name (bounded) until a layer changes.
 */
export class KnownNames implements NameDisplay {
  readonly #layers: readonly NameLayer[];
  readonly #shown = new BoundedMap<string, string>(SENDER_CACHE_LIMIT);
  /** The layers' versions when #shown was last right. */
  #shownAt = -1;

  constructor(layers: readonly NameLayer[]) {
    // Stable: layers of one trust keep their order.
    this.#layers = [...layers].sort((a, b) => b.rank - a.rank);
  }

  /** From a list of names (a string is one our config names, rank 3): as if each were added in order. */
  static of(names: Iterable<string | { aid: string; rank: NameRank }>): KnownNames {
    const byRank = new Map<NameRank, NameIndex>();
    for (const n of names) {
      const { aid, rank } = typeof n === "string" ? { aid: n, rank: 3 as NameRank } : n;
      let index = byRank.get(rank);
      if (index === undefined) byRank.set(rank, (index = new NameIndex()));
      index.add(aid);
    }
    return new KnownNames([...byRank].map(([rank, names]) => ({ rank, names })));
  }

  /** The oldest known name under `key` in the most trusted layer that has one. */
  #oldestUnder(key: string, user: boolean): { aid: string; rank: NameRank } | undefined {
    for (const { rank, names } of this.#layers) {
      const aid = names.oldestUnder(key, user);
      if (aid !== undefined) return { aid, rank };
    }
    return undefined;
  }

  /** The known name `sender` imitates: one trusted more, with the same look-alike key, not `sender` itself. */
  #imitated(sender: string, rank: NameRank): string | undefined {
    // Nothing is trusted more than our config.
    if (rank === 3) return undefined;
    const lower = sender.toLowerCase();
    const dotted = lower.includes(".");
    let ref = this.#oldestUnder(keyOf(sender), false);
    if (ref === undefined) {
      // A bare nick against an aid's user part ("sarn" and sam.acp.local), or an aid against a
      // bare configured nick ("sarn.acp.local" and "sam").
      const r = this.#oldestUnder(keyOf(dotted ? userPart(sender) : sender), true);
      if (r !== undefined && (!dotted || !r.aid.includes(".")) && userPart(r.aid) !== userPart(lower)) ref = r;
    }
    return ref === undefined || ref.aid === lower || ref.rank <= rank ? undefined : ref.aid;
  }

  /** The trust of a name: its most trusted layer's, 1 when no layer has it. */
  rankOf(sender: string): NameRank {
    const lower = sender.toLowerCase();
    for (const { rank, names } of this.#layers) if (names.hasLower(lower)) return rank;
    return 1;
  }

  #known(sender: string): boolean {
    const lower = sender.toLowerCase();
    return this.#layers.some(({ names }) => names.hasLower(lower));
  }

  show(sender: string): string {
    const version = this.#layers.reduce((sum, l) => sum + l.names.version, 0);
    if (version !== this.#shownAt) {
      this.#shown.clear();
      this.#shownAt = version;
    }
    const cached = this.#shown.get(sender);
    if (cached !== undefined) return cached;
    const imitated = this.#imitated(sender, this.rankOf(sender));
    const shown = imitated === undefined ? sanitizeSender(sender) : withTag(cleanSenderName(sender), imitated);
    if (sender.length <= 256) this.#shown.set(sender, shown);
    return shown;
  }

  /**
   * As shown beside `speakers` (one batch's senders, oldest first): of speakers nobody vouches for
   * that look alike and imitate no known name, the plainest name (then the first to speak) is the
   * one the others are shown with — "sam" and "sarn" in one batch: "sarn(≈sam)".
   */
  forSpeakers(speakers: Iterable<string>): NameDisplay {
    const groups = new Map<string, string[]>();
    // A batch repeats a few senders: each is looked at once.
    const seen = new Set<string>();
    for (const s of speakers) {
      if (seen.has(s)) continue;
      seen.add(s);
      if (this.#known(s) || this.#imitated(s, 1) !== undefined) continue;
      const key = keyOf(s);
      const group = groups.get(key);
      if (group === undefined) groups.set(key, [s]);
      else if (!group.some((g) => g.toLowerCase() === s.toLowerCase())) group.push(s);
    }
    let local: Map<string, string> | undefined;
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      const ref = group.reduce((best, s) => (disguise(s) < disguise(best) ? s : best));
      for (const s of group) if (s !== ref) (local ??= new Map()).set(s, ref);
    }
    if (local === undefined) return this;
    const tagged = local;
    return {
      show: (sender) => {
        const ref = tagged.get(sender);
        return ref === undefined ? this.show(sender) : withTag(cleanSenderName(sender), cleanSenderName(ref));
      },
    };
  }
}

/** A directory's names by trust: the members our config names (fixed) and the people the group service names (they change). */
export interface LookalikeNames {
  readonly config: NameSource;
  readonly persons: NameSource;
}

const NO_NAMES: LookalikeNames = Object.freeze({ config: new NameIndex(), persons: new NameIndex() });

// Per directory, per set of our own names: a handful of identities per process; the bound only
// stops a caller that makes up sets.
const views = new WeakMap<LookalikeNames, BoundedMap<string, KnownNames>>();

/**
 * The {@link KnownNames} of our own names (`self`: our aid, our owner; empty and missing ones
 * skipped; rank 3), of the members our config names (rank 3) and of the people the group service
 * names (rank 2), shared by every prompt build of the same directory. A directory's layers change
 * in place: this costs the same however many names they hold.
 */
export function knownNames(p: { self: ReadonlyArray<string | undefined>; names?: LookalikeNames | undefined }): KnownNames {
  const names = p.names ?? NO_NAMES;
  const self = p.self.filter((a): a is string => typeof a === "string" && a !== "");
  const id = self.join("\n").toLowerCase();
  let byId = views.get(names);
  if (byId === undefined) views.set(names, (byId = new BoundedMap(64)));
  let known = byId.get(id);
  if (known === undefined) {
    known = new KnownNames([
      { rank: 3, names: new NameIndex(self) },
      { rank: 3, names: names.config },
      { rank: 2, names: names.persons },
    ]);
    byId.set(id, known);
  }
  return known;
}
