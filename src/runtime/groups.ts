// Per configured group of one identity: a group client (when to speak) feeding a monitor (what to
// say), with its state loaded at start and saved when it changes. The connections come later
// (they need the groups to feed): the groups reach theirs through `connectionOf`.
import { initGroupClientForIdentity, type GroupClient, type GroupClientEvent } from "../group/group-client.ts";
import { GroupMemory } from "../group/memory.ts";
import { childLogger } from "../log.ts";
import { dedupKeyOf } from "../monitor/dedup.ts";
import { createLazyGroupMonitor } from "../monitor/lazy-monitor.ts";
import type { DispatchDecision, GroupMonitor } from "../monitor/monitor.ts";
import { aidDomain, groupServiceAid } from "../network/access-point.ts";
import type { StateStore } from "../state/file-store.ts";
import { createSaveScheduler } from "../state/save-scheduler.ts";
import type { GroupConnection } from "../transport/connection.ts";
import type { AgentBackend, ChannelConfig, GroupSettings, IdentityConfig, Logger, PersistedGroupState } from "../types.ts";
import { settledCursor, trackCursor, type CursorTrack } from "./cursor.ts";
import type { IdentityProfile } from "./profile.ts";
import { createGroupSender } from "./sender.ts";

export interface GroupRuntime extends CursorTrack {
  groupId: string;
  client: GroupClient;
  monitor: GroupMonitor;
  /** What we said in the group: the client writes it, the monitor reads it, a save keeps it. */
  memory: GroupMemory;
}

export interface GroupRuntimes {
  readonly byId: ReadonlyMap<string, GroupRuntime>;
  /** groupId → the group service that serves it, from each group's resolved settings (once). */
  readonly serviceOf: ReadonlyMap<string, string>;
  /** Writes the group's state now (the write itself is asynchronous and coalesced). */
  saveNow(g: GroupRuntime): void;
  /** Writes it within SAVE_DEBOUNCE_MS; nothing once the identity closes (close saves each group itself). */
  saveSoon(g: GroupRuntime): void;
  /** Resolves once every requested save is on disk. */
  flush(): Promise<void>;
  /**
   * How urgently the identity needs its connection, for the order of sign-ins after a restart:
   * MENTION_PENDING while a mention waits for its dispatch, else the time of its latest activity
   * (a message accepted, or its own latest message, saved across restarts), 0 when none.
   */
  urgency(): number;
}

/** The urgency of an identity holding a mention it has not answered yet: above any time. */
export const MENTION_PENDING = Number.MAX_SAFE_INTEGER;

// A busy group moves its cursor on every message; state is written at most this often for that.
const SAVE_DEBOUNCE_MS = 1000;

