// What we said in one group, kept once: our recent message ids and the echoes of our sends, the
// last time we spoke, the newest msg id our replies say they answered, and the reply memory weak
// dedup compares against. The group client writes it — when a dispatch settles with a sent reply,
// when a line of ours is sent by other means, when one of our messages comes back from the group —
// and the agent side reads it through GroupMemoryView (types.ts). No timers; times are server time.
import type { DedupKey, GroupMessage, GroupMemoryView, OwnReply, PersistedGroupState, ReplyMemory } from "../types.ts";
import { answeredThroughOf } from "./answered.ts";
import { OwnMessages } from "./social.ts";

/** The weak-dedup key of a text of ours (src/monitor/dedup.ts#dedupKeyOf). */
export type DedupKeyOf = (text: string) => DedupKey;

export interface GroupMemoryParams {
  /** How many recent replies the reply memory and the prompt keep (`dedup.historySize`). */
  historySize: number;
  /** What a previous run saved. */
  restored?: Partial<Pick<PersistedGroupState, "lastSelfSpeakAt" | "replyHashes" | "replyTexts">> | undefined;
  /**
   * Our messages read back from the group (an echo, or history after a restart that lost the
   * state save) rejoin the reply memory under this key, so a restarted agent does not say them
   * again. Absent — a replay, where the persona's lines in the log are the person's words, not
   * replies this agent wrote — they count as ours for timing and engagement only.
   */
  restoreReplies?: DedupKeyOf | undefined;
}

/** A send of ours, as it settled. */
export interface SentMessage {
  msgId?: string | undefined;
  /** Server time the message was stamped with. */
  timestamp: number;
  content: string;
  /** Its weak-dedup key: the reply memory takes it. Absent: it is not compared against later. */
  key?: DedupKey | undefined;
}

// Shared while a group has said nothing: thousands of idle groups hold no arrays of their own
// (every write below makes new ones).
const NO_REPLIES: ReplyMemory = Object.freeze({ hashes: Object.freeze([]), texts: Object.freeze([]) });
const NO_OWN_REPLIES: readonly OwnReply[] = Object.freeze([]);
const NO_OWN_IDS: Pick<OwnMessages, "hasId" | "idCount"> = Object.freeze({ hasId: () => false, idCount: 0 });

export class GroupMemory implements GroupMemoryView {
  /** Made when we first say something or a message of ours comes back. */
  #own: OwnMessages | null = null;
  #lastSelfSpeakAt: number | null;
  #answeredThrough: number | undefined;
  #replies: ReplyMemory;
  #ownReplies: readonly OwnReply[] = NO_OWN_REPLIES;
  readonly #historySize: number;
  readonly #restoreReplies: DedupKeyOf | undefined;

  constructor(p: GroupMemoryParams) {
    this.#historySize = p.historySize;
    this.#restoreReplies = p.restoreReplies;
    this.#lastSelfSpeakAt = p.restored?.lastSelfSpeakAt ?? null;
    const r = p.restored;
    this.#replies = r?.replyHashes?.length || r?.replyTexts?.length ? { hashes: r.replyHashes ?? [], texts: r.replyTexts ?? [] } : NO_REPLIES;
  }

  get lastSelfSpeakAt(): number | null {
    return this.#lastSelfSpeakAt;
  }

  get answeredThrough(): number | undefined {
    return this.#answeredThrough;
  }

  get ownReplies(): readonly OwnReply[] {
    return this.#ownReplies;
  }

  get replies(): ReplyMemory {
    return this.#replies;
  }

  /** Ids of our recent messages: a reply to one of them is to us. */
  get own(): Pick<OwnMessages, "hasId" | "idCount"> {
    return this.#own ?? NO_OWN_IDS;
  }

  findEcho(content: string, since: number): { msgId: string; timestamp: number } | undefined {
    return this.#own?.findEcho(content, since);
  }

  /**
   * A send of ours settled. With a dedup key (a reply the agent side wrote) it joins the reply
   * memory and our recent replies. True when this msg id is new to us — the caller counts it as
   * group traffic; false when it was recorded already (its echo may have come back first).
   */
  recordSent(m: SentMessage): boolean {
    if (m.key !== undefined) {
      this.#replies = rememberReply(this.#replies, m.key, this.#historySize);
      // The echo may have been remembered already (it can arrive before the send's answer).
      this.#ownReplies = [...this.#ownReplies.filter((o) => o.msgId !== m.msgId), { timestamp: m.timestamp, text: m.content, msgId: m.msgId }].slice(-this.#historySize);
    }
    this.#spokeAt(m.timestamp);
    return (this.#own ??= new OwnMessages()).recordSent(m.msgId, m.content);
  }

  /**
   * One of our messages came back from the group: its answered-through settles what it answered,
   * and (when restoring) it rejoins the reply memory. True when it is new to us — not the echo of a
   * send recorded already — and so is counted by the caller as group traffic.
   */
  recordEcho(m: Pick<GroupMessage, "msgId" | "content" | "timestamp" | "metadata">): boolean {
    const through = answeredThroughOf(m.metadata);
    if (through !== undefined && (this.#answeredThrough === undefined || through > this.#answeredThrough)) this.#answeredThrough = through;
    if (this.#restoreReplies !== undefined) this.#restore(m, this.#restoreReplies(m.content));
    const own = (this.#own ??= new OwnMessages());
    own.noteEcho(m.msgId, m.content, m.timestamp);
    const counted = own.confirmEcho(m.msgId, m.content);
    this.#spokeAt(m.timestamp);
    return !counted;
  }

  /** What a restart needs back. */
  snapshot(): Pick<PersistedGroupState, "lastSelfSpeakAt" | "replyHashes" | "replyTexts"> {
    return { lastSelfSpeakAt: this.#lastSelfSpeakAt, replyHashes: [...this.#replies.hashes], replyTexts: [...this.#replies.texts] };
  }

  #restore(m: Pick<GroupMessage, "msgId" | "content" | "timestamp">, key: DedupKey): void {
    if (this.#replies.hashes.includes(key.hash)) return;
    this.#replies = rememberReply(this.#replies, key, this.#historySize);
    this.#ownReplies = [...this.#ownReplies, { timestamp: m.timestamp, text: m.content, msgId: m.msgId }].slice(-this.#historySize);
  }

  #spokeAt(ts: number): void {
    if (Number.isFinite(ts) && (this.#lastSelfSpeakAt === null || ts > this.#lastSelfSpeakAt)) this.#lastSelfSpeakAt = ts;
  }
}

/** Adds a sent reply, keeping the newest `historySize`; a reply remembered already moves to the end. Returns a new memory. */
export function rememberReply(memory: ReplyMemory, key: DedupKey, historySize: number): ReplyMemory {
  // Once per reply: our echo can come back before the send is acknowledged, and both remember it.
  const at = memory.hashes.indexOf(key.hash);
  const hashes = at < 0 ? memory.hashes : memory.hashes.filter((_, i) => i !== at);
  const texts = at < 0 ? memory.texts : memory.texts.filter((_, i) => i !== at);
  return {
    hashes: [...hashes, key.hash].slice(-historySize),
    texts: [...texts, key.normalized].slice(-historySize),
  };
}
