// What the group client knows about one group's traffic, before any buffering: seen ids, the
// server clock, the vitality window, our own messages and whom we are engaged with. Each inbound
// message is admitted (with its mention/engaged flags) or refused with a drop reason. No timers.
import type { GroupMessage, GroupSettings, GroupVitality, InboundMessage } from "../types.ts";
import { buildMentionKeywords, checkMention, replyTargetOf, type MentionMatcher } from "./mention.ts";
import { numericMsgId } from "./order.ts";
import { RecentSenders, SeenIds } from "./seen-ids.ts";
import { groupServiceAid, isServiceEvent } from "./service-event.ts";
import { createServerClock, observeServerTime, serverNow, type ServerClock } from "./server-clock.ts";
import { EngagedSpeakers, OwnMessages } from "./social.ts";
import {
  appendOwnTime,
  appendVitalityEvent,
  computeVitality,
  createVitalityWindow,
  pruneOwnTimes,
  pruneVitalityWindow,
  windowSenders,
  type VitalityWindow,
} from "./vitality.ts";

export type IngestSettings = Pick<GroupSettings, "engagedWindowMs" | "vitalityWindowMs" | "vitalityMaxEvents">;

export class GroupIngest {
  cursor: number;
  lastSelfSpeakAt: number | null;
  #aid: string;
  #aidLower: string;
  /** `group.<our ap-domain>`: only its event-shaped messages are events. */
  #serviceAid: string | undefined;
  #matcher: MentionMatcher;
  #settings: IngestSettings;
  #seen = new SeenIds();
  #senders = new RecentSenders();
  #clock: ServerClock = createServerClock();
  #window: VitalityWindow;
  #ownTimes: number[] = [];
  #engaged = new EngagedSpeakers();
  #own = new OwnMessages();

  constructor(p: {
    aid: string;
    matcher: MentionMatcher;
    settings: IngestSettings;
    restored?: { cursor?: number; lastSelfSpeakAt?: number | null } | undefined;
  }) {
    this.#aid = p.aid;
    this.#aidLower = p.aid.toLowerCase();
    this.#serviceAid = groupServiceAid(p.aid);
    this.#matcher = p.matcher;
    this.#settings = p.settings;
    this.#window = createVitalityWindow({ windowMs: p.settings.vitalityWindowMs, maxEvents: p.settings.vitalityMaxEvents });
    this.cursor = p.restored?.cursor ?? 0;
    this.lastSelfSpeakAt = p.restored?.lastSelfSpeakAt ?? null;
  }

  /**
   * One inbound message arriving at local time `localNow`: the accepted message with its flags,
   * or why it is not accepted. Runs per message — no closures, regex built here, or extra scans.
   */
  admit(m: GroupMessage, localNow: number): InboundMessage | "duplicate" | "self" {
    const num = numericMsgId(m.msgId);
    if (this.#seen.checkAndAdd(m.msgId, num)) return "duplicate";
    this.#senders.add(m.msgId, m.sender);
    observeServerTime(this.#clock, m.timestamp, localNow);
    if (num !== undefined && num > this.cursor) this.cursor = num;
    if (m.sender === this.#aid || (m.sender.length === this.#aid.length && m.sender.toLowerCase() === this.#aidLower)) {
      // Ours, echoed by the group: counts as ours unless the send was already recorded.
      if (!this.#own.confirmEcho(m.msgId, m.content)) {
        this.#countOwn(m.timestamp, m.content, replyTargetOf(m.metadata), localNow);
      }
      return "self";
    }
    appendVitalityEvent(this.#window, m.timestamp, m.sender);
    // The service's own events (someone joined, rules changed) name people without addressing us.
    const isMention = !isServiceEvent(m, this.#serviceAid) && (this.#matcher(m.content) || this.#repliesToUs(m.metadata));
    let engaged = false;
    if (isMention) this.#engaged.engage(m.sender, m.timestamp + this.#settings.engagedWindowMs, m.timestamp);
    else if (this.#engaged.size > 0) engaged = this.#engaged.isEngaged(m.sender, m.timestamp);
    return {
      msgId: m.msgId,
      groupId: m.groupId,
      sender: m.sender,
      content: m.content,
      contentType: m.contentType,
      timestamp: m.timestamp,
      metadata: m.metadata,
      isMention,
      engaged,
    };
  }

  /** After a feed batch: prune the window against server time, once per batch. */
  endBatch(localNow: number): void {
    pruneVitalityWindow(this.#window, serverNow(this.#clock, localNow));
  }

  /** Records a send of ours. False when this msg id was recorded already (nothing counted). */
  recordOwn(m: { msgId?: string | undefined; timestamp: number; content: string; replyTo?: string | undefined }, localNow: number): boolean {
    if (!this.#own.recordSent(m.msgId, m.content)) return false;
    this.#countOwn(m.timestamp, m.content, m.replyTo, localNow);
    return true;
  }

  serverNow(localNow: number): number {
    return serverNow(this.#clock, localNow);
  }

  vitalityAt(localNow: number): GroupVitality {
    const now = serverNow(this.#clock, localNow);
    pruneVitalityWindow(this.#window, now);
    pruneOwnTimes(this.#ownTimes, now, this.#settings.vitalityWindowMs);
    return computeVitality(this.#window, now, this.#ownTimes);
  }

  engagedSpeakers(localNow: number): string[] {
    return this.#engaged.list(serverNow(this.#clock, localNow));
  }

  #repliesToUs(metadata: Readonly<Record<string, unknown>> | null): boolean {
    if (metadata === null || this.#own.idCount === 0) return false;
    const target = replyTargetOf(metadata);
    return target !== undefined && this.#own.hasId(target);
  }

  /** One of our messages, counted once: lastSelfSpeakAt, the windows, and whom it engages. */
  #countOwn(ts: number, content: string, replyTo: string | undefined, localNow: number): void {
    const s = this.#settings;
    if (this.lastSelfSpeakAt === null || ts > this.lastSelfSpeakAt) this.lastSelfSpeakAt = ts;
    // Our message is group traffic too: it counts in messages/speakers as well as my_messages.
    appendVitalityEvent(this.#window, ts, this.#aid);
    appendOwnTime(this.#ownTimes, ts, serverNow(this.#clock, localNow), s.vitalityWindowMs, s.vitalityMaxEvents);
    const until = ts + s.engagedWindowMs;
    if (replyTo !== undefined) {
      const to = this.#senders.senderOf(replyTo);
      if (to !== undefined && to.toLowerCase() !== this.#aidLower) this.#engaged.engage(to, until, ts);
    }
    // Naming someone in our message starts a conversation with them (DESIGN §4, engaged speakers).
    for (const sender of windowSenders(this.#window)) {
      if (sender.toLowerCase() === this.#aidLower) continue;
      if (checkMention(content, buildMentionKeywords({ aid: sender }), "smart")) this.#engaged.engage(sender, until, ts);
    }
  }
}