export function createGroupRuntimes(p: {
  config: ChannelConfig;
  identityId: string;
  identity: IdentityConfig;
  /** The identity's enabled groups with their resolved settings (resolveIdentityGroups). */
  groups: ReadonlyMap<string, GroupSettings>;
  store: StateStore;
  logger: Logger;
  profile: IdentityProfile;
  backend: AgentBackend;
  random?: (() => number) | undefined;
  onDecision?: ((decision: DispatchDecision) => void) | undefined;
  onGroupEvent?: ((groupId: string, event: GroupClientEvent) => void) | undefined;
  /** The connection that carries the group (valid once the connections are open). */
  connectionOf: (groupId: string) => GroupConnection;
  isClosing: () => boolean;
}): GroupRuntimes {
  const { config, identityId, identity, store, logger, profile } = p;
  const byId = new Map<string, GroupRuntime>();
  const serviceOf = new Map<string, string>();
  /** Groups holding a mention that no dispatch has ended yet. */
  const mentionsPending = new Set<string>();
  let lastActiveAt = 0;

  // Saves are asynchronous and coalesced (src/state/save-scheduler.ts): one write in
  // flight per group, the state read when the write starts (latest wins), flushed by close().
  const saves = createSaveScheduler({
    logger,
    save: async (groupId) => {
      const g = byId.get(groupId);
      if (!g) return;
      if (store.saveGroupAsync) await store.saveGroupAsync(identityId, groupId, persistedOf(g));
      else store.saveGroup(identityId, groupId, persistedOf(g));
    },
  });
  const saveNow = (g: GroupRuntime) => saves.request(g.groupId, 0);
  const saveSoon = (g: GroupRuntime) => {
    if (!p.isClosing()) saves.request(g.groupId, SAVE_DEBOUNCE_MS);
  };

  for (const [groupId, settings] of p.groups) {
    serviceOf.set(groupId, groupServiceAid(settings.accessPoint || aidDomain(identity.aid)));
    const restored = store.loadGroup(identityId, groupId);
    lastActiveAt = Math.max(lastActiveAt, restored?.lastSelfSpeakAt ?? 0);
    const glog = childLogger(logger, { group: groupId });
    // Our messages the group gives back (an echo, or history after a restart that lost the state
    // save) rejoin the reply memory: never the same thing twice.
    const memory = new GroupMemory({ historySize: settings.dedup.historySize, restored: restored ?? undefined, restoreReplies: dedupKeyOf });
    // The callbacks below only run once `g` is assigned (after the first message or dispatch).
    let g: GroupRuntime;
    // Built on first use (src/monitor/lazy-monitor.ts): idle groups stay small.
    const monitor = createLazyGroupMonitor({
      identityId,
      identity,
      groupId,
      settings,
      humans: config.humans,
      // Config first, then the group service's get_members, then senders' own agent.md.
      memberTypes: profile.memberTypes,
      // The group service's announcement, rules and message size: the prompt's group layer.
      groupProfile: profile.groups.source(groupId),
      backend: p.backend,
      sender: createGroupSender({ connection: () => p.connectionOf(groupId), groupId, selfAid: identity.aid, logger }),
      logger: glog,
      ...(p.random ? { random: p.random } : {}),
      ...(restored ? { restored } : {}),
      onStateChange: () => saveSoon(g),
      ...(p.onDecision ? { onDecision: p.onDecision } : {}),
    });
    const client = initGroupClientForIdentity({
      identityId,
      groupId,
      identity,
      humans: config.humans,
      memberTypes: profile.memberTypes,
      // Open questions nobody answers are taken where another agent is known (src/group/orphans.ts).
      inRoom: () => profile.memberTypes.anyAgent(identity.aid),
      settings,
      dispatch: monitor.handle,
      logger: glog,
      restored: { cursor: restored?.cursor ?? 0 },
      memory,
      onEvent: (e) => {
        trackCursor(g, e);
        if (e.type === "accepted") {
          profile.noteSender(e.message.sender);
          lastActiveAt = Math.max(lastActiveAt, e.atLocal);
          if (e.message.isMention) mentionsPending.add(groupId);
        }
        if (e.type === "dispatch-end") {
          if (e.ok || e.retryInMs === null) mentionsPending.delete(groupId);
          saveNow(g);
          if (!p.isClosing()) p.connectionOf(groupId).acknowledge(groupId);
        }
        p.onGroupEvent?.(groupId, e);
      },
    });
    g = { groupId, client, monitor, memory, restoredCursor: restored?.cursor ?? 0, unsettled: new Set(), inFlight: new Map() };
    byId.set(groupId, g);
  }
  const urgency = (): number => {
    if (mentionsPending.size > 0) return MENTION_PENDING;
    let latest = lastActiveAt;
    for (const g of byId.values()) latest = Math.max(latest, g.memory.lastSelfSpeakAt ?? 0);
    return latest;
  };
  return { byId, serviceOf, saveNow, saveSoon, flush: () => saves.flush(), urgency };
}

/** What is saved for a group: the settled cursor, what we said there, and the monitor's books. */
function persistedOf(g: GroupRuntime): PersistedGroupState {
  const snap = g.monitor.snapshot();
  const said = g.memory.snapshot();
  return {
    version: 1,
    cursor: settledCursor(g),
    lastSelfSpeakAt: said.lastSelfSpeakAt,
    replyHashes: said.replyHashes,
    replyTexts: said.replyTexts,
    budgetEvents: snap.budgetEvents,
    ...(snap.senderCharges ? { senderCharges: snap.senderCharges } : {}),
    agentChain: snap.agentChain,
  };
}
