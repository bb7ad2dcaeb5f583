// The agent side of a dispatch: gates, prompt, model call, post-processing, delay, deliver.
// This file wires one (identity, group) monitor: its back-end, transport, member directory, the
// abortable send delays and the state that survives restarts (monitor-state.ts). A dispatch runs
// through the pipeline in dispatch/pipeline.ts; every decision in it is a pure sibling.
import { MemberDirectory, type MemberTypes } from "../members/member-types.ts";
import { monotonicNow } from "../group/local-clock.ts";
import { DelayWaits } from "./delay-waits.ts";
import { childLogger, errorFields, silentLogger } from "../log.ts";
import type { AgentBackend, Clock, DispatchBatch, DispatchHandler, DispatchOutcome, GroupSender, GroupMessage, GroupSettings, IdentityConfig, Logger, PersistedGroupState, ReplyType } from "../types.ts";
import { assembleDispatchPrompt, type PromptParts } from "./assemble.ts";
import { budgetUsageRatio } from "./budget.ts";
import { answeredThroughOf } from "../group/answered.ts";
import { hashNormalized, initDedup, normalizeForDedup, rememberReply } from "./dedup.ts";
import { stripControls } from "./sanitize.ts";
import { sharedAcpSystemPrompt } from "./identity-shared.ts";
import type { DispatchDecision } from "./decision.ts";
import { MonitorState, type MonitorSnapshot } from "./monitor-state.ts";
import { poolOf } from "./dispatch/budget.ts";
import { isRetriedFailure } from "./dispatch/model.ts";
import { runDispatch } from "./dispatch/pipeline.ts";
import type { MonitorContext } from "./dispatch/run.ts";

export type { DispatchDecision } from "./decision.ts";
export type { MonitorSnapshot } from "./monitor-state.ts";

export interface MonitorParams {
  identityId: string;
  identity: IdentityConfig;
  groupId: string;
  settings: GroupSettings;
  /** Senders treated as human; the identity's owner always is. */
  humans: readonly string[];
  /** Senders treated as agents (config `agents`). Used only when `memberTypes` is not given. */
  agents?: readonly string[];
  /**
   * The identity's member directory (config + group service + fetched agent.md), shared by its
   * groups. Default: one built from `humans`, `agents` and the owner alone.
   */
  memberTypes?: MemberTypes;
  backend: AgentBackend;
  sender: GroupSender;
  logger?: Logger;
  /** One draw in [0, 1) per delayed send. Tests and replay pass a seeded one. */
  random?: () => number;
  /** Local clock for time elapsed inside a dispatch: the group client's (default, monotonic). */
  clock?: Clock;
  restored?: Partial<PersistedGroupState>;
  /** After every change worth persisting (budget event, sent reply, agent chain). */
  onStateChange?: (state: MonitorSnapshot) => void;
  /** The one structured record per dispatch (also logged as `monitor.dispatch`). */
  onDecision?: (record: DispatchDecision) => void;
}

export interface GroupMonitor {
  handle: DispatchHandler;
  snapshot(): MonitorSnapshot;
  /** The exact prompt the next model call for `batch` would get, with the current state. No model call. */
  buildPrompt(batch: DispatchBatch): PromptParts;
  /**
   * One of our own messages came back (echo, or history after a restart): its text joins the
   * reply memory, its time the last-speak time, and a dispatch of what it answered is skipped.
   */
  rememberOwnMessage(m: Pick<GroupMessage, "msgId" | "content" | "timestamp" | "metadata">): void;
  close(): void;
}

