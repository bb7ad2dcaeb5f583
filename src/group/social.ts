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
  /** Speakers we addressed who have not spoken since: they owe us an answer. */
  #owed: Set<string> | null = null;
  /** Engaged speakers someone else has addressed since: talking with us and with them. */
  #shared: Set<string> | null = null;
  /**
   * Engaged speakers who owed us an answer when someone else addressed them: their next line more
   * likely answers that someone (a reply goes to whoever spoke to you last). Until they speak.
   */
  #contested: Set<string> | null = null;
  /** When each engaged speaker last talked with us directly: their mention of us, or our line to them. */
  #direct: Map<string, number> | null = null;

  get size(): number {
    return this.#until?.size ?? 0;
  }

  /**
   * Engages `sender` until `until` (never shortens an existing engagement). `now` is the server
   * time of the message that engages: only engagements already over by then are pruned. `direct`:
   * a direct exchange (their mention of us, our line to them), not a follow-up that only keeps
   * the conversation open.
   */
  engage(sender: string, until: number, now: number, owesAnswer = false, direct = false): void {
    const map = (this.#until ??= new Map());
    const key = sender.toLowerCase();
    if (direct) (this.#direct ??= new Map()).set(key, now);
    if (owesAnswer) (this.#owed ??= new Set()).add(key);
    else this.#owed?.delete(key);
    this.#shared?.delete(key);
    this.#contested?.delete(key);
    const cur = map.get(key);
    if (cur === undefined || cur < until) map.set(key, until);
    if (map.size > ENGAGED_PRUNE_AT) this.prune(now);
  }

  /**
   * `engaged`: inside an engagement of ours alone; `shared`: one someone else joined; `contested`:
   * ours alone, but someone else addressed them after we did and they have not spoken since; else null.
   */
  stateOf(sender: string, ts: number): "engaged" | "shared" | "contested" | null {
    if (this.#until === null) return null;
    const key = sender.toLowerCase();
    const until = this.#until.get(key);
    if (until === undefined || ts > until) return null;
    return this.#shared?.has(key) ? "shared" : this.#contested?.has(key) ? "contested" : "engaged";
  }

  /** Server time of the last direct exchange with an engaged `sender` (see {@link engage}). */
  lastDirect(sender: string): number | undefined {
    return this.#direct?.get(sender.toLowerCase());
  }

  /** Ends the engagement of every speaker whose nick matches `matches` (they now talk with someone else). */
  disengage(matches: (speaker: string) => boolean): void {
    if (this.#until === null) return;
    for (const k of this.#until.keys()) {
      if (!matches(k)) continue;
      this.#until.delete(k);
      this.#owed?.delete(k);
      this.#shared?.delete(k);
      this.#contested?.delete(k);
      this.#direct?.delete(k);
    }
  }

  /**
   * Someone else addressed these speakers: the conversation is shared until they talk to us
   * again. One we addressed last who has not answered yet stays engaged, but contested until
   * they next speak.
   */
  share(matches: (speaker: string) => boolean): void {
    if (this.#until === null) return;
    for (const k of this.#until.keys()) {
      if (!matches(k)) continue;
      if (this.#owed?.has(k)) (this.#contested ??= new Set()).add(k);
      else (this.#shared ??= new Set()).add(k);
    }
  }

  /** The speaker has spoken: whatever they answered, they are no longer contested. */
  spoke(sender: string): void {
    this.#contested?.delete(sender.toLowerCase());
  }

  /** Forgets engagements that ended before `now`. */
  prune(now: number): void {
    if (this.#until === null) return;
    for (const [k, until] of this.#until) {
      if (until >= now) continue;
      this.#until.delete(k);
      this.#owed?.delete(k);
      this.#shared?.delete(k);
      this.#contested?.delete(k);
      this.#direct?.delete(k);
    }
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

  /** Our messages seen coming back from the group (newest last, a few): echo checks after an unsure send. */
  #echoes: Array<{ msgId: string; content: string; timestamp: number }> | null = null;

  noteEcho(msgId: string, content: string, timestamp: number): void {
    const echoes = (this.#echoes ??= []);
    echoes.push({ msgId, content, timestamp });
    if (echoes.length > UNCONFIRMED_CAPACITY) echoes.shift();
  }

  findEcho(content: string, since: number): { msgId: string; timestamp: number } | undefined {
    const echoes = this.#echoes ?? [];
    for (let i = echoes.length - 1; i >= 0; i--) {
      const e = echoes[i]!;
      if (e.content === content && e.timestamp >= since) return { msgId: e.msgId, timestamp: e.timestamp };
    }
    return undefined;
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
