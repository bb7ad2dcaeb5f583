// The group client of one (identity, group): everything before "hand the batch to the agent".
// This class wires the collaborators and owns the feed: the ingest admits each message, the held
// store keeps it, the gates (gates.ts) decide when it goes, the dispatcher (dispatcher.ts) runs one
// dispatch at a time with its retries, and the overload (overload.ts) bounds what is held. They
// share the client's state (client-state.ts) and the group's memory (memory.ts), each through
// its own methods: every accepted message ends in one dispatch or one counted drop.
import { silentLogger } from "../log.ts";
import { BoundedSet } from "../util/bounded-map.ts";
import type { DispatchHandler, GroupMemoryView, GroupMessage, GroupSettings, GroupVitality, InboundMessage, Logger } from "../types.ts";
import { allAnswered, answeredThroughOf } from "./answered.ts";
import { ClientState, type GroupClientEvent, type GroupClientStats } from "./client-state.ts";
import { Dispatcher } from "./dispatcher.ts";
import { DispatchGates } from "./gates.ts";
import type { HeldMessages } from "./held.ts";
import { GroupIngest } from "./ingest.ts";
import { monotonicNow } from "./local-clock.ts";
import { GroupMemory } from "./memory.ts";
import { compileMentionMatcher, sharedMentionKeywords } from "./mention.ts";
import { RoomTalk } from "./exchanges.ts";
import { askerInExchange, mayBeOrphaned, orphanGraceMs } from "./orphans.ts";
import { Overload } from "./overload.ts";
import { compileSenderAccess } from "./sender-access.ts";

export type { GroupClientEvent, GroupClientStats } from "./client-state.ts";

export interface GroupClientParams {
  identityId: string;
  groupId: string;
  identity: { aid: string; name?: string; aliases?: readonly string[]; owner?: string | undefined };
  /**
   * Senders who are people (the identity's owner always is). A mention from anyone else — an
   * agent — waits `agentMentionGapMs`. Absent: every sender counts as a person.
   */
  humans?: readonly string[];
  /**
   * Member types beyond `humans` (the group service; a sender's own agent.md never makes a person):
   * a sender known there as a person is answered without the agent gap too. Config `agents` still wins (it is in them).
   */
  memberTypes?: {
    typeOf(aid: string): { type: "human" | "agent" | "unknown" };
    /** The group's member list as nick keys: `bob: …` addresses bob even before bob has spoken. */
    memberKeysOf?(groupId: string): ReadonlySet<string>;
  };
  /** Effective settings of this (identity, group), from `resolveGroupSettings`. */
  settings: GroupSettings;
  /** The agent side (the monitor). It reads the group through the context it is given, and answers with an outcome. */
  dispatch: DispatchHandler;
  logger?: Logger;
  /** Local clock for timers, epoch-scaled; default monotonic (`performance.timeOrigin + performance.now()`, read at call time, so fake timers apply). */
  localNow?: () => number;
  /** Persisted state from a previous run: the msg id to pull after. */
  restored?: { cursor?: number };
  /** What we said in this group (restored by whoever loaded it); default: nothing yet. */
  memory?: GroupMemory;
  /** Optional observer (replay, tests, metrics). Exceptions it throws are logged and ignored. */
  onEvent?: (e: GroupClientEvent) => void;
  /**
   * Whether another agent is known in the group (a room of agents): only there are open questions
   * watched for the orphan path (src/group/orphans.ts). Absent: never.
   */
  inRoom?: () => boolean;
}

/** One of our own messages, as sent (or as echoed back by the group). */
export interface OwnMessage {
  msgId?: string | undefined;
  /** Server time the message was stamped with. */
  timestamp: number;
  content: string;
  /** msg id this message answers: its sender becomes engaged. */
  replyTo?: string | undefined;
}

export interface GroupClient {
  readonly identityId: string;
  readonly groupId: string;
  readonly settings: GroupSettings;
  /** Keywords built at init (seed §4.2), in order. */
  readonly mentionKeywords: readonly string[];
  /** What we said in this group: the agent side reads the same record with every dispatch. */
  readonly memory: GroupMemoryView;
  /** One call = one batch (for `batchesMerged`). Never throws for message content. */
  feedBufferGate(messages: readonly GroupMessage[]): void;
  /**
   * A line of ours was sent by other means than a dispatch: lastSelfSpeakAt, my_messages_in_5m,
   * engaged speakers. Idempotent per msg id; the later echo of the same message is not counted again.
   */
  recordOwnMessage(m: OwnMessage): void;
  /** Vitality now (server-time estimate). */
  computeVitality(): GroupVitality;
  /** Server-time estimate now: newest server timestamp seen + local time elapsed since. */
  serverNow(): number;
  /** Speakers engaged right now (lower-cased). */
  engagedSpeakers(): string[];
  /** Highest numeric msg id seen (own echoes included; 0 if none) — persist it, pull after it. */
  readonly cursor: number;
  /** Server time of our newest message, or null (the memory's). */
  readonly lastSelfSpeakAt: number | null;
  readonly closed: boolean;
  stats(): GroupClientStats;
  /** Resolves when nothing is buffered, pending or dispatching. */
  whenIdle(): Promise<void>;
  /** Same as closeGroupClientForIdentity. */
  close(): Promise<void>;
}

