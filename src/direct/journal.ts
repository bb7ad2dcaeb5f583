// What a direct conversation owes its peer, kept so that a message is answered once across
// restarts and reconnects: the messages received and not yet settled (answered, or skipped with a
// reason), which of them a reply may already have gone out for, and the keys of the last settled
// ones (a duplicate frame is recognised and dropped). The network keeps no history of direct
// messages, so this is the only record: the runtime writes it to disk before every send and after
// every settle. Pure bookkeeping, no timers or files.

/** One received message not settled yet. */
export interface PendingDirect {
  /** Stable across a redelivery of the same frame (see `directMessageKey`). */
  key: string;
  sessionId: string;
  text: string;
  /** Service time it carried (ms). */
  at: number;
  /** A reply answering it was handed to the socket: after a crash it may have gone out, so it is not answered again. */
  sending?: true;
}

export interface DirectJournalSnapshot {
  pending: PendingDirect[];
  /** Keys of settled messages, oldest first. */
  seen: string[];
}

/** The key a direct conversation goes by where a group id would (state files, the back-end's history, logs). */
export const directKeyOf = (peer: string): string => `dm:${peer.toLowerCase()}`;

/** Settled keys remembered per peer: duplicates come back within seconds, not hundreds of messages later. */
export const SEEN_KEYS = 100;
/** Unsettled messages held per peer; past this the oldest are given up (logged by the caller). */
export const MAX_PENDING = 100;

/**
 * A message's key: its frame's message_id plus a hash of its session and text. The SDK's ids are
 * milliseconds, so two messages of one millisecond share one; the same frame delivered twice keeps its key.
 */
export function directMessageKey(m: { messageId: string; sessionId: string; payload: string; at: number }): string {
  return `${m.messageId || String(m.at)}.${fnv1a(`${m.sessionId}\n${m.payload}`)}`;
}

export class DirectJournal {
  #pending: PendingDirect[];
  #seen: string[];

  constructor(restored?: DirectJournalSnapshot) {
    this.#pending = (restored?.pending ?? []).map((p) => ({ ...p }));
    this.#seen = [...(restored?.seen ?? [])].slice(-SEEN_KEYS);
  }

  /** Received already (settled, or waiting): a duplicate. */
  knows(key: string): boolean {
    return this.#seen.includes(key) || this.#pending.some((p) => p.key === key);
  }

  get pending(): readonly PendingDirect[] {
    return this.#pending;
  }

  /** A new message waits for its answer. Returns the messages given up to make room (oldest first). */
  receive(p: PendingDirect): PendingDirect[] {
    this.#pending.push({ ...p });
    const over = this.#pending.length - MAX_PENDING;
    if (over <= 0) return [];
    const dropped = this.#pending.splice(0, over);
    this.#remember(dropped.map((d) => d.key));
    return dropped;
  }

  /** A reply answering these is about to go out (`true`), or did not leave after all (`false`). */
  markSending(keys: ReadonlySet<string>, sending: boolean): void {
    for (const p of this.#pending) {
      if (!keys.has(p.key)) continue;
      if (sending) p.sending = true;
      else delete p.sending;
    }
  }

  /** Answered or skipped for good: off the pending list, and remembered as seen. */
  settle(keys: ReadonlySet<string>): void {
    const settled = this.#pending.filter((p) => keys.has(p.key)).map((p) => p.key);
    this.#pending = this.#pending.filter((p) => !keys.has(p.key));
    this.#remember([...new Set([...settled, ...keys])]);
  }

  snapshot(): DirectJournalSnapshot {
    return { pending: this.#pending.map((p) => ({ ...p })), seen: [...this.#seen] };
  }

  #remember(keys: readonly string[]): void {
    for (const k of keys) if (!this.#seen.includes(k)) this.#seen.push(k);
    if (this.#seen.length > SEEN_KEYS) this.#seen = this.#seen.slice(-SEEN_KEYS);
  }
}

/** FNV-1a over UTF-16 code units, 8 hex digits. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
