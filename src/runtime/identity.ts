// The composition root for one identity: its link to the network (one signed-in socket), per
// access point a group connection over the session with `group.<ap>`, and per configured group a
// group client (when to speak) feeding a monitor (what to say), with state loaded at start and
// saved when it changes and at close. `start`, the OpenClaw plugin and createGroupAgent all use it.
import { listGroupsForIdentity, resolveGroupSettings } from "../config/load.ts";
import { closeGroupClientForIdentity, initGroupClientForIdentity } from "../group/group-client.ts";
import type { GroupClient, GroupClientEvent } from "../group/group-client.ts";
import type { MemberTypes } from "../group/member-types.ts";
import { childLogger, errorFields, silentLogger } from "../log.ts";
import { createModelCallLimiter } from "../monitor/model-calls.ts";
import { createLazyGroupMonitor } from "../monitor/lazy-monitor.ts";
import type { DispatchDecision, GroupMonitor } from "../monitor/monitor.ts";
import { createFileStateStore, defaultStateDir, type StateStore } from "../state/file-store.ts";
import type { AgentLink } from "../network/peer-channel.ts";
import type { FetchLike } from "../profile/publish.ts";
import { connectConfiguredIdentity } from "./link.ts";
import { createSaveScheduler } from "../state/save-scheduler.ts";
import { createIdentityProfile, resolveProfileFetch } from "./profile.ts";
import { createGroupConnection } from "../transport/connection.ts";
import { createGroupSender, reportMemberships, sendWhenConnected } from "./sender.ts";
import { aidDomain, groupServiceAid } from "../network/access-point.ts";
import { equalsLower } from "../group/same-lower.ts";
import { settledCursor, trackCursor, type CursorTrack } from "./cursor.ts";
import type { GroupConnection, GroupConnectionParams, GroupEvent } from "../transport/connection.ts";
import type { AgentBackend, ChannelConfig, GroupMessage, Logger, PersistedGroupState } from "../types.ts";

export class RuntimeError extends Error {
  readonly code: "IDENTITY_UNKNOWN" | "IDENTITY_DISABLED" | "NO_NETWORK" | "NO_GROUPS" | "GROUP_UNKNOWN" | "CLOSED";
  readonly identityId: string;
  constructor(code: RuntimeError["code"], identityId: string, message: string) {
    super(message);
    this.name = "RuntimeError";
    this.code = code;
    this.identityId = identityId;
  }
}

export interface StartIdentityParams {
  config: ChannelConfig;
  identityId: string;
  backend: AgentBackend;
  logger?: Logger;
  /** Aborting it closes everything and saves state; `done` resolves afterwards. */
  abortSignal?: AbortSignal;
  /** Default: a file store in `config.stateDir`, else `ACP_GROUP_STATE_DIR`, else ~/.acp-group/state. */
  store?: StateStore;
  random?: () => number;
  /** Every dispatch decision (also logged as `monitor.dispatch`). */
  onDecision?: (decision: DispatchDecision) => void;
  /** Group client events (accepted, dropped, dispatch-start/end): for `start`'s live view and metrics. */
  onGroupEvent?: (groupId: string, event: GroupClientEvent) => void;
  /** Every message delivered by the transport, before the group client (for `start`'s transcript). */
  onMessages?: (groupId: string, messages: readonly GroupMessage[]) => void;
  onTransportEvent?: (groupId: string, event: GroupEvent) => void;
  /**
   * The identity signed in to the network (one message socket). Default: `connect`, else the
   * identity's key and certificate signed in to its access point. An injected link is the
   * caller's to close; one the runtime made is closed with the identity.
   */
  link?: AgentLink;
  /** Builds the link when none is injected. Default: connectConfiguredIdentity. */
  connect?: (params: { config: ChannelConfig; identityId: string; logger: Logger }) => AgentLink & { close(): Promise<void> | void };
  /**
   * Where agent.md requests go (`https://<aid>/agent.md`: publishing ours after sign-in, reading
   * unknown senders'). Default: built from the config (see profileFetchFromConfig) when the
   * runtime connects the identity itself; none when a `link` or `connect` is injected. null: none.
   */
  profileFetch?: FetchLike | null;
  /** Transport tuning (heartbeat, retry backoff, timeouts). */
  connection?: Pick<GroupConnectionParams, "heartbeatMs" | "requestTimeoutMs" | "reconnect" | "sendRetry" | "pageSize">;
}

