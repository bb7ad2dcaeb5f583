// What the group client knows about one group's traffic, before any buffering: seen ids, the
// server clock and the vitality window. Each inbound message is admitted (with the verdict of the
// conversation tracker it owns, conversation.ts) or refused with a drop reason; our own
// messages coming back are recognised here, once, and recorded in the group's memory (memory.ts).
// No timers.
import type { GroupMessage, GroupSettings, GroupVitality, InboundMessage } from "../types.ts";
import { ConversationTracker, type TrafficRecord } from "./conversation.ts";
import { replyTargetOf, type MentionMatcher } from "./mention.ts";
import { numericMsgId } from "../wire/msg-id.ts";
import { RecentSenders, SeenIds } from "./seen-ids.ts";
import { passiveKindOf, readMessageSignals } from "./signals.ts";
import { groupServiceAid } from "./service-event.ts";
import { equalsLower } from "../util/equals-lower.ts";
import type { SenderAccess } from "./sender-access.ts";
import { createServerClock, observeServerTime, serverNow, serverNowLowerBound, type ServerClock } from "./server-clock.ts";
import type { GroupMemory, SentMessage } from "./memory.ts";
import { appendOwnTime, appendVitalityEvent, computeVitality, createVitalityWindow, pruneOwnTimes, pruneVitalityWindow, type VitalityWindow } from "./vitality.ts";

export type IngestSettings = Pick<GroupSettings, "engagedWindowMs" | "continuationMs" | "vitalityWindowMs" | "vitalityMaxEvents" | "accessPoint">;

export class GroupIngest implements TrafficRecord {
  // Fields sit in memory in declaration order: what admit() reads for every message comes first.
  /** Whom each line is for; it reads this ingest's traffic (the window, our messages, our last line). */
  readonly #tracker: ConversationTracker;
  #seen = new SeenIds();
  #senders = new RecentSenders();
  #clock: ServerClock = createServerClock();
  /** Highest numeric msg id seen (own echoes included; 0 if none). */
  #cursor: number;
  #aid: string;
  #aidLower: string;
  readonly window: VitalityWindow;
  /** What we said here: written when our messages are sent or come back, read by the tracker and the agent side. */
  readonly #memory: GroupMemory;
  /** Null when the group has no allowFrom/denyFrom: every sender may address us. */
  #access: SenderAccess | null;

  #settings: IngestSettings;
  #ownTimes: number[] = [];

