// One identity's direct conversations, composed: the network's direct messages (DirectLink) go to
// the conversations (src/direct/), which answer through a monitor per peer — the same dispatch
// pipeline as groups, run as a direct conversation — sharing one allowance (budget windows and
// per-sender shares) across every peer, so a stranger's DM costs what a stranger's mention does.
// State (each peer's journal and memory, the shared books) is loaded at start and written before
// every send, after every settle, and at close.
import { join } from "node:path";
import { resolveGroupSettings } from "../config/load.ts";
import { resolveDirectSettings } from "../config/schema.ts";
import { compileDirectAccess, resolveDmPolicy } from "../direct/access.ts";
import { DirectConversations, type DirectConversationsParams } from "../direct/conversations.ts";
import { directKeyOf } from "../direct/journal.ts";
import { childLogger, errorFields } from "../log.ts";
import type { MemberTypes } from "../members/member-types.ts";
import { createGroupMonitor, MonitorState, type DispatchDecision } from "../monitor/monitor.ts";
import type { DirectLink } from "../network/direct-link.ts";
import type { StateStore } from "../state/file-store.ts";
import { createPairingStore } from "../state/pairing-store.ts";
import type { PersistedDirectState } from "../state/direct-state.ts";
import type { AgentBackend, ChannelConfig, DirectPairing, DmPolicy, IdentityConfig, Logger } from "../types.ts";

/** How a host runs an identity's direct messages. */
export interface DirectOptions {
  /** The policy when the identity's `dmPolicy` is not set. Standalone: allowlist; OpenClaw: pairing. */
  defaultPolicy?: DmPolicy;
  /** The pairing flow of `pairing` (the host's). Default standalone: the pairing store in `<stateDir>/pairing`. */
  pairing?: DirectPairing;
  /** Every event of every direct conversation (the CLI's transcript). */
  onEvent?: DirectConversationsParams["onEvent"];
}

export interface DirectRuntime {
  readonly policy: DmPolicy;
  readonly conversations: DirectConversations;
  /** Answers what waited from before a restart (call once the link is up). */
  resume(): void;
  /** Stops listening, closes every conversation and writes the state. */
  close(): void;
}

/** Saves that may wait (a conversation let go) are written at most this often. */
const SAVE_SOON_MS = 1000;

export function createDirectRuntime(p: {
  config: ChannelConfig;
  identityId: string;
  identity: IdentityConfig;
  link: DirectLink;
  store: StateStore;
  logger: Logger;
  backend: AgentBackend;
  memberTypes: MemberTypes;
  /** A sender we do not know yet: its agent.md says whether it is a person. */
  noteSender: (aid: string) => void;
  random?: (() => number) | undefined;
  onDecision?: ((d: DispatchDecision) => void) | undefined;
  options?: DirectOptions | undefined;
  stateDir: string;
}): DirectRuntime {
  const { config, identityId, identity, store } = p;
  const logger = p.logger;
  const policy = resolveDmPolicy(identity.dmPolicy, p.options?.defaultPolicy);
  const settings = resolveDirectSettings(identity.direct);
  // The dispatch settings every group gets by default ("*"): the reply policy, budget, dedup and retries.
  const dispatchSettings = resolveGroupSettings(config, identity, "*");
  const restored = loadDirect(store, identityId, logger);
  const books = new MonitorState(restored ? { budgetEvents: restored.budgetEvents, ...(restored.senderCharges ? { senderCharges: restored.senderCharges } : {}) } : undefined);
  const pairing = policy === "pairing" ? (p.options?.pairing ?? createPairingStore({ dir: join(p.stateDir, "pairing") })) : undefined;
  if (policy === "open") logger.log("warn", "direct.policy-open", { aid: identity.aid, note: "dmPolicy open: anyone may message this agent directly (each within their share of the budget)" });

  /** Armed by a save that may wait; cleared when it fires and at close. */
  let saveTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const saveNow = () => {
    if (saveTimer) clearTimeout(saveTimer);
    saveTimer = undefined;
    if (!store.saveDirect) return;
    const snap = books.snapshot();
    try {
      store.saveDirect(identityId, { version: 1, peers: conversations.snapshot(), budgetEvents: snap.budgetEvents, ...(snap.senderCharges ? { senderCharges: snap.senderCharges } : {}) });
    } catch (err) {
      logger.log("error", "direct.save-failed", errorFields(err));
    }
  };
  const persist = (urgency: "now" | "soon") => {
    if (urgency === "now" || closed) return saveNow();
    if (saveTimer) return;
    saveTimer = setTimeout(saveNow, SAVE_SOON_MS);
    saveTimer.unref?.();
  };

  const conversations: DirectConversations = new DirectConversations({
    identityId,
    aid: identity.aid,
    owner: identity.owner,
    settings,
    maxRetries: dispatchSettings.maxRetries,
    retryBackoffMs: dispatchSettings.retryBackoffMs,
    historySize: dispatchSettings.dedup.historySize,
    access: compileDirectAccess({ policy, owner: identity.owner, humans: config.humans, allowFrom: identity.allowFrom ?? [], denyFrom: identity.denyFrom ?? [] }),
    pairing,
    peerIsPerson: (peer) => p.memberTypes.typeOf(peer).type === "human",
    openAgentSide: ({ peer, sender }) => {
      const monitor = createGroupMonitor({
        identityId,
        identity,
        groupId: directKeyOf(peer),
        conversation: { kind: "direct", peer },
        settings: dispatchSettings,
        humans: config.humans,
        memberTypes: p.memberTypes,
        backend: p.backend,
        sender,
        logger: childLogger(logger, { peer }),
        ...(p.random ? { random: p.random } : {}),
        state: books,
        onStateChange: () => persist("soon"),
        ...(p.onDecision ? { onDecision: p.onDecision } : {}),
      });
      return { handle: monitor.handle, close: () => monitor.close() };
    },
    send: async ({ peer, text, sessionId }) => {
      await p.link.sendDirect({ peer, text, sessionId });
    },
    restored: restored?.peers,
    persist,
    now: Date.now,
    logger,
    onEvent: p.options?.onEvent,
  });
  const unsubscribe = p.link.onDirect((m) => {
    p.noteSender(m.peer);
    conversations.receive(m);
  });
  logger.log("info", "direct.ready", { policy, maxConversations: settings.maxConversations, restoredPeers: restored?.peers.length ?? 0 });

  return {
    policy,
    conversations,
    resume: () => conversations.resume(),
    close() {
      if (closed) return;
      closed = true;
      unsubscribe();
      conversations.close();
      saveNow();
    },
  };
}

function loadDirect(store: StateStore, identityId: string, logger: Logger): PersistedDirectState | undefined {
  try {
    return store.loadDirect?.(identityId);
  } catch (err) {
    // Unreadable (not corrupt: that is moved aside): start without it, loudly.
    logger.log("error", "direct.load-failed", errorFields(err));
    return undefined;
  }
}
