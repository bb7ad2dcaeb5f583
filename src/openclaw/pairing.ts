// Direct messages inside OpenClaw use the host's own pairing, as its bundled channels do: an
// unknown sender gets the host's pairing reply with a code (its pairing store), the owner approves
// it with `openclaw pairing approve acp-group <code>`, and the approved aid joins the channel's
// allow-from store, which is read again for every message of a sender no list admits. The host's
// policy default (`pairing`) applies when an identity sets no `dmPolicy`; `openclaw security
// audit` reads the policy of each identity from here (and flags `open`).
import type { ChannelConfig, DirectPairing, DmPolicy, IdentityConfig, Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { ACP_GROUP_CHANNEL_ID } from "./host-calls.ts";

/** The policy of an identity that sets no `dmPolicy`, inside OpenClaw (the host's default). */
export const OPENCLAW_DEFAULT_DM_POLICY: DmPolicy = "pairing";

/** The slice of the host's `PluginRuntime["channel"]["pairing"]` we call. */
export type OpenClawPairingRuntime = {
  buildPairingReply: (p: { channel: string; idLine: string; code: string }) => string;
  readAllowFromStore: (p: { channel: string; accountId: string }) => Promise<string[]>;
  upsertPairingRequest: (p: {
    channel: string;
    id: string;
    accountId: string;
    meta?: Record<string, string | undefined | null>;
  }) => Promise<{ code: string; created: boolean }>;
};

/** `acp-group:alice.agentcp.io`, `user:alice.agentcp.io` and `Alice.agentcp.io` are one entry. */
export function normalizeAcpGroupAllowEntry(entry: string): string {
  let rest = entry.trim();
  if (rest.toLowerCase().startsWith(`${ACP_GROUP_CHANNEL_ID}:`)) rest = rest.slice(ACP_GROUP_CHANNEL_ID.length + 1);
  if (rest.toLowerCase().startsWith("user:")) rest = rest.slice("user:".length);
  return rest.trim().toLowerCase();
}

/**
 * The host's pairing reply in one line: a direct message on the network is one line of plain text
 * (no code fences), and the code and the approve command must survive any client's rendering.
 */
export function flattenPairingReply(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("```"));
  // "Pairing code:" runs on into its code; other lines are set apart (no period next to a code).
  return lines.reduce((out, line, i) => (i === 0 ? line : `${out}${lines[i - 1]!.endsWith(":") ? " " : " — "}${line}`), "");
}

/**
 * The pairing hook of our direct conversations, backed by the host's pairing store. `runtime` is
 * asked at each call (the host hands its runtime over after load). Store failures are logged and
 * count as "not approved" / "nothing to send": a stranger never reaches the model by accident.
 */
export function createHostDirectPairing(p: { runtime: () => OpenClawPairingRuntime | undefined; logger: Logger; channelId?: string }): DirectPairing {
  const channel = p.channelId ?? ACP_GROUP_CHANNEL_ID;
  const pairing = (): OpenClawPairingRuntime => {
    const rt = p.runtime();
    if (!rt) throw new Error("the host gave no pairing runtime");
    return rt;
  };
  return {
    async isApproved({ identityId, peer }) {
      try {
        const approved = await pairing().readAllowFromStore({ channel, accountId: identityId });
        const who = peer.toLowerCase();
        return approved.some((entry) => normalizeAcpGroupAllowEntry(String(entry)) === who);
      } catch (err) {
        p.logger.log("warn", "openclaw.pairing-read-failed", { peer, ...errorFields(err) });
        return false;
      }
    },
    async request({ identityId, aid, peer }) {
      try {
        const rt = pairing();
        const { code, created } = await rt.upsertPairingRequest({ channel, id: peer, accountId: identityId, meta: { identity: aid } });
        // A pending request already told them (the host's rule): one reply per code, not per message.
        if (!created) return {};
        p.logger.log("info", "openclaw.pairing-requested", { peer, identity: aid });
        return { reply: flattenPairingReply(rt.buildPairingReply({ channel, idLine: `Your ACP agent id: ${peer}`, code })) };
      } catch (err) {
        p.logger.log("warn", "openclaw.pairing-request-failed", { peer, ...errorFields(err) });
        return {};
      }
    },
  };
}

/** What the host's `security.resolveDmPolicy` returns (ChannelSecurityDmPolicy). */
export type AcpGroupDmSecurity = {
  policy: DmPolicy;
  allowFrom: string[];
  policyPath: string;
  allowFromPath: string;
  approveHint: string;
  normalizeEntry: (raw: string) => string;
};

/**
 * One identity's direct-message policy as the host's security audit reads it: the policy (the
 * host's default when unset), who is admitted without pairing (the owner, `humans`, `allowFrom`;
 * `*` under open, which is what open means), and where in the config each is set.
 */
export function resolveAcpGroupDmSecurity(p: { accountId: string; config: ChannelConfig | null; identity: IdentityConfig | null }): AcpGroupDmSecurity | null {
  if (!p.config || !p.identity) return null;
  const where = `channels.${ACP_GROUP_CHANNEL_ID}.identities.${p.accountId}.`;
  const policy = p.identity.dmPolicy ?? OPENCLAW_DEFAULT_DM_POLICY;
  const admitted = [...(p.identity.owner ? [p.identity.owner] : []), ...p.config.humans, ...(p.identity.allowFrom ?? [])];
  return {
    policy,
    allowFrom: [...new Set([...admitted, ...(policy === "open" ? ["*"] : [])])],
    policyPath: `${where}dmPolicy`,
    allowFromPath: where,
    approveHint: `Approve a sender with: openclaw pairing approve ${ACP_GROUP_CHANNEL_ID} <code> (pending codes: openclaw pairing list ${ACP_GROUP_CHANNEL_ID})`,
    normalizeEntry: normalizeAcpGroupAllowEntry,
  };
}
