// The nonce table under a flood (pure, time as a parameter): one source evicts only its own
// oldest nonces, expired nonces go first, and a nonce is good once.
import { describe, expect, it } from "vitest";
import { NonceStore } from "../../../src/server/network/tokens.ts";

describe("NonceStore", () => {
  it("T+0s alice's nonce from A · T+1s 12,000 first steps from B · T+2s alice's nonce still good (B evicted only its own)", () => {
    const store = new NonceStore({ maxPerSource: 1000 });
    const alice = store.issue("alice.acp.local", "a1", 0, "10.0.0.1");
    for (let i = 0; i < 12_000; i++) store.issue(`x${i}.acp.local`, `b${i}`, 1000, "10.0.0.2");
    // B's oldest went first: b0 is gone, its newest is kept.
    expect(store.take("x0.acp.local", "b0", "whatever", 2000)).toBe(false);
    expect(store.take("alice.acp.local", "a1", alice, 2000)).toBe(true);
    expect(store.take("alice.acp.local", "a1", alice, 2000)).toBe(false);
  });

  it("T+0s nonce issued · T+60s expired, refused", () => {
    const store = new NonceStore();
    const n = store.issue("alice.acp.local", "a1", 0, "s");
    store.issue("bob.acp.local", "b1", 60_000, "s");
    expect(store.take("alice.acp.local", "a1", n, 60_000)).toBe(false);
  });
});
