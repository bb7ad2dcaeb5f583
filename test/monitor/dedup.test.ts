import { describe, expect, it } from "vitest";
import { rememberReply } from "../../src/group/memory.ts";
import { checkDuplicate, checkOthersDuplicate, dedupKeyOf, hashNormalized, normalizeForDedup, shingleSimilarity } from "../../src/monitor/dedup.ts";
import { msg } from "./helpers.ts";

describe("normalizeForDedup", () => {
  it("applies NFKC, lowercases, drops punctuation, whitespace and emoji", () => {
    expect(normalizeForDedup("Hello, World! 👍 ＡＢＣ")).toBe("helloworldabc");
    expect(normalizeForDedup("好的，没问题！👨‍👩‍👧")).toBe("好的没问题");
    expect(normalizeForDedup("Sounds   good\tto me...")).toBe("soundsgoodtome");
  });

  it("keeps emoji-only replies distinct from each other", () => {
    expect(normalizeForDedup("👍 ")).toBe("👍");
    expect(normalizeForDedup("😂")).toBe("😂");
  });
});

describe("hashNormalized", () => {
  it("is a 64-bit xxhash in hex, stable across calls", () => {
    const h = hashNormalized("soundsgoodtome");
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    expect(hashNormalized("soundsgoodtome")).toBe(h);
    expect(hashNormalized("soundsgoodtoyou")).not.toBe(h);
  });
});

describe("shingleSimilarity", () => {
  it("is Jaccard over character bigrams", () => {
    expect(shingleSimilarity("abcd", "abcd")).toBe(1);
    // {ab, bc, cd} vs {ab, bc, ce}: 2 shared of 4.
    expect(shingleSimilarity("abcd", "abce")).toBe(0.5);
    expect(shingleSimilarity("ab", "xy")).toBe(0);
    expect(shingleSimilarity("a", "a")).toBe(1);
  });
});

describe("checkDuplicate", () => {
  const sent = ["I think we should use Postgres for this.", "Sounds good to me!"];
  const build = () => {
    let m = { hashes: [] as readonly string[], texts: [] as readonly string[] };
    for (const s of sent) {
      const n = normalizeForDedup(s);
      m = rememberReply(m, { hash: hashNormalized(n), normalized: n }, 10);
    }
    return m;
  };

  it("catches the same text after normalisation by hash", () => {
    const r = checkDuplicate({ text: "sounds good to me 👍", memory: build(), threshold: 0.8 });
    expect(r).toMatchObject({ duplicate: true, reason: "same-hash", similarity: 1 });
  });

  it("catches a near-duplicate above the threshold", () => {
    const r = checkDuplicate({ text: "I think we should use postgres for this one", memory: build(), threshold: 0.8 });
    expect(r.duplicate).toBe(true);
    expect(r).toMatchObject({ reason: "near-duplicate" });
    if (r.duplicate) expect(r.similarity).toBeCloseTo(28 / 31, 5);
  });

  it("lets a different reply through, and respects the threshold", () => {
    expect(checkDuplicate({ text: "What about SQLite instead?", memory: build(), threshold: 0.8 }).duplicate).toBe(false);
    expect(checkDuplicate({ text: "I think we should use postgres for this one", memory: build(), threshold: 0.95 }).duplicate).toBe(false);
  });

  it("rememberReply keeps the newest N", () => {
    let m = { hashes: [] as readonly string[], texts: [] as readonly string[] };
    for (const t of ["a1", "a2", "a3", "a4"]) m = rememberReply(m, { hash: hashNormalized(t), normalized: t }, 3);
    expect(m.texts).toEqual(["a2", "a3", "a4"]);
    expect(m.hashes).toEqual([hashNormalized("a2"), hashNormalized("a3"), hashNormalized("a4")]);
  });
});

describe("checkOthersDuplicate", () => {
  const recent = [
    msg("1", "bob.agentcp.io", "anyone know why CI is red?", 1),
    msg("2", "helper.agentcp.io", "CI is red because the lockfile is stale; run npm install.", 2),
    msg("3", "alice.agentcp.io", "CI is red because the lockfile is stale; run npm install.", 3),
  ];

  it("finds the same words from another member, by hash or by similarity", () => {
    expect(checkOthersDuplicate({ text: "ci is red because the lockfile is stale — run npm install!", recent, threshold: 0.8, selfAid: "alice.agentcp.io" })).toEqual({
      duplicate: true,
      reason: "same-hash",
      similarity: 1,
      sender: "helper.agentcp.io",
      msgId: "2",
    });
    const near = checkOthersDuplicate({ text: "CI is red because the lockfile is stale; run npm install again.", recent, threshold: 0.8, selfAid: "alice.agentcp.io" });
    expect(near).toMatchObject({ duplicate: true, reason: "near-duplicate", sender: "helper.agentcp.io" });
  });

  it("ignores our own lines and different answers", () => {
    const mine = [recent[2]!];
    expect(checkOthersDuplicate({ text: recent[2]!.content, recent: mine, threshold: 0.8, selfAid: "alice.agentcp.io" })).toEqual({ duplicate: false });
    expect(checkOthersDuplicate({ text: "Try clearing the cache first.", recent, threshold: 0.8, selfAid: "alice.agentcp.io" })).toEqual({ duplicate: false });
  });
});

describe("dedupKeyOf", () => {
  it("keys a message of ours as a sent reply is keyed: controls stripped, then normalised and hashed", () => {
    const key = dedupKeyOf("Sounds\u0007 good\u001b[31m to me!");
    expect(key.normalized).toBe(normalizeForDedup("Sounds good[31m to me!"));
    expect(key.hash).toBe(hashNormalized(key.normalized));
    expect(dedupKeyOf("sounds good to me")).toEqual({ hash: hashNormalized("soundsgoodtome"), normalized: "soundsgoodtome" });
  });
});
