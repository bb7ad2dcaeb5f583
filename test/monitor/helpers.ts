// Shared fixtures for monitor tests: batches built by hand, the group a dispatch reads (a real
// GroupMemory, settled as the group client settles it), a recording transport.
import { groupSettingsSchema, identitySchema } from "../../src/config/schema.ts";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { initGroupClientForIdentity } from "../../src/group/group-client.ts";
import { GroupMemory, type GroupMemoryParams } from "../../src/group/memory.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupMonitor, type DispatchDecision } from "../../src/monitor/monitor.ts";
import type { AgentBackend, DispatchBatch, DispatchOutcome, GroupContext, GroupSender, GroupSettings, InboundMessage, MentionInfo, VitalityState } from "../../src/types.ts";

/** 2026-01-05 14:30:00 UTC, server time. */
export const T0 = Date.UTC(2026, 0, 5, 14, 30, 0);

export const ALICE = identitySchema.parse({ aid: "alice.agentcp.io", name: "Alice", owner: "carol.agentcp.io" });

export function settingsWith(overrides: Record<string, unknown> = {}): GroupSettings {
  return groupSettingsSchema.parse(overrides);
}

export function msg(msgId: string, sender: string, content: string, timestamp: number, extra: Partial<InboundMessage> = {}): InboundMessage {
  return { msgId, groupId: "g1", sender, content, contentType: "text", timestamp, metadata: null, isMention: false, engaged: false, ...extra };
}

const SPEAKERS: Record<VitalityState, [number, number]> = { DORMANT: [0, 0], COOLING: [2, 1], ACTIVE: [9, 4], HEATED: [21, 6] };

export function batch(p: {
  dispatchId: number;
  now: number;
  messages: InboundMessage[];
  state?: VitalityState;
  mention?: Partial<MentionInfo>;
}): DispatchBatch {
  const state = p.state ?? "COOLING";
  const [messagesIn5m, uniqueSpeakersIn5m] = SPEAKERS[state];
  const mentionCount = p.messages.filter((m) => m.isMention).length;
  return {
    identityId: "alice",
    groupId: "g1",
    dispatchId: p.dispatchId,
    messages: p.messages,
    vitality: { state, messagesIn5m, uniqueSpeakersIn5m, myMessagesIn5m: 0, updatedAt: p.now },
    mentionInfo: {
      mentioned: mentionCount > 0,
      mentionCount,
      batchesMerged: 1,
      triggerType: mentionCount > 0 ? "mention" : "normal",
      ...p.mention,
    },
    now: p.now,
    attempt: 0,
  };
}

/**
 * The group one monitor dispatches for, without a group client: a real GroupMemory, what is held
 * (nothing, unless given) and whether a mention waits. `settle` records an outcome in the memory
 * exactly as the group client does when a dispatch settles (src/group/dispatcher.ts).
 */
export function testGroup(p: { historySize?: number; restored?: GroupMemoryParams["restored"]; mentionWaiting?: () => boolean; held?: () => InboundMessage[] } = {}) {
  const memory = new GroupMemory({ historySize: p.historySize ?? 10, restored: p.restored });
  const mentionWaiting = p.mentionWaiting ?? (() => false);
  const context: GroupContext = {
    memory,
    get mentionWaiting() {
      return mentionWaiting();
    },
    held: p.held ?? (() => []),
  };
  const settle = (o: DispatchOutcome): DispatchOutcome => {
    if (o.kind === "sent") memory.recordSent({ msgId: o.msgId, timestamp: o.sentAt ?? Date.now(), content: o.text, key: o.key });
    return o;
  };
  return { memory, context, settle };
}

export interface RecordingSender extends GroupSender {
  sent: Array<{ groupId: string; content: string; metadata?: Record<string, unknown>; at: number }>;
  failNext: number;
}

/** Stamps sends with `serverNow()`, numbering msg ids from 1000. */
export function recordingSender(serverNow: () => number): RecordingSender {
  let next = 1000;
  const s: RecordingSender = {
    sent: [],
    failNext: 0,
    async sendMessage(params) {
      if (s.failNext > 0) {
        s.failNext--;
        throw Object.assign(new Error("rate limited"), { code: "GROUP_RATE_LIMITED" });
      }
      const at = serverNow();
      s.sent.push({ ...params, at });
      return { msgId: String(next++), timestamp: at };
    },
  };
  return s;
}

/**
 * Alice's real group client and monitor (DEFAULT settings unless given), the model a stand-in,
 * a recording transport unless given; every decision recorded.
 */
export function aliceWith(p: { backend: AgentBackend; humans: string[]; settings?: GroupSettings; sender?: RecordingSender }) {
  const settings = p.settings ?? DEFAULT_GROUP_SETTINGS;
  const decisions: DispatchDecision[] = [];
  const monitor = createGroupMonitor({
    identityId: "alice",
    identity: ALICE,
    groupId: "g1",
    settings,
    humans: p.humans,
    backend: p.backend,
    sender: p.sender ?? recordingSender(() => Date.now()),
    logger: createMemoryLogger(),
    random: () => 0.5,
    onDecision: (d) => decisions.push(d),
  });
  const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity: ALICE, settings, dispatch: monitor.handle });
  return { settings, decisions, monitor, client };
}
