// Sign-in state of the local network: one-time nonces and expiring tokens, keyed by aid.
// Time is a parameter everywhere; nothing here runs a timer.
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from "node:crypto";

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
 * Nonces of step 1 of a sign-in, good once for one minute, without a table: a nonce is its issue
 * time and an HMAC (a secret of this process) over the aid, the request id and that time, so
 * handing one out stores nothing and no flood of first steps can evict anyone's. What is stored
 * is each nonce spent by a valid signature, until it expires (replays refused); those come only
 * from key holders, whose sign-ins are rationed per aid, and are bounded in all besides.
 */
export class NonceStore {
  /** A key object, not bytes: an HMAC keyed by bytes costs ~30 µs to set up, by a key object ~5 (two per sign-in). */
  readonly #secret = createSecretKey(randomBytes(32));
  readonly #ttlMs: number;
  readonly #maxSpent: number;
  /** nonce → its expiry, in the order spent (so also nearly in expiry order). */
  readonly #spent = new Map<string, number>();

  constructor(params: { ttlMs?: number; maxSpent?: number } = {}) {
    this.#ttlMs = params.ttlMs ?? 60_000;
    this.#maxSpent = params.maxSpent ?? 100_000;
  }

  issue(aid: string, requestId: string, now: number): string {
    const at = Math.floor(now).toString(36);
    return `${at}.${this.#mac(aid, requestId, at)}`;
  }

  /** Whether `nonce` was issued here for this aid and request, is not expired and was not spent. Stores nothing. */
  valid(aid: string, requestId: string, nonce: string, now: number): boolean {
    const dot = nonce.indexOf(".");
    if (dot <= 0 || nonce.length > 128) return false;
    const at = nonce.slice(0, dot);
    const issuedAt = parseInt(at, 36);
    if (!Number.isFinite(issuedAt) || issuedAt > now || now - issuedAt >= this.#ttlMs) return false;
    const given = Buffer.from(nonce.slice(dot + 1), "utf8");
    const expected = Buffer.from(this.#mac(aid, requestId, at), "utf8");
    return given.length === expected.length && timingSafeEqual(given, expected) && !this.#spent.has(nonce);
  }

  /** Marks a valid nonce used (after its signature verified); false when it cannot be (spent already, or the table is full of unexpired ones). */
  spend(nonce: string, now: number): boolean {
    for (const [n, expiresAt] of this.#spent) {
      if (expiresAt > now) break;
      this.#spent.delete(n);
    }
    if (this.#spent.has(nonce) || this.#spent.size >= this.#maxSpent) return false;
    this.#spent.set(nonce, parseInt(nonce.slice(0, nonce.indexOf(".")), 36) + this.#ttlMs);
    return true;
  }

  #mac(aid: string, requestId: string, at: string): string {
    return createHmac("sha256", this.#secret).update(`${aid.toLowerCase()}\n${requestId}\n${at}`).digest("hex");
  }
}
