// The fingerprints (X509Certificate.fingerprint256: SHA-256 of the DER) of the certificates the local CA issued, kept in
// `<ca dir>/issued.json`: a certificate sent back bit for bit as issued needs no check of its CA
// signature (a P-384 verification, ~1 ms: a thousand agents signing in after the network started
// cost a second of it). Anything else — another CA's, a changed byte — is verified as before. The
// newest MAX_KEPT are kept; an older one is simply verified again. Saves run off the event loop,
// coalesced like the aid registry's; a lost save costs verifications, never a wrong answer.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../state/atomic-file.ts";

/** Fingerprints kept: every agent of a large network, and then some. */
export const MAX_KEPT_FINGERPRINTS = 20_000;

export class IssuedCertificates {
  readonly #file: string;
  /** Insertion order is age: the first is the oldest. */
  readonly #kept = new Set<string>();
  #saving: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(caDir: string) {
    this.#file = join(caDir, "issued.json");
    if (!existsSync(this.#file)) return;
    try {
      const list = JSON.parse(readFileSync(this.#file, "utf8")) as unknown;
      if (Array.isArray(list)) for (const f of list) if (typeof f === "string") this.#kept.add(f);
    } catch {
      // An unreadable list only means verifying again.
    }
  }

  has(fingerprint: string): boolean {
    return this.#kept.has(fingerprint);
  }

  /** Settles once the list on disk holds `fingerprint` (or a save failed: then it is verified next time). */
  add(fingerprint: string): Promise<void> {
    this.#kept.add(fingerprint);
    if (this.#kept.size > MAX_KEPT_FINGERPRINTS) this.#kept.delete(this.#kept.values().next().value!);
    if (this.#queued !== undefined) return this.#queued;
    if (this.#saving === undefined) return this.#save();
    this.#queued = this.#saving.then(() => {
      this.#queued = undefined;
      return this.#save();
    });
    return this.#queued;
  }

  #save(): Promise<void> {
    const saving = writeFileAtomic(this.#file, JSON.stringify([...this.#kept]))
      .catch(() => {})
      .finally(() => {
        if (this.#saving === saving) this.#saving = undefined;
      });
    this.#saving = saving;
    return saving;
  }
}
