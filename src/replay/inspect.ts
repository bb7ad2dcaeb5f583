// `inspect`: the exact system prompt and message body the model would get, for a configured
// identity and group — optionally after replaying a log up to a moment.
import FakeTimers from "@sinonjs/fake-timers";
import { closeGroupClientForIdentity, initGroupClientForIdentity } from "../group/group-client.ts";
import { GroupMemory } from "../group/memory.ts";
import { compareMessages } from "../wire/msg-id.ts";
import { silentLogger } from "../log.ts";
import type { PromptParts } from "../monitor/assemble.ts";
import { createGroupMonitor } from "../monitor/monitor.ts";
import { createScriptedBackend } from "../backends/deterministic.ts";
import type { DispatchBatch, GroupSettings, IdentityConfig, InboundMessage, MentionInfo } from "../types.ts";
import { batchesOf, type LogLine } from "./log.ts";

export interface InspectResult extends PromptParts {
  /** Where the messages came from: "pending" (waiting at `at`), "last-dispatch", or "sample". */
  source: "pending" | "last-dispatch" | "sample";
  messageCount: number;
}

/** A monitor that never calls a model or sends: only its prompt builder is used. */
/** Config `humans`/`agents`, so `[Senders]` shows the types the running agent would see. */
interface MemberConfig {
  humans?: readonly string[];
  agents?: readonly string[];
}

function promptOnlyMonitor(p: { identity: IdentityConfig; groupId: string; settings: GroupSettings } & MemberConfig) {
  return createGroupMonitor({
    identityId: p.identity.aid,
    identity: p.identity,
    groupId: p.groupId,
    settings: p.settings,
    humans: p.humans ?? [],
    agents: p.agents ?? [],
    backend: createScriptedBackend({ mode: "silent" }),
    sender: { sendMessage: async () => ({ msgId: "inspect", timestamp: Date.now() }) },
    logger: silentLogger,
  });
}

/** Prompt for a sample exchange (no log): shows the stable prefix and the situation block shape. */
export function inspectSample(p: { identity: IdentityConfig; groupId: string; settings: GroupSettings; now: number; senders?: readonly string[] } & MemberConfig): InspectResult {
  const monitor = promptOnlyMonitor(p);
  const name = p.identity.name ?? p.identity.aid.split(".")[0]!;
  // Two other members (the caller's first, else placeholders on the identity's own domain); never
  // the identity itself (its own lines are left out of the body).
  const domain = p.identity.aid.slice(p.identity.aid.indexOf(".") + 1);
  const [first, second] = [...(p.senders ?? []), ...["bob", "carol", "dave"].map((n) => `${n}.${domain}`)].filter(
    (a, i, all) => a.toLowerCase() !== p.identity.aid.toLowerCase() && all.findIndex((b) => b.toLowerCase() === a.toLowerCase()) === i,
  );
  const messages: InboundMessage[] = [
    sample("1", first!, "Has anyone tried the new release?", p.now - 20_000, p.groupId, false),
    sample("2", second!, `${name}, what do you think?`, p.now - 5_000, p.groupId, true),
  ];
  const batch = makeBatch(p.identity.aid, p.groupId, messages, {
    state: "COOLING",
    messagesIn5m: 2,
    uniqueSpeakersIn5m: 2,
    myMessagesIn5m: 0,
    updatedAt: p.now,
  }, p.now);
  // A group where we never spoke.
  const parts = monitor.buildPrompt(batch, new GroupMemory({ historySize: p.settings.dedup.historySize }));
  monitor.close();
  return { ...parts, source: "sample", messageCount: messages.length };
}

/**
 * Replays the lines with ts ≤ `at` (silent agent) and shows the prompt for what is waiting at
 * `at`. `lines` in time order, walked once and only up to `at` (a log's file is never held).
 */
