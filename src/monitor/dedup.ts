// Weak dedup (seed 003 §9.1): never say the same thing twice in a group. Exact repeats by a
// 64-bit xxhash of the normalised text, near-repeats by character-bigram similarity.
import xxhash, { type XXHashAPI } from "xxhash-wasm";

let api: XXHashAPI | undefined;
// The wasm module compiles once per process; after that every hash is a sync call.
const ready: Promise<void> = xxhash().then((a) => {
  api = a;
});

/** Resolves once hashing is available. Await it once before the first {@link hashNormalized}. */
export function initDedup(): Promise<void> {
  return ready;
}

export class DedupNotReadyError extends Error {
  readonly code = "DEDUP_NOT_READY";
  constructor() {
    super("xxhash-wasm is not initialised yet: await initDedup() first");
    this.name = "DedupNotReadyError";
  }
}

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

/** 16 hex digits of xxh64. Sync; throws {@link DedupNotReadyError} before {@link initDedup} resolved. */
export function hashNormalized(normalized: string): string {
  if (!api) throw new DedupNotReadyError();
  return api.h64ToString(normalized);
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

/** Recent replies of one group, newest last. */
export interface ReplyMemory {
  hashes: readonly string[];
  /** Normalised texts, parallel to `hashes`. */
  texts: readonly string[];
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

/** Adds a sent reply, keeping the newest `historySize`. Returns a new memory. */
export function rememberReply(memory: ReplyMemory, hash: string, normalized: string, historySize: number): ReplyMemory {
  // Once per reply: our echo can come back before the send is acknowledged, and both remember it.
  const at = memory.hashes.indexOf(hash);
  const hashes = at < 0 ? memory.hashes : memory.hashes.filter((_, i) => i !== at);
  const texts = at < 0 ? memory.texts : memory.texts.filter((_, i) => i !== at);
  return {
    hashes: [...hashes, hash].slice(-historySize),
    texts: [...texts, normalized].slice(-historySize),
  };
}
