// The agent side of a dispatch: gates, prompt, model call, post-processing, delay, deliver.
// This file wires one (identity, group) monitor: its back-end, transport, member directory, the
// abortable send delays and the state that survives restarts (monitor-state.ts). A dispatch runs
// through the pipeline in dispatch/pipeline.ts; every decision in it is a pure sibling. What the
// monitor knows of its group — what we said there, what arrived since — it reads through the
// context each dispatch brings (types.ts GroupContext), and it answers with an outcome.
import { isVouched, MemberDirectory, type MemberTypes } from "../members/member-types.ts";
import { monotonicNow } from "../group/local-clock.ts";
import { childLogger, errorFields, silentLogger } from "../log.ts";
import type { AgentBackend, Clock, ConversationRef, DispatchBatch, DispatchHandler, DispatchOutcome, GroupContext, GroupMemoryView, GroupSender, GroupSettings, IdentityConfig, Logger, PersistedGroupState, ReplyType } from "../types.ts";
import { assembleDispatchPrompt, type PromptParts } from "./assemble.ts";
import { budgetUsageRatio } from "./budget-windows.ts";
import { sharedAcpSystemPrompt } from "./identity-shared.ts";
import { withGroupLayer, withGroupLimit, type GroupProfile, type GroupProfileSource } from "./group-layer.ts";
import type { DispatchDecision } from "./decision.ts";
import { MonitorState, type MonitorSnapshot } from "./monitor-state.ts";
import { poolOf } from "./dispatch/budget-gate.ts";
import { runDispatch } from "./dispatch/pipeline.ts";
import type { MonitorContext } from "./dispatch/run.ts";

export type { DispatchDecision } from "./decision.ts";
export type { MonitorSnapshot } from "./monitor-state.ts";
export { MonitorState } from "./monitor-state.ts";

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
  /** The monitor's part of a previous run's state (budget events, agent chain, sender charges). */
  restored?: Partial<PersistedGroupState>;
  /**
   * A direct conversation (its own prompt and the steps that apply one to one: dispatch/pipeline.ts);
   * absent: the group `groupId`. A direct conversation's `groupId` is its key (`directKeyOf`).
   */
  conversation?: ConversationRef;
  /**
   * The books to keep (budget events, sender charges), shared when several monitors spend one
   * allowance — an identity's direct conversations do. Default: the monitor's own, from `restored`.
   */
  state?: MonitorState;
  /** After every change worth persisting (budget event, agent chain). */
  onStateChange?: (state: MonitorSnapshot) => void;
  /** The one structured record per dispatch (also logged as `monitor.dispatch`). */
  onDecision?: (record: DispatchDecision) => void;
  /**
   * What the group service says about the group (announcement, rules, max_message_size): the
   * prompt's group layer and the reply's length limit. Read at every dispatch; rebuilt when it changes.
   */
  groupProfile?: GroupProfileSource;
}

export interface GroupMonitor {
  handle: DispatchHandler;
  snapshot(): MonitorSnapshot;
  /** The exact prompt the next model call for `batch` would get, with the current state and what we said (`memory`). No model call. */
  buildPrompt(batch: DispatchBatch, memory: GroupMemoryView): PromptParts;
  close(): void;
}

/**
 * One monitor's wiring: its logger, clocks, member directory, prompt builder, state and the
 * lifetime that close() ends. What every dispatch step reads (dispatch/run.ts); tests build one to
 * run a single step.
 */