export interface RunningIdentity {
  readonly identityId: string;
  readonly aid: string;
  readonly groups: readonly string[];
  /** Resolves once connected and every group's backlog after its cursor was pulled. */
  readonly ready: Promise<void>;
  /** Resolves after close (abort or close()) finished and state was saved. Never rejects. */
  readonly done: Promise<void>;
  /** The connection to the identity's own access point's group service (`group.<its domain>`). */
  readonly connection: GroupConnection;
  /** Every group connection, by group service aid. */
  readonly connections: ReadonlyMap<string, GroupConnection>;
  /** The connection that carries `groupId`. */
  connectionFor(groupId: string): GroupConnection | undefined;
  groupClient(groupId: string): GroupClient | undefined;
  monitor(groupId: string): GroupMonitor | undefined;
  /** Who is a human or an agent as this identity knows it (config, group service, agent.md). */
  readonly memberTypes: MemberTypes;
  /** Posts as this identity (the host's outbound path). Counted as our own message. */
  sendText(groupId: string, text: string): Promise<{ msgId: string; timestamp: number }>;
  close(): Promise<void>;
}

interface GroupRuntime extends CursorTrack {
  groupId: string;
  client: GroupClient;
  monitor: GroupMonitor;
}

// A busy group moves its cursor on every message; state is written at most this often for that.
const SAVE_DEBOUNCE_MS = 1000;

