// The group client of one (identity, group): everything before "hand the batch to the agent".
// This class wires the collaborators and owns the feed: the ingest admits each message, the held
// store keeps it, the gates (gates.ts) decide when it goes, the dispatcher (dispatcher.ts) runs one
// dispatch at a time with its retries, and the overload (overload.ts) bounds what is held. The
// client is the ClientState they share (client-state.ts): every accepted message ends in one
// dispatch or one counted drop there.
import { silentLogger } from "../log.ts";
import type { GroupMessage, GroupVitality } from "../types.ts";
import { ClientState } from "./client-state.ts";
import { Dispatcher } from "./dispatcher.ts";
import { DispatchGates } from "./gates.ts";
import type { GroupClient, GroupClientParams, OwnMessage } from "./group-client-types.ts";
import { GroupIngest } from "./ingest.ts";
import { monotonicNow } from "./local-clock.ts";
import { compileSenderAccess } from "./sender-access.ts";
import { allAnswered, answeredThroughOf } from "./answered.ts";
import { compileMentionMatcher, sharedMentionKeywords } from "./mention.ts";
import { Overload } from "./overload.ts";

export type { GroupClient, GroupClientEvent, GroupClientParams, GroupClientStats, OwnMessage } from "./group-client-types.ts";

// The client is its own shared state: a feed then reads its hot fields (declared first in
// client-state.ts) from this object instead of following a pointer to a second, cold one.
class GroupClientImpl extends ClientState implements GroupClient {
  readonly #gates: DispatchGates;
  readonly #overload: Overload;
  readonly #dispatcher: Dispatcher;
  readonly mentionKeywords: readonly string[];
  /** People, lower-cased (null: everyone is). An agent's mention waits agentMentionGapMs. */
  readonly #humans: ReadonlySet<string> | null;
  readonly #memberTypes: GroupClientParams["memberTypes"];
  #closing: Promise<void> | null = null;
  /** Senders whose refusal was logged already (lower-cased); made on the first refusal. */
  #refusedLogged: Set<string> | null = null;

  constructor(p: GroupClientParams) {
    const mentionKeywords = sharedMentionKeywords(p.identity); // one list per identity, not per group
    super({
      identityId: p.identityId,
      groupId: p.groupId,
      settings: p.settings,
      // A monotonic clock on the epoch scale, not the wall clock: timers, cooldowns and waits are
      // durations, and a wall clock set back an hour would hold a message for that hour. Looked up
      // on each call: fake timers replace `performance` after this module may have been loaded.
      localNow: p.localNow ?? monotonicNow,
      log: p.logger ?? silentLogger,
      ingest: new GroupIngest({
        aid: p.identity.aid,
        keywords: mentionKeywords,
        matcher: compileMentionMatcher(mentionKeywords, p.settings.mentionMatch),
        settings: p.settings,
        restored: p.restored,
        listedMembers: p.memberTypes?.memberKeysOf ? () => p.memberTypes!.memberKeysOf!(p.groupId) : undefined,
        access: compileSenderAccess({ allowFrom: p.settings.allowFrom, denyFrom: p.settings.denyFrom, owner: p.identity.owner }),
      }),
      onEvent: p.onEvent,
    });
    this.mentionKeywords = mentionKeywords;
    this.#memberTypes = p.memberTypes;
    this.#humans = p.humans ? new Set([...p.humans, ...(p.identity.owner ? [p.identity.owner] : [])].map((h) => h.toLowerCase())) : null;
    this.arrivals = this.#gates = new DispatchGates(this, (now) => this.#dispatcher.start(now));
    this.#overload = new Overload(this);
    this.#dispatcher = new Dispatcher({ state: this, gates: this.#gates, overload: this.#overload, handler: p.dispatch });
  }

  get cursor(): number {
    return this.ingest.cursor;
  }
  get lastSelfSpeakAt(): number | null {
    return this.ingest.lastSelfSpeakAt;
  }