export function createMonitorContext(p: MonitorParams): MonitorContext & { close(): void } {
  const { identity, groupId } = p;
  const selfAid = identity.aid;
  const logger = childLogger(p.logger ?? silentLogger, { identity: p.identityId, group: groupId });
  const random = p.random ?? Math.random;
  // The group client's clock: `batch.now` is server time estimated on it, and elapsed time added
  // to it must come from the same clock (a wall-clock step would move it by the step).
  const localNow = p.clock ? () => p.clock!.now() : monotonicNow;
  const memberTypes = p.memberTypes ?? new MemberDirectory({ humans: p.humans, agents: p.agents ?? [], owner: identity.owner });
  // Per identity, not per group (shared across its groups: memory per runtime group); the
  // group layer after it changes only when the group's profile does (group-layer.ts).
  const identityPrefix = sharedAcpSystemPrompt(identity);
  let profileSeen: GroupProfile | undefined;
  let stablePrefix = identityPrefix;
  let settings = p.settings;
  const followProfile = (): void => {
    const profile = p.groupProfile?.current();
    if (profile === profileSeen) return;
    profileSeen = profile;
    stablePrefix = withGroupLayer(identityPrefix, profile);
    settings = withGroupLimit(p.settings, profile);
  };
  // Aborted by close(): cancels in-flight model calls and pending send delays.
  const lifetime = new AbortController();
  const state = p.state ?? new MonitorState(p.restored);
  const conversation: ConversationRef = p.conversation ?? { kind: "group", groupId };

  function safeCall(fn: () => void, event: string): void {
    try {
      fn();
    } catch (err) {
      logger.log("error", event, errorFields(err));
    }
  }
  const emitState = () => safeCall(() => p.onStateChange?.(state.snapshot()), "monitor.on-state-change-failed");

  const buildPrompt = (batch: DispatchBatch, memory: GroupMemoryView, overrides: { replyType?: ReplyType; budgetRatio?: number } = {}): PromptParts => {
    followProfile();
    return assembleDispatchPrompt({
      identity,
      settings,
      batch,
      budgetRatio: overrides.budgetRatio ?? budgetUsageRatio(state.budgetEvents, settings.budget, batch.now, poolOf(batch)),
      lastSelfSpeakAt: memory.lastSelfSpeakAt,
      ownReplies: memory.ownReplies,
      replyType: overrides.replyType,
      stablePrefix,
      memberTypes,
      ...(conversation.kind === "direct" ? { conversation } : {}),
    });
  };

  return {
    identityId: p.identityId,
    groupId,
    conversation,
    identity,
    // The group's limit applies from the dispatch after the profile said so.
    get settings() {
      followProfile();
      return settings;
    },
    get maxMessageUnits() {
      followProfile();
      return profileSeen?.maxMessageChars;
    },
    log: logger,
    random,
    localNow,
    memberTypes,
    floorContext: {
      selfAid,
      isAgent: (sender) => memberTypes.typeOf(sender).type === "agent",
      // A member's own agent.md vouches for nobody: only our config, the owner or the group service.
      isVouched: (sender) => isVouched(memberTypes.typeOf(sender)),
    },
    backend: p.backend,
    sender: p.sender,
    lifetime: lifetime.signal,
    state,
    buildPrompt,
    emitState,
    safeCall,
    hooks: p,
    close() {
      lifetime.abort();
    },
  };
}

export function createGroupMonitor(p: MonitorParams): GroupMonitor {
  const context = createMonitorContext(p);
  const { log: logger, state } = context;

  // Handled conditions come back as outcomes (a failure a retry may fix as `retry`); only a bug
  // throws, and then the group client retries.
  async function handle(batch: DispatchBatch, group: GroupContext): Promise<DispatchOutcome> {
    try {
      return await runDispatch(context, batch, group);
    } catch (err) {
      logger.log("error", "monitor.dispatch-failed", { dispatchId: batch.dispatchId, attempt: batch.attempt, ...errorFields(err) });
      throw err;
    }
  }

  return {
    handle,
    snapshot: () => state.snapshot(),
    buildPrompt: (batch, memory) => context.buildPrompt(batch, memory),
    close: () => context.close(),
  };
}

/** The seed's entry point: hand one batch to an identity's monitor for that group. */
export function handleGroupMessagesForIdentity(monitor: GroupMonitor, batch: DispatchBatch, group: GroupContext): Promise<DispatchOutcome> {
  return monitor.handle(batch, group);
}
