import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { equalsLower } from "../../src/util/equals-lower.ts";

describe("equalsLower", () => {
  it("matches mixed-case ASCII aids and rejects near misses", () => {
    expect(equalsLower("Alice.AgentCP.io", "alice.agentcp.io")).toBe(true);
    expect(equalsLower("alice.agentcp.io", "alice.agentcp.io")).toBe(true);
    expect(equalsLower("carol.agentcp.io", "alice.agentcp.io")).toBe(false);
    expect(equalsLower("alice.agentcp.i", "alice.agentcp.io")).toBe(false);
    // '@' (0x40) and '[' (0x5b) sit just outside A–Z: they are not upper-case letters.
    expect(equalsLower("@", "`")).toBe(false);
    expect(equalsLower("[", "{")).toBe(false);
  });

  it("falls back to Unicode lower-casing outside ASCII", () => {
    expect(equalsLower("ÉLODIE.agentcp.io", "élodie.agentcp.io")).toBe(true);
    expect(equalsLower("ΣΟΦΙΑ", "σοφια")).toBe(true);
    expect(equalsLower("élodie", "elodie")).toBe(false);
    // "İ" lower-cases to two code units: a different length is never equal, as before.
    expect(equalsLower("İ", "İ".toLowerCase())).toBe(false);
  });

  it("agrees with the comparison it replaces (same length, then toLowerCase) for any pair", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "A", "z", "Z", "@", "[", "`", "{", ".", "é", "É", "İ", "Σ", "ß", "1"), maxLength: 8 });
    fc.assert(
      fc.property(text, text, (s, t) => {
        const lower = t.toLowerCase();
        expect(equalsLower(s, lower)).toBe(s.length === lower.length && s.toLowerCase() === lower);
        expect(equalsLower(s, s.toLowerCase())).toBe(s.length === s.toLowerCase().length);
      }),
      { numRuns: 2000 },
    );
  });
});