export function startIdentity(p: StartIdentityParams): RunningIdentity {
  const { config, identityId } = p;
  const identity = config.identities[identityId];
  if (!identity) throw new RuntimeError("IDENTITY_UNKNOWN", identityId, `identities.${identityId}: no such identity in the configuration`);
  if (!identity.enabled) throw new RuntimeError("IDENTITY_DISABLED", identityId, `identities.${identityId}: identity is disabled`);
  const groups = listGroupsForIdentity(config, identity);
  if (groups.length === 0) {
    throw new RuntimeError("NO_GROUPS", identityId, `identities.${identityId}: no enabled group (add one under groups or identities.${identityId}.groups)`);
  }
  const logger = childLogger(p.logger ?? silentLogger, { identity: identityId });
  const store = p.store ?? createFileStateStore({ dir: config.stateDir ?? defaultStateDir(), logger });
  const runtimes = new Map<string, GroupRuntime>();
  const aidLower = identity.aid.toLowerCase();
  const stateDir = config.stateDir ?? defaultStateDir();
  const profile = createIdentityProfile({
    config,
    identityId,
    identity,
    fetch: resolveProfileFetch({ ...p, identity, logger }),
    stateDir,
    logger,
    now: Date.now,
  });
  // Each group dispatches one batch at a time (its lock); across groups, at most this many model
  // calls run at once, so a burst in many groups cannot fan out into as many parallel calls. Only
  // the call itself takes a slot: a reply waiting out its human-like delay holds none, and a
  // mention's call goes ahead of unaddressed talk waiting for one.
  // Slots also time out (modelCallTimeoutMs) and are released at close even when a
  // back-end ignores its abort signal (src/monitor/model-calls.ts).
  const modelCalls = createModelCallLimiter({ backend: p.backend, concurrency: config.maxConcurrentDispatches, timeoutMs: config.modelCallTimeoutMs });
  const backend: AgentBackend = modelCalls.backend;
  let closing: Promise<void> | undefined;

  const persistedOf = (g: GroupRuntime): PersistedGroupState => {
    const snap = g.monitor.snapshot();
    const last = [snap.lastSelfSpeakAt, g.client.lastSelfSpeakAt].filter((v): v is number => typeof v === "number");
    return {
      version: 1,
      cursor: settledCursor(g),
      lastSelfSpeakAt: last.length ? Math.max(...last) : null,
      replyHashes: snap.replyHashes,
      replyTexts: snap.replyTexts,
      budgetEvents: snap.budgetEvents,
      ...(snap.senderCharges ? { senderCharges: snap.senderCharges } : {}),
      agentChain: snap.agentChain,
    };
  };
  // Saves are asynchronous and coalesced (src/state/save-scheduler.ts): one write in
  // flight per group, the state read when the write starts (latest wins), flushed by close().
  const saves = createSaveScheduler({
    logger,
    save: async (groupId) => {
      const g = runtimes.get(groupId);
      if (!g) return;
      if (store.saveGroupAsync) await store.saveGroupAsync(identityId, groupId, persistedOf(g));
      else store.saveGroup(identityId, groupId, persistedOf(g));
    },
  });
  const saveNow = (g: GroupRuntime) => saves.request(g.groupId, 0);
  const saveSoon = (g: GroupRuntime) => {
    if (!closing) saves.request(g.groupId, SAVE_DEBOUNCE_MS);
  };

  /** groupId → the group service that serves it, from each group's resolved settings (once). */
  const serviceOfGroup = new Map<string, string>();
  for (const groupId of groups) {
    const settings = resolveGroupSettings(config, identity, groupId);
    serviceOfGroup.set(groupId, groupServiceAid(settings.accessPoint || aidDomain(identity.aid)));
    const restored = store.loadGroup(identityId, groupId);
    const glog = childLogger(logger, { group: groupId });
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
      backend,
      sender: createGroupSender({ connection: () => connectionOf(groupId), groupId, selfAid: identity.aid, logger }),
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
      settings,
      dispatch: monitor.handle,
      logger: glog,
      restored: { cursor: restored?.cursor ?? 0, lastSelfSpeakAt: restored?.lastSelfSpeakAt ?? null },
      onEvent: (e) => {
        trackCursor(g, e);
        if (e.type === "accepted") profile.noteSender(e.message.sender);
        if (e.type === "dispatch-end") {
          saveNow(g);
          if (!closing) connectionOf(groupId).acknowledge(groupId);
        }
        p.onGroupEvent?.(groupId, e);
      },
    });
    g = { groupId, client, monitor, restoredCursor: restored?.cursor ?? 0, unsettled: new Set(), inFlight: new Map() };
    runtimes.set(groupId, g);
  }

  let ownedLink: (AgentLink & { close(): Promise<void> | void }) | undefined;
  let link = p.link;
  if (!link) {
    try {
      link = ownedLink = (p.connect ?? connectConfiguredIdentity)({ config, identityId, logger });
    } catch (err) {
      // A missing or locked key names the identity; the other identities keep running.
      throw new RuntimeError("NO_NETWORK", identityId, `identities.${identityId}: cannot connect ${identity.aid}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // Each group is served by `group.<ap>` of its access point (default: the identity's own).
  const homeService = groupServiceAid(aidDomain(identity.aid));
  const byService = new Map<string, string[]>();
  for (const [groupId, service] of serviceOfGroup) byService.set(service, [...(byService.get(service) ?? []), groupId]);
  const connections = new Map<string, GroupConnection>();
  for (const [service, serviceGroups] of byService) {
    connections.set(service, createGroupConnection({
      channel: link.channel(service),
      aid: identity.aid,
      groups: serviceGroups,
      logger: childLogger(logger, { service }),
      ...p.connection,
      getCursor: (groupId) => {
        const g = runtimes.get(groupId);
        return g ? settledCursor(g) : 0;
      },
      // The server's cursor must not pass a message we still hold (see settledCursor).
      ackCursor: (groupId) => {
        const g = runtimes.get(groupId);
        return g ? settledCursor(g) : 0;
      },
      onMessages: (groupId, messages) => {
        const g = runtimes.get(groupId);
        if (!g) return;
        try {
          p.onMessages?.(groupId, messages);
        } catch (err) {
          // A display observer's failure must not refuse the batch: the transport would re-pull it,
          // the observer would throw again, and the group would go deaf.
          logger.log("error", "runtime.on-messages-failed", { group: groupId, ...errorFields(err) });
        }
        // Our own messages coming back restore the reply memory before the client sees them.
        for (const m of messages) if (equalsLower(m.sender, aidLower)) g.monitor.rememberOwnMessage(m);
        g.client.feedBufferGate(messages);
        saveSoon(g);
      },
      onEvent: (groupId, event) => {
        // A newcomer's type comes with the members list: read it again.
        if (event.event === "member_joined" && !closing && runtimes.has(groupId)) void profile.refreshMembers(connectionOf(groupId), groupId);
        p.onTransportEvent?.(groupId, event);
      },
    }));
  }
  const connectionOf = (groupId: string): GroupConnection => connections.get(serviceOfGroup.get(groupId)!)!;
  const connection = connections.get(homeService) ?? [...connections.values()][0]!;

  // A link that says when it is signed in (the network's agent) fails `ready` at once when its
  // key or certificate is refused, instead of leaving it waiting for a session that never comes.
  const linkReady = (link as { ready?: unknown }).ready;
  // After sign-in, never in the way of joining: a failure is one warn line.
  void profile
    .publishAfterSignIn(link as { token?: () => string | undefined }, linkReady instanceof Promise ? linkReady : undefined)
    .catch((err: unknown) => logger.log("warn", "profile.publish-failed", { aid: identity.aid, ...errorFields(err) }));
  const ready = Promise.all([
    ...(linkReady instanceof Promise ? [linkReady] : []),
    ...[...connections.values()].map(async (c) => {
      await c.start();
      const served = byService.get(c.peer) ?? [];
      await Promise.all([reportMemberships(c, served, logger), ...served.map((groupId) => profile.refreshMembers(c, groupId))]);
    }),
  ]).then(() => undefined);
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const close = (): Promise<void> => {
    closing ??= (async () => {
      p.abortSignal?.removeEventListener("abort", onAbort);
      // Every monitor before the transport: a model answer landing while the socket closes must
      // end as "group-closed" (unsettled, answered next run), not as a failed send counted as
      // handled; and no group may wait on another group's model call for the dispatch slot.
      for (const g of runtimes.values()) g.monitor.close();
      modelCalls.close(); // no group waits on a back-end that ignores its abort signal
      profile.close();
      // Then stop intake so nothing arrives while groups settle.
      await Promise.all(
        [...connections.values()].map((c) => c.close().catch((err) => logger.log("warn", "runtime.close-transport-failed", { service: c.peer, ...errorFields(err) }))),
      );
      await Promise.resolve(ownedLink?.close()).catch((err: unknown) => logger.log("warn", "runtime.close-link-failed", errorFields(err)));
      for (const g of runtimes.values()) {
        await closeGroupClientForIdentity(g.client).catch((err) =>
          logger.log("warn", "runtime.close-group-failed", { group: g.groupId, ...errorFields(err) }),
        );
        saveNow(g);
      }
      await saves.flush(); // every requested save is on disk before done
      logger.log("info", "runtime.closed", { groups: groups.length });
      resolveDone();
    })();
    return closing;
  };
  const onAbort = () => void close();
  if (p.abortSignal?.aborted) void close();
  else p.abortSignal?.addEventListener("abort", onAbort, { once: true });

  return {
    identityId,
    aid: identity.aid,
    groups,
    ready,
    done,
    connection,
    connections,
    connectionFor: (groupId) => (runtimes.has(groupId) ? connectionOf(groupId) : undefined),
    groupClient: (groupId) => runtimes.get(groupId)?.client,
    monitor: (groupId) => runtimes.get(groupId)?.monitor,
    memberTypes: profile.memberTypes,
    async sendText(groupId, text) {
      const g = runtimes.get(groupId);
      if (!g) throw new RuntimeError("GROUP_UNKNOWN", identityId, `group ${groupId} is not configured for identity ${identityId}`);
      if (closing) throw new RuntimeError("CLOSED", identityId, "identity is closed");
      const sent = await sendWhenConnected(connectionOf(groupId), { groupId, content: text }, logger);
      g.client.recordOwnMessage({ msgId: sent.msgId, timestamp: sent.timestamp, content: text });
      return sent;
    },
    close,
  };
}

