// Who counts as another member of one group when a line opens with a name: senders seen lately,
// the vitality window's senders, and (for a marked opening) the group's member list. Read by the
// leading-address test (../addressee.ts). No timers.
import { memberKeys } from "../addressee.ts";
import { windowSenders, type VitalityWindow } from "../vitality.ts";

/**
 * Distinct recent senders kept to recognise `bob: …` as addressed to another member: far more
 * people than speak in a group within an engagement window (60 s by default), so nobody still in
 * the conversation is forgotten, and a bounded set however many pass through.
 */
export const MEMBERS_CAPACITY = 256;

export class KnownMembers {
  /** Senders seen while addressees matter (raw, insertion-ordered, bounded). */
  #seen: Set<string> | null = null;
  /** nickKeys of #seen and the window's senders, built on the first ask after a change. */
  #keys: Set<string> | null = null;
  readonly #selfKeys: ReadonlySet<string>;
  readonly #aidLower: string;
  readonly #listed: (() => ReadonlySet<string>) | undefined;
  readonly #window: VitalityWindow;
  /** {@link has} as a function, for the leading-address test. */
  readonly isMember = (key: string, marked: boolean): boolean => this.has(key, marked);

  constructor(p: {
    /** nickKeys of our own names: never another member. */
    selfKeys: ReadonlySet<string>;
    aidLower: string;
    /** Nick keys of the group's member list (group service, agent.md names): members who may not have spoken yet. */
    listed: (() => ReadonlySet<string>) | undefined;
    /** The vitality window: its senders are members seen lately. */
    window: VitalityWindow;
  }) {
    this.#selfKeys = p.selfKeys;
    this.#aidLower = p.aidLower;
    this.#listed = p.listed;
    this.#window = p.window;
  }

  /** A member's line, while addressees matter: its sender is remembered beyond the window. */
  add(sender: string): void {
    const seen = (this.#seen ??= new Set());
    if (seen.has(sender)) return;
    seen.add(sender);
    this.#keys = null;
    if (seen.size > MEMBERS_CAPACITY) seen.delete(seen.values().next().value as string);
  }

  /** A member's line while addressees do not matter: the window moved, so the keys are rebuilt on the next ask. */
  refresh(): void {
    this.#keys = null;
  }

  /**
   * Whether a nick key is another member's. Someone seen speaking lately is a member for any
   * opening; one known only from the member list counts for a marked opening (`bob:`, `bob,`,
   * `@bob`): a bare word that happens to be a silent member's name is too often just a word.
   */
  has(key: string, marked: boolean): boolean {
    if (this.#selfKeys.has(key)) return false;
    if (marked && this.#listed?.().has(key)) return true;
    if (this.#keys === null) {
      const keys = (this.#keys = new Set());
      for (const s of this.#seen ?? []) for (const k of memberKeys(s)) keys.add(k);
      for (const s of windowSenders(this.#window)) if (s.toLowerCase() !== this.#aidLower) for (const k of memberKeys(s)) keys.add(k);
    }
    return this.#keys.has(key);
  }
}
