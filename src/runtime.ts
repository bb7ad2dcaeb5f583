// The composition root for one identity: a transport connection, and per configured group a
// group client (when to speak) feeding a monitor (what to say), with state loaded at start and
// saved when it changes and at close. `start`, the OpenClaw plugin and createGroupAgent all use it.
import { listGroupsForIdentity, resolveGroupSettings } from "./config/load.ts";
import { closeGroupClientForIdentity, initGroupClientForIdentity } from "./group/group-client.ts";
import type { GroupClient, GroupClientEvent } from "./group/group-client.ts";
import { numericMsgId } from "./group/order.ts";
import { childLogger, errorFields, silentLogger } from "./log.ts";
import { createModelCallLimiter } from "./monitor/model-calls.ts";
import { createLazyGroupMonitor } from "./monitor/lazy-monitor.ts";
import type { DispatchDecision, GroupMonitor } from "./monitor/monitor.ts";
import { createFileStateStore, defaultStateDir, type StateStore } from "./state/file-store.ts";
import { createSaveScheduler } from "./state/save-scheduler.ts";
import { createGroupConnection } from "./transport/connection.ts";
import type { GroupConnection, GroupConnectionParams, GroupEvent } from "./transport/connection.ts";
import type { AgentBackend, ChannelConfig, GroupMessage, Logger, PersistedGroupState } from "./types.ts";

export class RuntimeError extends Error {
  readonly code: "IDENTITY_UNKNOWN" | "IDENTITY_DISABLED" | "NO_SERVER_URL" | "NO_GROUPS" | "GROUP_UNKNOWN" | "CLOSED";
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
  /** Transport tuning (heartbeat, reconnect backoff, timeouts). */
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
  readonly connection: GroupConnection;
  groupClient(groupId: string): GroupClient | undefined;
  monitor(groupId: string): GroupMonitor | undefined;
  /** Posts as this identity (the host's outbound path). Counted as our own message. */
  sendText(groupId: string, text: string): Promise<{ msgId: string; timestamp: number }>;
  close(): Promise<void>;
}

interface GroupRuntime {
  groupId: string;
  client: GroupClient;
  monitor: GroupMonitor;
  restoredCursor: number;
  /** Numeric ids accepted and not yet settled (dispatched or dropped for good). */
  unsettled: Set<number>;
  /** dispatchId → numeric ids in that batch. */
  inFlight: Map<number, number[]>;
}

// A busy group moves its cursor on every message; state is written at most this often for that.
const SAVE_DEBOUNCE_MS = 1000;

