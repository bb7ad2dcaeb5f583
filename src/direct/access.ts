// Who may talk to the agent one to one (`dmPolicy`, `allowFrom`, `denyFrom`): decided per sender
// before anything else happens with their message. The owner is admitted under every policy but
// `disabled`; `denyFrom` wins over every list but the owner. Pure: the pairing store is asked
// (outside) only when the decision says `pairing-check`.
import type { DmPolicy } from "../types.ts";
import { compileSenderPattern } from "../group/sender-access.ts";

export type DirectAccess =
  | { admit: true; as: "owner" | "listed" | "open" }
  /** `pairing` and no list names the sender: admitted only if the pairing store approved them. */
  | { admit: "pairing-check" }
  | { admit: false; reason: DirectRefusal };

/**
 * `dm-disabled`: dmPolicy is disabled; `denied`: denyFrom names the sender; `not-allowed`: under
 * allowlist no list names them; `pairing-required`: under pairing, not (yet) approved.
 */
export type DirectRefusal = "dm-disabled" | "denied" | "not-allowed" | "pairing-required";

export interface DirectAccessRules {
  policy: DmPolicy;
  owner: string | undefined;
  /** Senders treated as people by the config (`humans`): admitted under allowlist and pairing. */
  humans: readonly string[];
  allowFrom: readonly string[];
  denyFrom: readonly string[];
}

/** The rules compiled once; then one call per message. */
export function compileDirectAccess(r: DirectAccessRules): (peer: string) => DirectAccess {
  const owner = r.owner?.toLowerCase();
  const listed = [...r.humans, ...r.allowFrom].filter((x) => x.trim() !== "").map(compileSenderPattern);
  const denied = r.denyFrom.filter((x) => x.trim() !== "").map(compileSenderPattern);
  return (peer) => {
    const p = peer.toLowerCase();
    if (r.policy === "disabled") return { admit: false, reason: "dm-disabled" };
    if (owner !== undefined && p === owner) return { admit: true, as: "owner" };
    if (denied.some((m) => m(p))) return { admit: false, reason: "denied" };
    if (listed.some((m) => m(p))) return { admit: true, as: "listed" };
    if (r.policy === "open") return { admit: true, as: "open" };
    return r.policy === "pairing" ? { admit: "pairing-check" } : { admit: false, reason: "not-allowed" };
  };
}

/** The policy an identity runs with: its own `dmPolicy`, else the host's default (standalone: allowlist). */
export function resolveDmPolicy(configured: DmPolicy | undefined, hostDefault: DmPolicy = "allowlist"): DmPolicy {
  return configured ?? hostDefault;
}