class GroupClientImpl implements GroupClient {
  // What every feedBufferGate call reads comes first (fields sit in memory in declaration order).
  readonly #s: ClientState;
  readonly #ingest: GroupIngest;
  readonly #held: HeldMessages<InboundMessage>;
  readonly #gates: DispatchGates;
  /** Counted per message here; the rest of the stats are the state's. */
  #received = 0;
  #accepted = 0;
  #batchSeq = 0;
  readonly #overload: Overload;
  readonly #dispatcher: Dispatcher;
  readonly #memory: GroupMemory;
  readonly mentionKeywords: readonly string[];
  /** People, lower-cased (null: everyone is). An agent's mention waits agentMentionGapMs. */
  readonly #humans: ReadonlySet<string> | null;
  readonly #memberTypes: GroupClientParams["memberTypes"];
  #closing: Promise<void> | null = null;
  /** A room's agents contend for its open questions: absent, never. */
  readonly #inRoom: (() => boolean) | undefined;
  /** Who talks with whom, and the room's pace (exchanges.ts); made on the first line seen in a room. */
  #talk: RoomTalk | null = null;
  /** Senders whose refusal was logged already (lower-cased, the last 256); made on the first refusal. */
  #refusedLogged: BoundedSet<string> | null = null;

  constructor(p: GroupClientParams) {
    const mentionKeywords = sharedMentionKeywords(p.identity); // one list per identity, not per group
    this.#memory = p.memory ?? new GroupMemory({ historySize: p.settings.dedup.historySize });
    this.#ingest = new GroupIngest({
      aid: p.identity.aid,
      keywords: mentionKeywords,
      matcher: compileMentionMatcher(mentionKeywords, p.settings.mentionMatch),
      settings: p.settings,
      memory: this.#memory,
      restored: p.restored,
      listedMembers: p.memberTypes?.memberKeysOf ? () => p.memberTypes!.memberKeysOf!(p.groupId) : undefined,
      access: compileSenderAccess({ allowFrom: p.settings.allowFrom, denyFrom: p.settings.denyFrom, owner: p.identity.owner }),
    });
    const s = (this.#s = new ClientState({
      identityId: p.identityId,
      groupId: p.groupId,
      settings: p.settings,
      // A monotonic clock on the epoch scale, not the wall clock: timers, cooldowns and waits are
      // durations, and a wall clock set back an hour would hold a message for that hour. Looked up
      // on each call: fake timers replace `performance` after this module may have been loaded.
      localNow: p.localNow ?? monotonicNow,
      log: p.logger ?? silentLogger,
      ingest: this.#ingest,
      onEvent: p.onEvent,
    }));
    this.#held = s.held;
    this.mentionKeywords = mentionKeywords;
    this.#memberTypes = p.memberTypes;
    this.#humans = p.humans ? new Set([...p.humans, ...(p.identity.owner ? [p.identity.owner] : [])].map((h) => h.toLowerCase())) : null;
    const inRoom = p.inRoom;
    this.#inRoom = inRoom;
    this.#gates = new DispatchGates(
      s,
      (now) => this.#dispatcher.start(now),
      inRoom
        ? {
            aid: p.identity.aid,
            inRoom,
            start: (question, now) => this.#dispatcher.startOrphan(question, now),
            graceMs: () => orphanGraceMs(p.settings.orphans, this.#talk?.answerLatencyMs()),
            stillOpen: (question) => this.#talk === null || !askerInExchange(question, this.#talk, p.settings.orphans),
          }
        : undefined,
    );
    this.#overload = new Overload(s);
    this.#dispatcher = new Dispatcher({ state: s, gates: this.#gates, overload: this.#overload, handler: p.dispatch, memory: this.#memory });
  }

  get identityId(): string {
    return this.#s.identityId;
  }
  get groupId(): string {
    return this.#s.groupId;
  }
  get settings(): GroupSettings {
    return this.#s.settings;
  }
  get memory(): GroupMemoryView {
    return this.#memory;
  }
  get cursor(): number {
    return this.#ingest.cursor;
  }
  get lastSelfSpeakAt(): number | null {
    return this.#memory.lastSelfSpeakAt;
  }
  get closed(): boolean {
    return this.#s.closed;
  }

  feedBufferGate(messages: readonly GroupMessage[]): void {
    const s = this.#s;
    const ingest = this.#ingest;
    const held = this.#held;
    const now = s.localNow();
    const n = messages.length;
    this.#received += n;
    if (s.closed) {
      for (const m of messages) s.drop(m, "group-closed", "arrival");
      return;
    }
    const batchSeq = ++this.#batchSeq;
    const observed = s.observed;
    let added = 0;
    let mention = false;
    let humanMention = false;
    let engagedSeen = false;
    for (let i = 0; i < n; i++) {
      const m = messages[i] as GroupMessage;
      const inbound = ingest.admit(m, now);
      if (typeof inbound === "string") {
        s.drop(m, inbound, "arrival");
        if (inbound === "refused-sender") this.#noteRefused(m.sender);
        // Our own reply came back — what it answered is settled, not answered again.
        if (inbound === "self" && this.#settleAnswered(answeredThroughOf(m.metadata)) && mention) mention = held.holdsMention();
        continue;
      }
      const talk = this.#roomTalk();
      // In a room, a follow-up from someone talking with another person lately is theirs, not ours.
      if (talk !== null && !inbound.isMention && (inbound.engaged || inbound.maybeOurs === true) && talk.inPersonExchangeSince(inbound.sender, inbound.timestamp - s.settings.orphans.freshMs)) {
        inbound.engaged = false;
        delete inbound.maybeOurs;
      }
      if (inbound.isMention) {
        mention = true;
        if (this.#isHuman(inbound.sender)) humanMention = true;
        s.count("mentions");
      } else if (inbound.engaged) {
        engagedSeen = true;
        s.count("engaged");
      } else if (inbound.maybeOurs) engagedSeen = true;
      held.add(inbound);
      added++;
      if (talk !== null) {
        const human = this.#isHuman(inbound.sender);
        talk.observe(inbound.sender, inbound.content, inbound.timestamp, human);
        if (human && mayBeOrphaned(inbound, talk, s.settings.orphans)) this.#gates.questionArrived(inbound, now);
      }
      if (observed) s.emit({ type: "accepted", message: inbound, batchSeq, atLocal: now });
    }
    ingest.endBatch(now);
    if (added === 0) return s.checkIdle();
    this.#accepted += added;
    held.batchArrived();
    if (this.#enforceCapacity() && mention) mention = held.holdsMention();
    if (mention) this.#gates.mentionArrived(now, humanMention);
    else this.#gates.talkArrived(now, engagedSeen);
  }

  recordOwnMessage(m: OwnMessage): void {
    this.#s.recordOwn(m);
  }

  computeVitality(): GroupVitality {
    return this.#ingest.vitalityAt(this.#s.localNow());
  }

  serverNow(): number {
    return this.#ingest.serverNow(this.#s.localNow());
  }

  engagedSpeakers(): string[] {
    return this.#ingest.engagedSpeakers(this.#s.localNow());
  }

  stats(): GroupClientStats {
    return this.#s.stats({ received: this.#received, accepted: this.#accepted });
  }

  whenIdle(): Promise<void> {
    return this.#s.whenIdle();
  }

  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    const s = this.#s;
    s.markClosed();
    this.#gates.shutdown();
    this.#dispatcher.forgetCarry();
    const held = this.#dispatcher.take().messages;
    for (const m of held) s.drop(m, "group-closed", "held");
    if (held.length > 0) s.log.log("info", "group.closed-with-held", { dropped: held.length });
    const settled = s.dispatching ? this.#dispatcher.whenUnlocked() : Promise.resolve();
    this.#closing = settled.then(() => s.checkIdle());
    return this.#closing;
  }

  /** Drops the oldest held messages past maxPendingMessages. True if anything was dropped. */
  #enforceCapacity(): boolean {
    // The overload (another object) is reached only when something must go.
    if (this.#held.length <= this.#s.settings.maxPendingMessages || !this.#overload.enforce()) return false;
    this.#gates.afterCapacityDrop();
    return true;
  }

  /** The room's talk, while the orphan path serves this group (orphans on, another agent known). */
  #roomTalk(): RoomTalk | null {
    if (this.#talk !== null) return this.#talk;
    if (this.#inRoom === undefined || !this.#s.settings.orphans.enabled || !this.#inRoom()) return null;
    const memberTypes = this.#memberTypes;
    const groupId = this.#s.groupId;
    return (this.#talk = new RoomTalk(memberTypes?.memberKeysOf ? () => memberTypes.memberKeysOf!(groupId) : undefined));
  }

  #isHuman(sender: string): boolean {
    if (this.#humans === null || this.#humans.has(sender.toLowerCase())) return true;
    return this.#memberTypes?.typeOf(sender).type === "human";
  }

  /** Drops held messages at or below `through` as `answered` (src/group/answered.ts). True if any. */
  #settleAnswered(through: number | undefined): boolean {
    const s = this.#s;
    if (through === undefined || this.#held.length === 0) return false;
    const answered = this.#held.removeWhere((h) => allAnswered([h], through));
    for (const h of answered) s.drop(h, "answered", "held");
    if (answered.length > 0) s.log.log("info", "group.settled-answered", { messages: answered.length, through });
    return answered.length > 0;
  }

  /** One info line per refused sender (bounded), then only the counter: a flood cannot flood the log. */
  #noteRefused(sender: string): void {
    const key = sender.toLowerCase();
    const logged = (this.#refusedLogged ??= new BoundedSet(256));
    if (logged.has(key)) return;
    logged.add(key);
    this.#s.log.log("info", "group.sender-refused", { sender, allowFrom: this.#s.settings.allowFrom.length, denyFrom: this.#s.settings.denyFrom.length });
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
