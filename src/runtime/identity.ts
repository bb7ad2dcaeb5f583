// The composition root for one identity: its link to the network (one signed-in socket), per
// access point a group connection over the session with `group.<ap>`, and per configured group a
// group client (when to speak) feeding a monitor (what to say), with state loaded at start and
// saved when it changes and at close; beside the groups, its direct conversations (direct.ts).
// `start`, `run`, the OpenClaw plugin and createGroupAgent all use it.
import { resolveIdentityGroups } from "../config/load.ts";
import { closeGroupClientForIdentity } from "../group/group-client.ts";
import type { GroupClient, GroupClientEvent } from "../group/group-client.ts";
import type { MemberTypes } from "../members/member-types.ts";
import { childLogger, errorFields, silentLogger } from "../log.ts";
import { dedupReady } from "../monitor/dedup.ts";
import { createModelCallLimiter, type ModelCallLimiter } from "../monitor/model-calls.ts";
import type { DispatchDecision, GroupMonitor } from "../monitor/monitor.ts";
import { createFileStateStore, defaultStateDir, type StateStore } from "../state/file-store.ts";
import { acquireIdentityLock } from "../state/identity-lock.ts";
import type { AgentLink } from "../network/peer-channel.ts";
import type { FetchLike } from "../profile/publish.ts";
import { openGroupConnections, type GroupConnections } from "./connections.ts";
import { createGroupRuntimes, type GroupRuntimes } from "./groups.ts";
import { connectConfiguredIdentity } from "./link.ts";
import { createDirectRuntime, type DirectOptions, type DirectRuntime } from "./direct.ts";
import { directLinkOf } from "../network/direct-link.ts";
import { resolveDmPolicy } from "../direct/access.ts";
import { createIdentityProfile, resolveProfileFetch, type IdentityProfile, type ProfilePublishState } from "./profile.ts";
import { reportMemberships, sendWhenConnected } from "./sender.ts";
import type { GroupConnection, GroupConnectionParams, GroupEvent } from "../transport/connection.ts";
import type { AgentBackend, ChannelConfig, GroupMessage, GroupSettings, IdentityConfig, Logger } from "../types.ts";

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
  connect?: (params: { config: ChannelConfig; identityId: string; logger: Logger; signInPriority?: () => number }) => AgentLink & { close(): Promise<void> | void };
  /**
   * Where agent.md requests go (`https://<aid>/agent.md`: publishing ours after sign-in, reading
   * unknown senders'). Default: built from the config (see profileFetchFromConfig) when the
   * runtime connects the identity itself; none when a `link` or `connect` is injected. null: none.
   */
  profileFetch?: FetchLike | null;
  /** Transport tuning (heartbeat, retry backoff, timeouts). */
  connection?: Pick<GroupConnectionParams, "heartbeatMs" | "requestTimeoutMs" | "reconnect" | "sendRetry" | "pageSize">;
  /** Direct messages: the host's default policy, its pairing flow, a live view. Run whenever the link carries them. */
  direct?: DirectOptions;
}

export interface RunningIdentity {
  readonly identityId: string;
  readonly aid: string;
  readonly groups: readonly string[];
  /** Resolves once connected and every group's backlog after its cursor was pulled. */
  readonly ready: Promise<void>;
  /** Resolves after close (abort or close()) finished and state was saved. Never rejects. */
  readonly done: Promise<void>;
  /** The connection to the identity's own access point's group service (`group.<its domain>`); none for an identity with no group (direct messages only). */
  readonly connection: GroupConnection | undefined;
  /** Every group connection, by group service aid. */
  readonly connections: ReadonlyMap<string, GroupConnection>;
  /** The connection that carries `groupId`. */
  connectionFor(groupId: string): GroupConnection | undefined;
  groupClient(groupId: string): GroupClient | undefined;
  monitor(groupId: string): GroupMonitor | undefined;
  /** Who is a human or an agent as this identity knows it (config, group service, agent.md). */
  readonly memberTypes: MemberTypes;
  /** Where its agent.md stands (`pending` while a publish is retried). */
  readonly profileState: ProfilePublishState;
  /** Resolves once its agent.md is published or up to date, or nothing is to be published, or it closed. Never rejects. */
  readonly profilePublished: Promise<void>;
  /** Posts as this identity (the host's outbound path). Counted as our own message. */
  sendText(groupId: string, text: string): Promise<{ msgId: string; timestamp: number }>;
  /** The identity's direct conversations; undefined when its link carries none (an in-memory test link). */
  readonly direct: DirectRuntime | undefined;
  /** Writes to `peer` directly as this identity (the host's outbound path): on the peer's session, or a new one. */
  sendDirect(peer: string, text: string): Promise<{ sessionId: string }>;
  close(): Promise<void>;
}