  constructor(p: {
    aid: string;
    /** Our mention keywords (seed §4.2): their nick variants address us too. */
    keywords?: readonly string[];
    matcher: MentionMatcher;
    settings: IngestSettings;
    memory: GroupMemory;
    restored?: { cursor?: number } | undefined;
    /** Nick keys of the group's member list (group service, agent.md names): members who may not have spoken yet. */
    listedMembers?: (() => ReadonlySet<string>) | undefined;
    access?: SenderAccess | null;
  }) {
    this.#tracker = new ConversationTracker({
      aid: p.aid,
      keywords: p.keywords,
      matcher: p.matcher,
      settings: p.settings,
      serviceAid: groupServiceAid(p.aid, p.settings.accessPoint),
      listedMembers: p.listedMembers,
      traffic: this,
    });
    this.#access = p.access ?? null;
    this.#aid = p.aid;
    this.#aidLower = p.aid.toLowerCase();
    this.#settings = p.settings;
    this.window = createVitalityWindow({ windowMs: p.settings.vitalityWindowMs, maxEvents: p.settings.vitalityMaxEvents });
    this.#cursor = p.restored?.cursor ?? 0;
    this.#memory = p.memory;
  }

  get cursor(): number {
    return this.#cursor;
  }

  get lastSelfSpeakAt(): number | null {
    return this.#memory.lastSelfSpeakAt;
  }

  get own(): GroupMemory["own"] {
    return this.#memory.own;
  }

  /**
   * One inbound message arriving at local time `localNow`: the accepted message with its flags,
   * or why it is not accepted. Runs per message — no closures, regex built here, or extra scans.
   */
  admit(m: GroupMessage, localNow: number): InboundMessage | "duplicate" | "self" | "refused-sender" {
    const num = numericMsgId(m.msgId);
    if (this.#seen.checkAndAdd(m.msgId, num)) return "duplicate";
    this.#senders.add(m.msgId, m.sender);
    observeServerTime(this.#clock, m.timestamp, localNow);
    if (num !== undefined && num > this.#cursor) this.#cursor = num;
    if (m.sender === this.#aid || equalsLower(m.sender, this.#aidLower)) {
      // Ours, coming back from the group: counts as ours unless the send was already recorded.
      if (this.#memory.recordEcho(m)) this.#countOwn(m.timestamp, m.content, replyTargetOf(m.metadata), localNow);
      return "self";
    }
    // Reactions count for vitality like any message.
    appendVitalityEvent(this.window, m.timestamp, m.sender);
    // A refused sender still makes the group busy, but never wakes us nor reaches the model.
    if (this.#access !== null && !this.#access(m.sender).ok) return "refused-sender";
    // Network signals (metadata mentions, reactions, no-reply flags): optional, honoured when present.
    const signals = readMessageSignals(m.metadata, this.#aid, m.content);
    const passive = passiveKindOf(signals);
    const verdict = this.#tracker.observe(m, signals, passive);
    const to = verdict.to;
    // One object literal of one fixed shape for every accepted message (no spread, no property
    // added afterwards): the optional fields are present, undefined when they do not apply.
    return {
      msgId: m.msgId,
      groupId: m.groupId,
      sender: m.sender,
      content: m.content,
      contentType: m.contentType,
      timestamp: m.timestamp,
      metadata: m.metadata,
      isMention: to === "us",
      engaged: to === "us-engaged",
      passive,
      addressing: verdict.reason,
      maybeOurs: to === "maybe-us" ? true : undefined,
    };
  }

  /** After a feed batch: prune the window against server time, once per batch. */
  endBatch(localNow: number): void {
    pruneVitalityWindow(this.window, serverNowLowerBound(this.#clock, localNow));
  }

  /** Records a send of ours. False when this msg id was recorded already (nothing counted). */
  recordOwn(m: SentMessage & { replyTo?: string | undefined }, localNow: number): boolean {
    if (!this.#memory.recordSent(m)) return false;
    this.#countOwn(m.timestamp, m.content, m.replyTo, localNow);
    return true;
  }

  serverNow(localNow: number): number {
    return serverNow(this.#clock, localNow);
  }

  vitalityAt(localNow: number): GroupVitality {
    const now = serverNow(this.#clock, localNow);
    const pruneAt = serverNowLowerBound(this.#clock, localNow);
    pruneVitalityWindow(this.window, pruneAt);
    pruneOwnTimes(this.#ownTimes, pruneAt, this.#settings.vitalityWindowMs);
    return computeVitality(this.window, now, this.#ownTimes);
  }

  engagedSpeakers(localNow: number): string[] {
    return this.#tracker.engagedSpeakersAt(serverNow(this.#clock, localNow));
  }

  /** One of our messages, counted once as group traffic: the windows, and whom it engages. */
  #countOwn(ts: number, content: string, replyTo: string | undefined, localNow: number): void {
    const s = this.#settings;
    // Our message is group traffic too: it counts in messages/speakers as well as my_messages.
    appendVitalityEvent(this.window, ts, this.#aid);
    appendOwnTime(this.#ownTimes, ts, serverNowLowerBound(this.#clock, localNow), s.vitalityWindowMs, s.vitalityMaxEvents);
    this.#tracker.ownLine(ts, content, replyTo === undefined ? undefined : this.#senders.senderOf(replyTo));
  }
}
