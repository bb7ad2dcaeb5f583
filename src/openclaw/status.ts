// An account's live status as the OpenClaw host shows it (`channels status`, `--probe`): signed in
// or why not, and per group the connection state, the last message in and out, the last skip and
// how many lines were refused or held to a sender's share, and whether its agent.md is published yet. Fed by the runtime's observers; no timers.
import type { GroupClientEvent } from "../group/group-client.ts";
import type { DispatchDecision } from "../monitor/decision.ts";
import type { GroupMessage } from "../types.ts";

export type GroupLiveStatus = {
  groupId: string;
  /** The group connection: `connecting`, `syncing`, `open`, `reconnecting`, `closed`. */
  session: string;
  lastInboundAt: number | null;
  lastOutboundAt: number | null;
  /** The last dispatch that was skipped, and why (`over-budget`, `sender-over-share`, …). */
  lastSkip: { at: number; reason: string; detail?: string } | null;
  /** Lines dropped because allowFrom/denyFrom refuse their sender. */
  refused: number;
  /** Dispatches skipped because everyone addressing us had used their share. */
  overShare: number;
};

export type AccountLiveSnapshot = {
  aid: string;
  signedIn: boolean;
  signedInAt: number | null;
  lastError: string | null;
  lastInboundAt: number | null;
  lastOutboundAt: number | null;
  /** Where the identity's agent.md stands: `published`, `pending` (a publish is retried), `waiting` (not tried yet), `off`; null before it runs. */
  profile: string | null;
  groups: GroupLiveStatus[];
};

export type AccountLiveStatus = {
  observers: {
    onMessages: (groupId: string, messages: readonly GroupMessage[]) => void;
    onDecision: (d: DispatchDecision) => void;
    onGroupEvent: (groupId: string, e: GroupClientEvent) => void;
  };
  attach(run: { connectionFor?(groupId: string): { readonly status: string } | undefined; readonly groups?: readonly string[]; readonly profileState?: string }): void;
  markSignedIn(): void;
  markError(err: unknown): void;
  snapshot(): AccountLiveSnapshot;
};

export function createAccountLiveStatus(p: { aid: string; now: () => number }): AccountLiveStatus {
  const groups = new Map<string, Omit<GroupLiveStatus, "session">>();
  let run: Parameters<AccountLiveStatus["attach"]>[0] | undefined;
  let signedInAt: number | null = null;
  let lastError: string | null = null;
  const group = (groupId: string) => {
    let g = groups.get(groupId);
    if (!g) groups.set(groupId, (g = { groupId, lastInboundAt: null, lastOutboundAt: null, lastSkip: null, refused: 0, overShare: 0 }));
    return g;
  };
  return {
    observers: {
      onMessages(groupId, messages) {
        if (messages.length > 0) group(groupId).lastInboundAt = p.now();
      },
      onDecision(d) {
        const g = group(d.groupId);
        if (d.outcome.kind === "sent") g.lastOutboundAt = d.outcome.sentAt ?? p.now();
        else {
          g.lastSkip = { at: d.at, reason: d.outcome.reason, ...(d.detail ? { detail: d.detail } : {}) };
          if (d.outcome.reason === "sender-over-share" || d.outcome.reason === "strangers-over-share") g.overShare++;
        }
      },
      onGroupEvent(groupId, e) {
        if (e.type === "dropped" && e.reason === "refused-sender") group(groupId).refused++;
      },
    },
    attach(r) {
      run = r;
      for (const g of r.groups ?? []) group(g);
    },
    markSignedIn() {
      signedInAt = p.now();
      lastError = null;
    },
    markError(err) {
      lastError = err instanceof Error ? err.message : String(err);
    },
    snapshot() {
      const list = [...groups.values()].map((g) => ({ ...g, session: run?.connectionFor?.(g.groupId)?.status ?? "unknown" }));
      const latest = (k: "lastInboundAt" | "lastOutboundAt") => list.reduce<number | null>((m, g) => (g[k] !== null && (m === null || g[k]! > m) ? g[k] : m), null);
      return {
        aid: p.aid,
        signedIn: signedInAt !== null,
        signedInAt,
        lastError,
        lastInboundAt: latest("lastInboundAt"),
        lastOutboundAt: latest("lastOutboundAt"),
        profile: run?.profileState ?? null,
        groups: list,
      };
    },
  };
}
