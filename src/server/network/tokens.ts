// Sign-in state of the local network: one-time nonces and expiring tokens, keyed by aid.
// Time is a parameter everywhere; nothing here runs a timer.
import { randomBytes } from "node:crypto";

export type TokenCheck = { ok: true; expiresAt: number } | { ok: false; reason: "unknown-token" | "expired-token" | "wrong-agent" };

export class TokenStore {
  readonly #ttlMs: number;
  readonly #tokens = new Map<string, { aid: string; expiresAt: number }>();
  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }
  issue(aid: string, now: number): { token: string; expiresAt: number } {
    this.#prune(now);
    const token = randomBytes(32).toString("hex");
    const expiresAt = now + this.#ttlMs;
    this.#tokens.set(token, { aid, expiresAt });
    return { token, expiresAt };
  }
  check(aid: string, token: string, now: number): TokenCheck {
    const entry = this.#tokens.get(token);
    if (!entry) return { ok: false, reason: "unknown-token" };
    if (entry.aid !== aid) return { ok: false, reason: "wrong-agent" };
    if (entry.expiresAt <= now) return { ok: false, reason: "expired-token" };
    return { ok: true, expiresAt: entry.expiresAt };
  }
  /** The aid a current token belongs to, or undefined (unknown or expired). */
  owner(token: string, now: number): string | undefined {
    const entry = this.#tokens.get(token);
    return entry && entry.expiresAt > now ? entry.aid : undefined;
  }
  /** Ends every token of `aid` (or every token) now. */
  expire(aid: string | undefined, now: number): void {
    for (const entry of this.#tokens.values()) if (aid === undefined || entry.aid === aid) entry.expiresAt = Math.min(entry.expiresAt, now);
  }
  #prune(now: number): void {
    // Keep expired tokens a while so a late use is told "expired", not "unknown".
    for (const [t, e] of this.#tokens) if (e.expiresAt + 3600_000 < now) this.#tokens.delete(t);
  }
}

/**
 * Nonces handed out by step 1 of a sign-in; each is good once, for one minute. Bounded in all and
 * per source address: a flood from one address evicts only its own oldest nonces. Expired ones
 * are pruned from the front (they expire in the order they were issued), so issuing costs O(1).
 */
export class NonceStore {
  readonly #maxPerSource: number;
  readonly #maxTotal: number;
  readonly #nonces = new Map<string, { aid: string; nonce: string; expiresAt: number; source: string }>();
  /** source → its request ids, oldest first. */
  readonly #bySource = new Map<string, Set<string>>();

  constructor(params: { maxPerSource?: number; maxTotal?: number } = {}) {
    this.#maxPerSource = params.maxPerSource ?? 1000;
    this.#maxTotal = params.maxTotal ?? 10_000;
  }

  issue(aid: string, requestId: string, now: number, source = ""): string {
    for (const [k, v] of this.#nonces) {
      if (v.expiresAt > now) break;
      this.#delete(k);
    }
    this.#delete(requestId);
    let mine = this.#bySource.get(source);
    if (!mine) this.#bySource.set(source, (mine = new Set()));
    if (mine.size >= this.#maxPerSource) this.#delete(mine.values().next().value!);
    if (this.#nonces.size >= this.#maxTotal) this.#delete(this.#nonces.keys().next().value!);
    const nonce = randomBytes(24).toString("hex");
    this.#nonces.set(requestId, { aid, nonce, expiresAt: now + 60_000, source });
    this.#bySource.get(source)?.add(requestId) ?? this.#bySource.set(source, new Set([requestId]));
    return nonce;
  }

  take(aid: string, requestId: string, nonce: string, now: number): boolean {
    const entry = this.#nonces.get(requestId);
    this.#delete(requestId);
    return entry !== undefined && entry.aid === aid && entry.nonce === nonce && entry.expiresAt > now;
  }

  #delete(requestId: string): void {
    const entry = this.#nonces.get(requestId);
    if (!entry) return;
    this.#nonces.delete(requestId);
    const mine = this.#bySource.get(entry.source);
    mine?.delete(requestId);
    if (mine?.size === 0) this.#bySource.delete(entry.source);
  }
}
