// Which key owns which aid on the local network. An aid belongs to the first key certified for it
// (kept in `<stateDir>/ca/registered.json`); configured members are reserved, so only this
// process certifies them; guest aids live in memory, bounded. Sign-in asks `keyMatches` before it
// takes a certificate, so a certificate of this CA is worth nothing with another key.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../state/atomic-file.ts";
import type { AidKind } from "./socket-limits.ts";
import { BoundedMap } from "../../util/bounded-map.ts";

/** Guest aids remembered at once; past it the oldest guest can no longer sign in. */
const MAX_GUEST_KEYS = 10_000;

/** SHA-256 (hex) of a public key's SPKI DER: how the registry names a key. */
export const keyIdOf = (spkiDer: Uint8Array): string => createHash("sha256").update(spkiDer).digest("hex");

export class AidRegistry {
  readonly #file: string;
  readonly #owners: Record<string, string>;
  readonly #reserved = new Set<string>();
  /** Guest aids (lower case) → key id; past MAX_GUEST_KEYS the one registered longest ago goes. */
  readonly #guests = new BoundedMap<string, string>(MAX_GUEST_KEYS);

  constructor(stateDir: string) {
    this.#file = join(stateDir, "ca", "registered.json");
    this.#owners = existsSync(this.#file) ? (JSON.parse(readFileSync(this.#file, "utf8")) as Record<string, string>) : {};
  }

  /** Configured members: `sign_cert` from outside refuses them unless the key is already theirs. */
  reserve(aids: Iterable<string>): void {
    for (const aid of aids) this.#reserved.add(aid.toLowerCase());
  }

  isReserved(aid: string): boolean {
    return this.#reserved.has(aid.toLowerCase());
  }

  kindOf(aid: string): AidKind {
    const key = aid.toLowerCase();
    if (this.#reserved.has(key)) return "member";
    return !Object.hasOwn(this.#owners, key) && this.#guests.has(key) ? "guest" : "registered";
  }

  owner(aid: string): string | undefined {
    const key = aid.toLowerCase();
    return Object.hasOwn(this.#owners, key) ? this.#owners[key] : this.#guests.get(key);
  }

  /**
   * Settles once the registry on disk holds this key (a certificate is handed out only then).
   * Saves run off the event loop, one at a time: registrations that arrive while one runs share
   * the next, so a thousand agents certified at once cost a handful of writes of the whole table,
   * not a thousand.
   */
  register(aid: string, keyId: string): Promise<void> {
    this.#owners[aid.toLowerCase()] = keyId;
    // A save still to start writes the table as it is then, this key included.
    if (this.#queued !== undefined) return this.#queued;
    if (this.#saving === undefined) return this.#save();
    this.#queued ??= this.#saving.catch(() => {}).then(() => {
      this.#queued = undefined;
      return this.#save();
    });
    return this.#queued;
  }

  #saving: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  #save(): Promise<void> {
    const saving = writeFileAtomic(this.#file, JSON.stringify(this.#owners, null, 2)).finally(() => {
      if (this.#saving === saving) this.#saving = undefined;
    });
    this.#saving = saving;
    return saving;
  }

  registerGuest(aid: string, keyId: string): void {
    this.#guests.set(aid.toLowerCase(), keyId);
  }

  /** The reason a certificate's key may not sign in as `aid`, or undefined when it may. */
  keyRefusal(aid: string, keyId: string): string | undefined {
    const owner = this.owner(aid);
    if (owner === undefined) return `${aid} is not registered here`;
    return owner === keyId ? undefined : `${aid} is registered to another key`;
  }
}
