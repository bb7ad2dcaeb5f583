// Test harness for the group client: a fixed epoch, literal offsets, a scripted agent side.
import { vi } from "vitest";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import { initGroupClientForIdentity, type GroupClient, type GroupClientEvent, type GroupClientParams } from "../../src/group/group-client.ts";
import { createMemoryLogger } from "../../src/log.ts";
import type { DispatchBatch, DispatchOutcome, GroupContext, GroupMessage, GroupSettings } from "../../src/types.ts";

/** T+0 of every timeline; server and local clocks agree unless a test says otherwise. */
export const T0 = 1_700_000_000_000;

export const ALICE = { aid: "alice.agentcp.io", name: "Alice" };

export function msg(id: number | string, atMs: number, content = `message ${id}`, sender = "bob.agentcp.io", metadata: Record<string, unknown> | null = null): GroupMessage {
  return { msgId: String(id), groupId: "g1", sender, content, contentType: "text", timestamp: T0 + atMs, metadata };
}

/** Advances the fake clock to T+ms (absolute offset on the timeline). */
export async function at(ms: number): Promise<void> {
  const delta = T0 + ms - Date.now();
  if (delta < 0) throw new Error(`timeline went backwards: now T+${Date.now() - T0}, asked for T+${ms}`);
  await vi.advanceTimersByTimeAsync(delta);
}

export interface Call {
  /** Offset from T0 (local fake clock) when the dispatch reached the agent side. */
  at: number;
  batch: DispatchBatch;
  /** What the group let the agent side read (live while it ran). */
  group: GroupContext;
  /** Our last message as the agent side saw it when the dispatch began. */
  lastSelfSpeakAt: number | null;
  ids: string[];
  /** `mentionWaiting` as seen just before the agent side returned. */
  pendingMentionAtEnd?: boolean;
}

export type Script = (batch: DispatchBatch, callIndex: number) => { latencyMs?: number; outcome?: DispatchOutcome; throws?: unknown };

export function setup(
  params: { settings?: Partial<GroupSettings>; script?: Script; identity?: { aid: string; name?: string; aliases?: string[] }; humans?: string[]; memberTypes?: GroupClientParams["memberTypes"] } = {},
) {
  const settings: GroupSettings = { ...DEFAULT_GROUP_SETTINGS, ...params.settings };
  const calls: Call[] = [];
  const events: GroupClientEvent[] = [];
  const logger = createMemoryLogger();
  let inFlight = 0;
  let maxInFlight = 0;
  const script: Script = params.script ?? (() => ({ latencyMs: 1000 }));
  const client: GroupClient = initGroupClientForIdentity({
    identityId: "alice",
    groupId: "g1",
    identity: params.identity ?? ALICE,
    ...(params.humans ? { humans: params.humans } : {}),
    ...(params.memberTypes ? { memberTypes: params.memberTypes } : {}),
    settings,
    logger,
    onEvent: (e) => events.push(e),
    dispatch: async (batch, group) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const call: Call = { at: Date.now() - T0, batch, group, lastSelfSpeakAt: group.memory.lastSelfSpeakAt, ids: batch.messages.map((m) => m.msgId) };
      calls.push(call);
      const step = script(batch, calls.length - 1);
      try {
        if (step.latencyMs) await new Promise((r) => setTimeout(r, step.latencyMs));
        call.pendingMentionAtEnd = group.mentionWaiting;
        if (step.throws !== undefined) throw step.throws;
        return step.outcome ?? { kind: "skipped", reason: "silent" };
      } finally {
        inFlight--;
      }
    },
  });
  return {
    client,
    calls,
    events,
    logger,
    settings,
    maxInFlight: () => maxInFlight,
    dispatchTimes: () => calls.map((c) => c.at),
    drops: () => events.flatMap((e) => (e.type === "dropped" ? [{ id: e.msgId, reason: e.reason }] : [])),
  };
}