type OwnedLink = AgentLink & { close(): Promise<void> | void };

/**
 * Starts one identity, in this order: check it against the config, its profile and model-call
 * slots, its groups (client + monitor + saved state), its link to the network, one connection per
 * group service, then sign-in, joining and the members lists in the background (`ready`).
 */
export function startIdentity(p: StartIdentityParams): RunningIdentity {
  const { config, identityId } = p;
  const { identity, groups, settings } = checkIdentity(config, identityId, p.direct);
  // One identity runs in one process: a second process on this state dir is refused here, before
  // anything connects (IdentityInUseError names the first). Released when the identity closes.
  const lock = acquireIdentityLock({ stateDir: config.stateDir ?? defaultStateDir(), aid: identity.aid });
  const logger = childLogger(p.logger ?? silentLogger, { identity: identityId });
  const store = p.store ?? createFileStateStore({ dir: config.stateDir ?? defaultStateDir(), logger });
  const profile = createIdentityProfile({
    config,
    identityId,
    identity,
    fetch: resolveProfileFetch({ ...p, identity, logger }),
    stateDir: config.stateDir ?? defaultStateDir(),
    logger,
    now: Date.now,
    random: p.random,
  });
  // Each group dispatches one batch at a time (its lock); across groups, at most this many model
  // calls run at once, so a burst in many groups cannot fan out into as many parallel calls. Only
  // the call itself takes a slot: a reply waiting out its human-like delay holds none, and a
  // mention's call goes ahead of unaddressed talk waiting for one.
  // Slots also time out (modelCallTimeoutMs) and are released at close even when a
  // back-end ignores its abort signal (src/monitor/model-calls.ts).
  const modelCalls = createModelCallLimiter({ backend: p.backend, concurrency: config.maxConcurrentDispatches, timeoutMs: config.modelCallTimeoutMs });
  let closing: Promise<void> | undefined;
  const isClosing = () => closing !== undefined;
  // The groups reach their connection late: the connections are opened once the groups exist.
  let connections: GroupConnections | undefined;
  const connectionOf = (groupId: string) => connections!.connectionOf(groupId);

  const runtimes = createGroupRuntimes({
    config,
    identityId,
    identity,
    groups: settings,
    store,
    logger,
    profile,
    backend: modelCalls.backend,
    random: p.random,
    onDecision: p.onDecision,
    onGroupEvent: p.onGroupEvent,
    connectionOf,
    isClosing,
  });
  let linked: ReturnType<typeof linkOf>;
  try {
    linked = linkOf(p, identity, logger, runtimes.urgency);
  } catch (err) {
    lock.release();
    throw err;
  }
  const { link, owned } = linked;
  const directLink = directLinkOf(link);
  if (!directLink && groups.length === 0) {
    lock.release();
    void Promise.resolve(owned?.close()).catch(() => {});
    throw new RuntimeError("NO_GROUPS", identityId, `identities.${identityId}: no enabled group, and this link carries no direct messages`);
  }
  const direct = directLink
    ? createDirectRuntime({
        config,
        identityId,
        identity,
        link: directLink,
        store,
        logger,
        backend: modelCalls.backend,
        memberTypes: profile.memberTypes,
        noteSender: (aid) => profile.noteSender(aid),
        random: p.random,
        onDecision: p.onDecision,
        options: p.direct,
        stateDir: config.stateDir ?? defaultStateDir(),
      })
    : undefined;
  connections = openGroupConnections({
    link,
    identity,
    groups: runtimes,
    profile,
    logger,
    tuning: p.connection,
    onMessages: p.onMessages,
    onTransportEvent: p.onTransportEvent,
    isClosing,
  });
  const { ready, published } = signInAndJoin({ link, connections, profile, identity, logger });
  // What waited from before a restart is answered once signed in.
  ready.then(() => direct?.resume(), () => {});

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const close = (): Promise<void> => {
    closing ??= (async () => {
      p.abortSignal?.removeEventListener("abort", onAbort);
      await closeIdentity({ runtimes, direct, connections: connections!, modelCalls, profile, owned, logger });
      lock.release();
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
    connection: connections.home,
    connections: connections.byService,
    connectionFor: (groupId) => (runtimes.byId.has(groupId) ? connectionOf(groupId) : undefined),
    groupClient: (groupId) => runtimes.byId.get(groupId)?.client,
    monitor: (groupId) => runtimes.byId.get(groupId)?.monitor,
    memberTypes: profile.memberTypes,
    get profileState() {
      return profile.publishState;
    },
    profilePublished: published,
    direct,
    async sendDirect(peer, text) {
      if (!directLink) throw new RuntimeError("NO_NETWORK", identityId, `${identity.aid}: this link carries no direct messages`);
      if (closing) throw new RuntimeError("CLOSED", identityId, "identity is closed");
      return directLink.sendDirect({ peer, text });
    },
    async sendText(groupId, text) {
      const g = runtimes.byId.get(groupId);
      if (!g) throw new RuntimeError("GROUP_UNKNOWN", identityId, `group ${groupId} is not configured for identity ${identityId}`);
      if (closing) throw new RuntimeError("CLOSED", identityId, "identity is closed");
      const sent = await sendWhenConnected(connectionOf(groupId), { groupId, content: text }, logger);
      g.client.recordOwnMessage({ msgId: sent.msgId, timestamp: sent.timestamp, content: text });
      return sent;
    },
    close,
  };
}

/**
 * The identity as configured and its enabled groups; a RuntimeError naming what is missing. No
 * group is fine while it takes direct messages (an identity for DMs only); with neither it would
 * run for nothing.
 */
function checkIdentity(config: ChannelConfig, identityId: string, direct: DirectOptions | undefined): { identity: IdentityConfig; groups: string[]; settings: ReadonlyMap<string, GroupSettings> } {
  const identity = config.identities[identityId];
  if (!identity) throw new RuntimeError("IDENTITY_UNKNOWN", identityId, `identities.${identityId}: no such identity in the configuration`);
  if (!identity.enabled) throw new RuntimeError("IDENTITY_DISABLED", identityId, `identities.${identityId}: identity is disabled`);
  // Each group's settings resolved once, here; the group runtimes take them as they are.
  const settings = resolveIdentityGroups(config, identity);
  const groups = [...settings.keys()];
  if (groups.length === 0 && resolveDmPolicy(identity.dmPolicy, direct?.defaultPolicy) === "disabled") {
    throw new RuntimeError("NO_GROUPS", identityId, `identities.${identityId}: no enabled group and direct messages disabled (add a group under groups or identities.${identityId}.groups, or set dmPolicy)`);
  }
  return { identity, groups, settings };
}

/** The injected link, else one the runtime makes (and closes with the identity). */
function linkOf(p: StartIdentityParams, identity: IdentityConfig, logger: Logger, signInPriority: () => number): { link: AgentLink; owned?: OwnedLink } {
  if (p.link) return { link: p.link };
  try {
    // After a restart of the network the most urgent identities sign in first (runtimes.urgency).
    const owned = (p.connect ?? connectConfiguredIdentity)({ config: p.config, identityId: p.identityId, logger, signInPriority });
    return { link: owned, owned };
  } catch (err) {
    // A missing or locked key names the identity; the other identities keep running.
    throw new RuntimeError("NO_NETWORK", p.identityId, `identities.${p.identityId}: cannot connect ${identity.aid}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Resolves once signed in, every connection started, memberships reported and the members lists
 * read. agent.md is published after sign-in, never in the way of joining.
 */
function signInAndJoin(p: { link: AgentLink; connections: GroupConnections; profile: IdentityProfile; identity: IdentityConfig; logger: Logger }): { ready: Promise<void>; published: Promise<void> } {
  const { connections, profile, logger } = p;
  // A link that says when it is signed in (the network's agent) fails `ready` at once when its
  // key or certificate is refused, instead of leaving it waiting for a session that never comes.
  const linkReady = (p.link as { ready?: unknown }).ready;
  // After sign-in, never in the way of joining; retried until it succeeds (runtime/profile.ts).
  const published = profile
    .publishAfterSignIn(p.link as { token?: () => string | undefined }, linkReady instanceof Promise ? linkReady : undefined)
    .then(
      () => undefined,
      (err: unknown) => logger.log("warn", "profile.publish-failed", { aid: p.identity.aid, ...errorFields(err) }),
    );
  const ready = Promise.all([
    ...(linkReady instanceof Promise ? [linkReady] : []),
    ...[...connections.byService.values()].map(async (c) => {
      // Our own messages coming back are recognised by their dedup key (groups.ts): hash-ready first.
      await dedupReady;
      await c.start();
      const served = connections.groupsOf.get(c.peer) ?? [];
      await Promise.all([
        reportMemberships(c, served, logger),
        ...served.map((groupId) => profile.refreshMembers(c, groupId)),
        ...served.map((groupId) => profile.groups.refresh(c, groupId)),
      ]);
    }),
  ]).then(() => undefined);
  return { ready, published };
}

/** Closes in the order that loses nothing; every requested save is on disk when it resolves. */
async function closeIdentity(p: { runtimes: GroupRuntimes; direct: DirectRuntime | undefined; connections: GroupConnections; modelCalls: ModelCallLimiter; profile: IdentityProfile; owned: OwnedLink | undefined; logger: Logger }): Promise<void> {
  const { runtimes, logger } = p;
  // Direct conversations first, like the monitors: an answer landing now ends as closed (kept for the next run).
  p.direct?.close();
  // Every monitor before the transport: a model answer landing while the socket closes must
  // end as "group-closed" (unsettled, answered next run), not as a failed send counted as
  // handled; and no group may wait on another group's model call for the dispatch slot.
  for (const g of runtimes.byId.values()) g.monitor.close();
  p.modelCalls.close(); // no group waits on a back-end that ignores its abort signal
  // Its publish ends now (the upload cut) or soon (an answered upload's state write), awaited below.
  const profileClosed = p.profile.close();
  // Then stop intake so nothing arrives while groups settle.
  await Promise.all(
    [...p.connections.byService.values()].map((c) => c.close().catch((err) => logger.log("warn", "runtime.close-transport-failed", { service: c.peer, ...errorFields(err) }))),
  );
  await Promise.resolve(p.owned?.close()).catch((err: unknown) => logger.log("warn", "runtime.close-link-failed", errorFields(err)));
  for (const g of runtimes.byId.values()) {
    await closeGroupClientForIdentity(g.client).catch((err) =>
      logger.log("warn", "runtime.close-group-failed", { group: g.groupId, ...errorFields(err) }),
    );
    runtimes.saveNow(g);
  }
  await profileClosed;
  await runtimes.flush(); // every requested save is on disk before done
}
