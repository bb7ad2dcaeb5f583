// Social memory of one group: who we are engaged with, and which messages are ours.
// Times are server time; callers pass them in.

const ENGAGED_PRUNE_AT = 64;

/**
 * Speakers we are in a conversation with (seed 001: a 60 s window after we talk with someone).
 * Keys are lower-cased senders; values the server time the engagement ends.
 */
export class EngagedSpeakers {
  // Created on the first engagement: most groups never need one.
  #until: Map<string, number> | null = null;

  get size(): number {
    return this.#until?.size ?? 0;
  }

  /**
   * Engages `sender` until `until` (never shortens an existing engagement). `now` is the server
   * time of the message that engages: only engagements already over by then are pruned.
   */
  engage(sender: string, until: number, now: number): void {
    const map = (this.#until ??= new Map());
    const key = sender.toLowerCase();
    const cur = map.get(key);
    if (cur === undefined || cur < until) map.set(key, until);
    if (map.size > ENGAGED_PRUNE_AT) this.prune(now);
  }

  /** True when `sender`'s message stamped `ts` falls inside an engagement. */
  isEngaged(sender: string, ts: number): boolean {
    if (this.#until === null) return false;
    const until = this.#until.get(sender) ?? this.#until.get(sender.toLowerCase());
    return until !== undefined && ts <= until;
  }

  /** Forgets engagements that ended before `now`. */
  prune(now: number): void {
    if (this.#until === null) return;
    for (const [k, until] of this.#until) if (until < now) this.#until.delete(k);
  }

  list(now: number): string[] {
    return [...(this.#until ?? [])].filter(([, until]) => until >= now).map(([k]) => k);
  }
}

const OWN_IDS_CAPACITY = 128;
const UNCONFIRMED_CAPACITY = 16;

/**
 * Our own recent messages: their ids (a reply to one of them is an implicit mention) and the
 * sends not yet seen echoed back by the group, so the echo is not counted a second time.
 */
export class OwnMessages {
  #ids: Set<string> | null = null;
  #idRing: string[] = [];
  #idNext = 0;
  /** Sends whose echo has not arrived yet: by msg id, or by content when the id was unknown. */
  #unconfirmed: Array<{ msgId: string | undefined; content: string }> = [];

  get idCount(): number {
    return this.#ids?.size ?? 0;
  }

  hasId(msgId: string): boolean {
    return this.#ids?.has(msgId) ?? false;
  }

  /** Records a send; returns false when this msg id was already recorded (nothing to count). */
  recordSent(msgId: string | undefined, content: string): boolean {
    if (msgId !== undefined) {
      if (this.hasId(msgId)) return false;
      this.#addId(msgId);
    }
    this.#unconfirmed.push({ msgId, content });
    if (this.#unconfirmed.length > UNCONFIRMED_CAPACITY) this.#unconfirmed.shift();
    return true;
  }

  /**
   * Our message came back from the group. True when it is the echo of a recorded send (matched
   * by id, or by content for a send recorded without an id) and so was counted already.
   */
  confirmEcho(msgId: string, content: string): boolean {
    const known = this.hasId(msgId);
    let i = this.#unconfirmed.findIndex((u) => u.msgId === msgId);
    if (i < 0 && !known) i = this.#unconfirmed.findIndex((u) => u.msgId === undefined && u.content === content);
    if (i >= 0) this.#unconfirmed.splice(i, 1);
    if (!known) this.#addId(msgId);
    return known || i >= 0;
  }

  #addId(msgId: string): void {
    const ids = (this.#ids ??= new Set());
    if (this.#idRing.length < OWN_IDS_CAPACITY) {
      this.#idRing.push(msgId);
    } else {
      ids.delete(this.#idRing[this.#idNext] as string);
      this.#idRing[this.#idNext] = msgId;
      this.#idNext = (this.#idNext + 1) % OWN_IDS_CAPACITY;
    }
    ids.add(msgId);
  }
}