  feedBufferGate(messages: readonly GroupMessage[]): void {
    const s = this;
    const now = s.localNow();
    if (s.closed) {
      for (const m of messages) {
        s.received++;
        s.drop(m, "group-closed", "arrival");
      }
      return;
    }
    const batchSeq = ++s.batchSeq;
    let added = 0;
    let mention = false;
    let humanMention = false;
    let engagedSeen = false;
    const n = messages.length;
    s.received += n;
    for (let i = 0; i < n; i++) {
      const m = messages[i] as GroupMessage;
      const inbound = s.ingest.admit(m, now);
      if (typeof inbound === "string") {
        s.drop(m, inbound, "arrival");
        if (inbound === "refused-sender") this.#noteRefused(m.sender);
        // Our own reply came back — what it answered is settled, not answered again.
        if (inbound === "self" && this.#settleAnswered(answeredThroughOf(m.metadata)) && mention) mention = s.held.holdsMention();
        continue;
      }
      if (inbound.isMention) {
        mention = true;
        if (this.#isHuman(inbound.sender)) humanMention = true;
        s.counts.mentions++;
      } else if (inbound.engaged) {
        engagedSeen = true;
        s.counts.engaged++;
      } else if (inbound.maybeOurs) engagedSeen = true;
      s.held.add(inbound);
      added++;
      if (s.onEvent) s.emit({ type: "accepted", message: inbound, batchSeq, atLocal: now });
    }
    s.ingest.endBatch(now);
    if (added === 0) return s.checkIdle();
    s.accepted += added;
    s.held.batches++;
    if (this.#enforceCapacity() && mention) mention = s.held.holdsMention();
    if (mention) s.arrivals.mentionArrived(now, humanMention);
    else s.arrivals.talkArrived(now, engagedSeen);
  }

  recordOwnMessage(m: OwnMessage): void {
    this.recordOwn(m);
  }

  computeVitality(): GroupVitality {
    return this.ingest.vitalityAt(this.localNow());
  }

  serverNow(): number {
    return this.ingest.serverNow(this.localNow());
  }

  engagedSpeakers(): string[] {
    return this.ingest.engagedSpeakers(this.localNow());
  }

  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    const s = this;
    s.closed = true;
    this.#gates.reset();
    const held = this.#dispatcher.take().messages;
    for (const m of held) s.drop(m, "group-closed", "held");
    if (held.length > 0) s.log.log("info", "group.closed-with-held", { dropped: held.length });
    const settled = s.dispatching ? this.#dispatcher.whenUnlocked() : Promise.resolve();
    this.#closing = settled.then(() => s.checkIdle());
    return this.#closing;
  }

  /** Drops the oldest held messages past maxPendingMessages. True if anything was dropped. */
  #enforceCapacity(): boolean {
    // Checked from the hot fields: the overload (another object) is reached only when something must go.
    if (this.held.length <= this.settings.maxPendingMessages || !this.#overload.enforce()) return false;
    this.#gates.afterCapacityDrop();
    return true;
  }

  #isHuman(sender: string): boolean {
    if (this.#humans === null || this.#humans.has(sender.toLowerCase())) return true;
    return this.#memberTypes?.typeOf(sender).type === "human";
  }

  /** Drops held messages at or below `through` as `answered` (src/group/answered.ts). True if any. */
  #settleAnswered(through: number | undefined): boolean {
    const s = this;
    if (through === undefined || s.held.length === 0) return false;
    const answered = s.held.removeWhere((h) => allAnswered([h], through));
    for (const h of answered) s.drop(h, "answered", "held");
    if (answered.length > 0) s.log.log("info", "group.settled-answered", { messages: answered.length, through });
    return answered.length > 0;
  }

  /** One info line per refused sender (bounded), then only the counter: a flood cannot flood the log. */
  #noteRefused(sender: string): void {
    const key = sender.toLowerCase();
    const logged = (this.#refusedLogged ??= new Set());
    if (logged.has(key)) return;
    if (logged.size >= 256) logged.clear();
    logged.add(key);
    this.log.log("info", "group.sender-refused", { sender, allowFrom: this.settings.allowFrom.length, denyFrom: this.settings.denyFrom.length });
  }
}

/** Builds the per-(identity, group) client: mention matcher, vitality window, empty buffers. */
export function initGroupClientForIdentity(p: GroupClientParams): GroupClient {
  return new GroupClientImpl(p);
}

/**
 * Clears every timer; buffered and pending messages become counted "group-closed" drops (each
 * reported via onEvent); waits for a running dispatch to settle. Later feeds are dropped the same way.
 */
export function closeGroupClientForIdentity(c: GroupClient): Promise<void> {
  return c.close();
}