export function createGroupMonitor(p: MonitorParams): GroupMonitor {
  const { settings, identity, groupId } = p;
  const selfAid = identity.aid;
  const logger = childLogger(p.logger ?? silentLogger, { identity: p.identityId, group: groupId });
  const random = p.random ?? Math.random;
  // The group client's clock: `batch.now` is server time estimated on it, and elapsed time added
  // to it must come from the same clock (a wall-clock step would move it by the step).
  const localNow = p.clock ? () => p.clock!.now() : monotonicNow;
  const memberTypes = p.memberTypes ?? new MemberDirectory({ humans: p.humans, agents: p.agents ?? [], owner: identity.owner });
  // Per identity, not per group (shared across its groups: memory per runtime group).
  const stablePrefix = sharedAcpSystemPrompt(identity);
  // Aborted by close(): cancels in-flight model calls and pending send delays.
  const lifetime = new AbortController();
  const delays = new DelayWaits(lifetime.signal);
  const state = new MonitorState(p.restored);

  function safeCall(fn: () => void, event: string): void {
    try {
      fn();
    } catch (err) {
      logger.log("error", event, errorFields(err));
    }
  }
  const emitState = () => safeCall(() => p.onStateChange?.(state.snapshot()), "monitor.on-state-change-failed");

  const buildPrompt = (batch: DispatchBatch, overrides: { replyType?: ReplyType; budgetRatio?: number } = {}): PromptParts =>
    assembleDispatchPrompt({
      identity,
      settings,
      batch,
      budgetRatio: overrides.budgetRatio ?? budgetUsageRatio(state.budgetEvents, settings.budget, batch.now, poolOf(batch)),
      lastSelfSpeakAt: state.lastSelfSpeakAt,
      ownReplies: state.ownReplies,
      replyType: overrides.replyType,
      stablePrefix,
      memberTypes,
    });

  const context: MonitorContext = {
    identityId: p.identityId,
    groupId,
    identity,
    settings,
    log: logger,
    random,
    localNow,
    memberTypes,
    floorContext: { selfAid, isAgent: (sender) => memberTypes.typeOf(sender).type === "agent" },
    backend: p.backend,
    sender: p.sender,
    lifetime: lifetime.signal,
    delays,
    state,
    buildPrompt,
    emitState,
    safeCall,
    hooks: p,
  };

  // Handled conditions come back as outcomes; only a bug throws, and then the group client retries.
  async function handle(batch: DispatchBatch): Promise<DispatchOutcome> {
    try {
      return await runDispatch(context, batch);
    } catch (err) {
      // A back-end failure handed to the group client's retry is its one warn line there
      // (group.dispatch-failed, with the cause); anything else thrown here is a bug.
      const level = isRetriedFailure(err) ? "debug" : "error";
      logger.log(level, "monitor.dispatch-failed", { dispatchId: batch.dispatchId, attempt: batch.attempt, ...errorFields(err) });
      throw err;
    }
  }

  return {
    handle,
    snapshot: () => state.snapshot(),
    buildPrompt: (batch) => buildPrompt(batch),
    rememberOwnMessage(m) {
      const through = answeredThroughOf(m.metadata);
      if (through !== undefined && (state.answeredThrough === undefined || through > state.answeredThrough)) state.answeredThrough = through;
      const restore = () => {
        const normalized = normalizeForDedup(stripControls(m.content));
        const hash = hashNormalized(normalized);
        const known = state.memory.hashes.includes(hash);
        const later = Number.isFinite(m.timestamp) && m.timestamp > (state.lastSelfSpeakAt ?? 0);
        if (known && !later) return;
        if (!known) {
          state.memory = rememberReply(state.memory, hash, normalized, settings.dedup.historySize);
          state.ownReplies = [...state.ownReplies, { timestamp: m.timestamp, text: m.content, msgId: m.msgId }].slice(-settings.dedup.historySize);
        }
        if (later) state.lastSelfSpeakAt = m.timestamp;
        emitState();
      };
      // Hashing needs the wasm module; at start-up the first pull may come before it is ready.
      void initDedup()
        .then(restore)
        .catch((err: unknown) => logger.log("warn", "monitor.remember-own-failed", { msgId: m.msgId, ...errorFields(err) }));
    },
    close() {
      delays.clear();
      lifetime.abort();
    },
  };
}

/** The seed's entry point: hand one batch to an identity's monitor for that group. */
export function handleGroupMessagesForIdentity(monitor: GroupMonitor, batch: DispatchBatch): Promise<DispatchOutcome> {
  return monitor.handle(batch);
}