export async function inspectAt(p: {
  lines: Iterable<LogLine>;
  at: number;
  identity: IdentityConfig;
  persona: string;
  groupId: string;
  settings: GroupSettings;
} & MemberConfig): Promise<InspectResult> {
  const walk = p.lines[Symbol.iterator]();
  const head = walk.next();
  const first = head.done || head.value.ts > p.at ? undefined : head.value;
  /** The lines up to `at`: the walk stops at the first line past it. */
  function* upTo(): Generator<LogLine> {
    if (first === undefined) return;
    yield first;
    for (let r = walk.next(); !r.done && r.value.ts <= p.at; r = walk.next()) yield r.value;
  }
  const clock = FakeTimers.install({ now: first?.ts ?? p.at, toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"], loopLimit: 1_000_000 });
  try {
    const monitor = promptOnlyMonitor(p);
    const held = new Map<string, InboundMessage>();
    let lastBatch: DispatchBatch | undefined;
    const client = initGroupClientForIdentity({
      identityId: p.identity.aid,
      groupId: p.groupId,
      identity: p.identity,
      settings: p.settings,
      dispatch: monitor.handle,
      logger: silentLogger,
      onEvent: (e) => {
        if (e.type === "accepted") held.set(e.message.msgId, e.message);
        else if (e.type === "dispatch-start") {
          lastBatch = e.batch;
          for (const m of e.batch.messages) held.delete(m.msgId);
        } else if (e.type === "dropped") held.delete(e.msgId);
      },
    });
    const persona = p.persona.toLowerCase();
    for (const batch of batchesOf(upTo())) {
      const ts = batch[0]!.ts;
      if (ts > clock.now) await clock.tickAsync(ts - clock.now);
      client.feedBufferGate(
        batch.map((l) => ({
          msgId: l.id,
          groupId: p.groupId,
          sender: l.sender.toLowerCase() === persona ? p.identity.aid : l.sender,
          content: l.content,
          contentType: "text",
          timestamp: l.ts,
          metadata: null,
        })),
      );
    }
    if (p.at > clock.now) await clock.tickAsync(p.at - clock.now);
    const now = client.serverNow();
    const pending = [...held.values()].sort(compareMessages);
    let result: InspectResult;
    if (pending.length > 0) {
      // Log lines with one timestamp arrive as one batch, so distinct timestamps are the batches waiting.
      const batchesMerged = new Set(pending.map((m) => m.timestamp)).size;
      const batch = makeBatch(p.identity.aid, p.groupId, pending, client.computeVitality(), now, batchesMerged);
      result = { ...monitor.buildPrompt(batch, client.memory), source: "pending", messageCount: pending.length };
    } else if (lastBatch) {
      result = { ...monitor.buildPrompt(lastBatch, client.memory), source: "last-dispatch", messageCount: lastBatch.messages.length };
    } else {
      throw new Error(`no messages at or before ${new Date(p.at).toISOString()} in the log`);
    }
    monitor.close();
    await closeGroupClientForIdentity(client);
    return result;
  } finally {
    clock.uninstall();
    // A walk left before its end (a file) closes its file.
    walk.return?.();
  }
}

function sample(msgId: string, sender: string, content: string, ts: number, groupId: string, isMention: boolean): InboundMessage {
  return { msgId, groupId, sender, content, contentType: "text", timestamp: ts, metadata: null, isMention, engaged: false };
}

function makeBatch(
  identityId: string,
  groupId: string,
  messages: readonly InboundMessage[],
  vitality: DispatchBatch["vitality"],
  now: number,
  batchesMerged = 1,
): DispatchBatch {
  const mentionCount = messages.filter((m) => m.isMention).length;
  const mentionInfo: MentionInfo = {
    mentioned: mentionCount > 0,
    mentionCount,
    batchesMerged,
    triggerType: mentionCount > 0 ? "mention" : messages.some((m) => m.engaged) ? "engaged" : "normal",
  };
  return {
    identityId,
    groupId,
    dispatchId: 0,
    messages,
    vitality,
    mentionInfo,
    now,
    attempt: 0,
  };
}
