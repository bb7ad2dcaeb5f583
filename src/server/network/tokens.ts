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

/** Nonces handed out by step 1 of a sign-in; each is good once, for one minute. */
export class NonceStore {
  readonly #nonces = new Map<string, { aid: string; nonce: string; expiresAt: number }>();
  issue(aid: string, requestId: string, now: number): string {
    for (const [k, v] of this.#nonces) if (v.expiresAt <= now) this.#nonces.delete(k);
    // A flood of first steps cannot grow this without bound: the oldest nonce goes first.
    if (this.#nonces.size >= 10_000) this.#nonces.delete(this.#nonces.keys().next().value!);
    const nonce = randomBytes(24).toString("hex");
    this.#nonces.set(requestId, { aid, nonce, expiresAt: now + 60_000 });
    return nonce;
  }
  take(aid: string, requestId: string, nonce: string, now: number): boolean {
    const entry = this.#nonces.get(requestId);
    this.#nonces.delete(requestId);
    return entry !== undefined && entry.aid === aid && entry.nonce === nonce && entry.expiresAt > now;
  }
}