export function startIdentity(p: StartIdentityParams): RunningIdentity {
  const { config, identityId } = p;
  const identity = config.identities[identityId];
  if (!identity) throw new RuntimeError("IDENTITY_UNKNOWN", identityId, `identities.${identityId}: no such identity in the configuration`);
  if (!identity.enabled) throw new RuntimeError("IDENTITY_DISABLED", identityId, `identities.${identityId}: identity is disabled`);
  if (!config.serverUrl) throw new RuntimeError("NO_SERVER_URL", identityId, "serverUrl: required to connect an identity");
  const groups = listGroupsForIdentity(config, identity);
  if (groups.length === 0) {
    throw new RuntimeError("NO_GROUPS", identityId, `identities.${identityId}: no enabled group (add one under groups or identities.${identityId}.groups)`);
  }
  const logger = childLogger(p.logger ?? silentLogger, { identity: identityId });
  const store = p.store ?? createFileStateStore({ dir: config.stateDir ?? defaultStateDir(), logger });
  const runtimes = new Map<string, GroupRuntime>();
  const aidLower = identity.aid.toLowerCase();
  // Each group dispatches one batch at a time (its lock); across groups, at most this many model
  // calls run at once, so a burst in many groups cannot fan out into as many parallel calls. Only
  // the call itself takes a slot: a reply waiting out its human-like delay holds none, and a
  // mention's call goes ahead of unaddressed talk waiting for one.
  // issue-10: slots now also time out (modelCallTimeoutMs) and are released at close even when a
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
      agentChain: snap.agentChain,
    };
  };
  // issue-10: saves are asynchronous and coalesced (src/state/save-scheduler.ts): one write in
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

  for (const groupId of groups) {
    const settings = resolveGroupSettings(config, identity, groupId);
    const restored = store.loadGroup(identityId, groupId);
    const glog = childLogger(logger, { group: groupId });
    // The callbacks below only run once `g` is assigned (after the first message or dispatch).
    let g: GroupRuntime;
    // issue-10: built on first use (src/monitor/lazy-monitor.ts): idle groups stay small.
    const monitor = createLazyGroupMonitor({
      identityId,
      identity,
      groupId,
      settings,
      humans: config.humans,
      backend,
      sender: { sendMessage: (m) => connection.sendMessage(m) },
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
      settings,
      dispatch: monitor.handle,
      logger: glog,
      restored: { cursor: restored?.cursor ?? 0, lastSelfSpeakAt: restored?.lastSelfSpeakAt ?? null },
      onEvent: (e) => {
        track(g, e);
        if (e.type === "dispatch-end") {
          saveNow(g);
          if (!closing) connection.acknowledge(groupId);
        }
        p.onGroupEvent?.(groupId, e);
      },
    });
    g = { groupId, client, monitor, restoredCursor: restored?.cursor ?? 0, unsettled: new Set(), inFlight: new Map() };
    runtimes.set(groupId, g);
  }

  const connection = createGroupConnection({
    url: config.serverUrl,
    aid: identity.aid,
    ...(identity.token ? { token: identity.token } : {}),
    groups,
    logger,
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
        logger.log("error", "runtime.on_messages_failed", { group: groupId, ...errorFields(err) });
      }
      // issue-10: our own messages coming back restore the reply memory before the client sees them.
      for (const m of messages) if (m.sender.toLowerCase() === aidLower) g.monitor.rememberOwnMessage(m);
      g.client.feedBufferGate(messages);
      saveSoon(g);
    },
    ...(p.onTransportEvent ? { onEvent: p.onTransportEvent } : {}),
  });

  const ready = connection.start();
  // `ready` is for callers who want it; an unobserved rejection (e.g. closed before connecting) is logged.
  ready.catch((err) => logger.log("warn", "runtime.start_failed", errorFields(err)));

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const close = (): Promise<void> => {
    closing ??= (async () => {
      p.abortSignal?.removeEventListener("abort", onAbort);
      // Every monitor before the transport: a model answer landing while the socket closes must
      // end as "group-closed" (unsettled, answered next run), not as a failed send counted as
      // handled; and no group may wait on another group's model call for the dispatch slot.
      for (const g of runtimes.values()) g.monitor.close();
      modelCalls.close(); // issue-10: no group waits on a back-end that ignores its abort signal
      // Then stop intake so nothing arrives while groups settle.
      await connection.close().catch((err) => logger.log("warn", "runtime.close_transport_failed", errorFields(err)));
      for (const g of runtimes.values()) {
        await closeGroupClientForIdentity(g.client).catch((err) =>
          logger.log("warn", "runtime.close_group_failed", { group: g.groupId, ...errorFields(err) }),
        );
        saveNow(g);
      }
      await saves.flush(); // issue-10: every requested save is on disk before done
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
    groupClient: (groupId) => runtimes.get(groupId)?.client,
    monitor: (groupId) => runtimes.get(groupId)?.monitor,
    async sendText(groupId, text) {
      const g = runtimes.get(groupId);
      if (!g) throw new RuntimeError("GROUP_UNKNOWN", identityId, `group ${groupId} is not configured for identity ${identityId}`);
      if (closing) throw new RuntimeError("CLOSED", identityId, "identity is closed");
      const sent = await connection.sendMessage({ groupId, content: text });
      g.client.recordOwnMessage({ msgId: sent.msgId, timestamp: sent.timestamp, content: text });
      return sent;
    },
    close,
  };
}

/** Follows accepted / dispatched / dropped messages so the saved cursor never skips an unsettled one. */
function track(g: GroupRuntime, e: GroupClientEvent): void {
  switch (e.type) {
    case "accepted": {
      const n = numericMsgId(e.message.msgId);
      if (n !== undefined) g.unsettled.add(n);
      break;
    }
    case "dispatch-start": {
      const ids: number[] = [];
      for (const m of e.batch.messages) {
        const n = numericMsgId(m.msgId);
        if (n !== undefined) ids.push(n);
      }
      g.inFlight.set(e.batch.dispatchId, ids);
      break;
    }
    case "dispatch-end": {
      const ids = g.inFlight.get(e.dispatchId);
      g.inFlight.delete(e.dispatchId);
      // A failed attempt that will be retried stays unsettled; a dropped one is reported as drops.
      // A dispatch cut off by close (model call or send delay aborted) said nothing: like a held
      // message, it stays unsettled so the next run answers it instead of losing it.
      if (e.ok && ids && !(e.outcome.skipReason === "group-closed" && !e.outcome.sent)) for (const n of ids) g.unsettled.delete(n);
      break;
    }
    case "dropped": {
      // Refused on arrival (a duplicate, our own echo): never accepted, and a duplicate's id may
      // belong to an accepted original that is still unsettled.
      if (e.stage === "arrival") break;
      // Closing drops what is still held; those stay unsettled so the next run pulls them again.
      if (e.reason === "group-closed") break;
      const n = numericMsgId(e.msgId);
      if (n !== undefined) g.unsettled.delete(n);
      break;
    }
    default:
      break;
  }
}

/**
 * The cursor to persist: everything at or below it has been dispatched or dropped for good. A
 * message still buffered, pending or in flight keeps the cursor just before it, so a restart
 * pulls it again instead of losing it; anything dispatched has a lower id, so nothing repeats.
 */
function settledCursor(g: GroupRuntime): number {
  let cursor = Math.max(g.restoredCursor, g.client.cursor);
  for (const n of g.unsettled) if (n - 1 < cursor) cursor = n - 1;
  return Math.max(cursor, 0);
}
