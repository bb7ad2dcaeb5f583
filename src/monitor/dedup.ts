// Weak dedup (seed 003 §9.1): never say the same thing twice in a group. Exact repeats by a
// 64-bit xxhash of the normalised text, near-repeats by character-bigram similarity — against our
// own recent replies (the group's reply memory) and against what other members said lately.
import xxhash from "xxhash-wasm";
import type { DedupKey, InboundMessage, ReplyMemory } from "../types.ts";
import { stripControls } from "./sanitize.ts";

// The wasm module starts compiling when this module loads; every hash after that is a sync call.
// Not a top-level await: OpenClaw loads the plugin with require(), which refuses a module graph
// holding one (ERR_REQUIRE_ASYNC_MODULE). Whatever hashes awaits `dedupReady` first — a dispatch
// (pipeline.ts) and an identity before it connects (runtime/identity.ts) — so no caller ever
// meets the hasher unready.
let api: Awaited<ReturnType<typeof xxhash>> | null = null;
/** Resolves once the hasher is compiled; await it before the first hash. */
export const dedupReady: Promise<void> = xxhash().then((compiled) => {
  api = compiled;
});

const STRIP = /[\p{P}\p{S}\p{Z}\s\u200d\ufe0e\ufe0f\u20e3\u{e0020}-\u{e007f}]+/gu;

/**
 * NFKC, lowercase, without punctuation, symbols (emoji included), whitespace and emoji joiners.
 * A reply made only of emoji keeps them (minus spaces), so 👍 and 😂 stay different.
 */
export function normalizeForDedup(text: string): string {
  const nfkc = text.normalize("NFKC").toLowerCase();
  const stripped = nfkc.replace(STRIP, "");
  return stripped !== "" ? stripped : nfkc.replace(/\s+/gu, "");
}

/** 16 hex digits of xxh64. */
export function hashNormalized(normalized: string): string {
  if (api === null) throw new Error("dedup hasher used before dedupReady resolved");
  return api.h64ToString(normalized);
}

/** The key a message of ours is remembered by when it comes back from the group (controls stripped, as a sent reply's were). */
export function dedupKeyOf(text: string): DedupKey {
  const normalized = normalizeForDedup(stripControls(text));
  return { hash: hashNormalized(normalized), normalized };
}

function bigrams(s: string): Set<string> {
  const cps = [...s];
  const out = new Set<string>();
  if (cps.length < 2) {
    if (cps.length === 1) out.add(cps[0]!);
    return out;
  }
  for (let i = 0; i + 1 < cps.length; i++) out.add(cps[i]! + cps[i + 1]!);
  return out;
}

/** Jaccard similarity of the character-bigram sets of two normalised texts, in [0, 1]. */
export function shingleSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const A = bigrams(a);
  const B = bigrams(b);
  if (A.size === 0 || B.size === 0) return 0;
  let inter = 0;
  for (const x of A) if (B.has(x)) inter++;
  return inter / (A.size + B.size - inter);
}

export type DuplicateCheck =
  | { duplicate: false; hash: string; normalized: string }
  | { duplicate: true; reason: "same-hash" | "near-duplicate"; similarity: number; hash: string; normalized: string };

export function checkDuplicate(p: { text: string; memory: ReplyMemory; threshold: number }): DuplicateCheck {
  const normalized = normalizeForDedup(p.text);
  const hash = hashNormalized(normalized);
  if (p.memory.hashes.includes(hash)) return { duplicate: true, reason: "same-hash", similarity: 1, hash, normalized };
  let best = 0;
  for (const t of p.memory.texts) best = Math.max(best, shingleSimilarity(normalized, t));
  if (best >= p.threshold) return { duplicate: true, reason: "near-duplicate", similarity: best, hash, normalized };
  return { duplicate: false, hash, normalized };
}

export type OthersDuplicate =
  | { duplicate: false }
  | { duplicate: true; reason: "same-hash" | "near-duplicate"; similarity: number; sender: string; msgId: string };

/**
 * Compares a reply with what other members said lately — the same normalised hash and bigram
 * similarity as our own dedup. An answer another agent already gave is not repeated.
 */
export function checkOthersDuplicate(p: { text: string; recent: readonly InboundMessage[]; threshold: number; selfAid: string }): OthersDuplicate {
  if (p.recent.length === 0) return { duplicate: false };
  const normalized = normalizeForDedup(p.text);
  const hash = hashNormalized(normalized);
  const self = p.selfAid.toLowerCase();
  let best: OthersDuplicate = { duplicate: false };
  for (let i = p.recent.length - 1; i >= 0; i--) {
    const m = p.recent[i]!;
    if (m.sender.toLowerCase() === self) continue;
    const other = normalizeForDedup(m.content);
    if (hashNormalized(other) === hash) return { duplicate: true, reason: "same-hash", similarity: 1, sender: m.sender, msgId: m.msgId };
    const similarity = shingleSimilarity(normalized, other);
    if (similarity >= p.threshold && (!best.duplicate || similarity > best.similarity)) {
      best = { duplicate: true, reason: "near-duplicate", similarity, sender: m.sender, msgId: m.msgId };
    }
  }
  return best;
}
