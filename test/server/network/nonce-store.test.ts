// The nonces of step 1 (pure, time as a parameter): handing one out stores nothing, so no flood
// evicts anyone's; a nonce is good for its aid and request only, for one minute, once; the spent
// ones kept against replays are bounded.
import { describe, expect, it } from "vitest";
import { NonceStore } from "../../../src/server/network/tokens.ts";

describe("NonceStore", () => {
  it("T+0s alice's nonce · T+1s 12,000 first steps from anyone (for alice too) · T+2s alice's nonce still good, once", () => {
    const store = new NonceStore();
    const alice = store.issue("alice.acp.local", "a1", 0);
    for (let i = 0; i < 6000; i++) store.issue(`x${i}.acp.local`, `b${i}`, 1000);
    for (let i = 0; i < 6000; i++) store.issue("alice.acp.local", `c${i}`, 1000);
    expect(store.valid("alice.acp.local", "a1", alice, 2000)).toBe(true);
    expect(store.spend(alice, 2000)).toBe(true);
    expect(store.valid("alice.acp.local", "a1", alice, 2000)).toBe(false);
    expect(store.spend(alice, 2000)).toBe(false);
  });

  it("a nonce is bound to its aid and request id, and made here (another process's secret does not verify)", () => {
    const store = new NonceStore();
    const n = store.issue("alice.acp.local", "a1", 0);
    expect(store.valid("ALICE.acp.local", "a1", n, 1)).toBe(true);
    expect(store.valid("bob.acp.local", "a1", n, 1)).toBe(false);
    expect(store.valid("alice.acp.local", "a2", n, 1)).toBe(false);
    expect(new NonceStore().valid("alice.acp.local", "a1", n, 1)).toBe(false);
    expect(store.valid("alice.acp.local", "a1", "0.forged", 1)).toBe(false);
    expect(store.valid("alice.acp.local", "a1", "x".repeat(100), 1)).toBe(false);
  });

  it("T+0s issued · T+59.999s good · T+60s expired; a nonce dated in the future is refused", () => {
    const store = new NonceStore();
    const n = store.issue("alice.acp.local", "a1", 0);
    expect(store.valid("alice.acp.local", "a1", n, 59_999)).toBe(true);
    expect(store.valid("alice.acp.local", "a1", n, 60_000)).toBe(false);
    const later = store.issue("alice.acp.local", "a1", 5000);
    expect(store.valid("alice.acp.local", "a1", later, 4999)).toBe(false);
  });

  it("spent nonces are kept until they expire, at most maxSpent at once (then a sign-in is refused, never a replay let through)", () => {
    const store = new NonceStore({ maxSpent: 3 });
    const nonces = [0, 1, 2, 3].map((i) => store.issue("alice.acp.local", `r${i}`, i));
    expect(nonces.slice(0, 3).map((n) => store.spend(n, 10))).toEqual([true, true, true]);
    expect(store.spend(nonces[3]!, 10)).toBe(false);
    // T+60s: the first expired and went; room again.
    expect(store.spend(store.issue("alice.acp.local", "r4", 60_000), 60_000)).toBe(true);
  });
});
