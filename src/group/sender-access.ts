// Who may spend the agent in a group: per-group `allowFrom` / `denyFrom` lists of aids or
// `*` patterns, matched case-insensitively. The owner is always allowed. Pure: compiled once per
// group, then one call per inbound message. A refused sender's line never wakes the agent and
// never reaches the model; the group sees nothing of the refusal.

export type SenderAccessCheck = { ok: true } | { ok: false; reason: "denied" | "not-allowed" };

export interface SenderAccessParams {
  /** Only these senders (aids or patterns) may address the agent; empty or absent: everyone. */
  allowFrom?: readonly string[] | undefined;
  /** These senders never may, whatever `allowFrom` says (the owner excepted). */
  denyFrom?: readonly string[] | undefined;
  owner?: string | undefined;
}

/** `(sender) => check`, or null when every sender is allowed (no lists): the hot path skips it. */
export type SenderAccess = (sender: string) => SenderAccessCheck;

const OK: SenderAccessCheck = Object.freeze({ ok: true });
const DENIED: SenderAccessCheck = Object.freeze({ ok: false, reason: "denied" });
const NOT_ALLOWED: SenderAccessCheck = Object.freeze({ ok: false, reason: "not-allowed" });

/** `*` matches any run of characters (dots included); everything else is literal. */
export function compileSenderPattern(pattern: string): (senderLower: string) => boolean {
  const p = pattern.trim().toLowerCase();
  if (!p.includes("*")) return (s) => s === p;
  const source = p
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const re = new RegExp(`^${source}$`, "u");
  return (s) => re.test(s);
}

export function compileSenderAccess(p: SenderAccessParams): SenderAccess | null {
  const allow = (p.allowFrom ?? []).filter((x) => x.trim() !== "").map(compileSenderPattern);
  const deny = (p.denyFrom ?? []).filter((x) => x.trim() !== "").map(compileSenderPattern);
  if (allow.length === 0 && deny.length === 0) return null;
  const owner = p.owner?.toLowerCase();
  return (sender) => {
    const s = sender.toLowerCase();
    if (owner !== undefined && s === owner) return OK;
    if (deny.some((m) => m(s))) return DENIED;
    if (allow.length > 0 && !allow.some((m) => m(s))) return NOT_ALLOWED;
    return OK;
  };
}
