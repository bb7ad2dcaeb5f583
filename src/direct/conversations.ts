// An identity's direct conversations: each message from the network goes to its peer's
// conversation once the policy admits the sender (access.ts; the pairing hook for the unknown
// under `pairing`), a refused sender gets at most a one-line notice and never the model, and at
// most `maxConversations` exchanges are open (the least recently active is ended first, the
// owner's last). Conversations with nothing open are let go; their records stay for the next
// message and the next run. Messages of one peer are taken in order.
import type { DirectPairing, DirectSettings, DispatchHandler, GroupSender, Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import type { DirectAccess, DirectRefusal } from "./access.ts";
import { DirectConversation, type DirectEvent, type DirectPeerRecord } from "./conversation.ts";
import { directMessageKey } from "./journal.ts";

/** One direct message as the network delivered it (src/network/direct-link.ts). */
export interface IncomingDirect {
  peer: string;
  sessionId: string;
  messageId: string;
  text: string;
  at: number;
  payload: string;
}

export interface DirectConversationsParams {
  identityId: string;
  aid: string;
  owner: string | undefined;
  settings: DirectSettings;
  maxRetries: number;
  retryBackoffMs: number;
  historySize: number;
  access: (peer: string) => DirectAccess;
  /** Asked for senders no list admits under `pairing`. Without one, they are refused. */
  pairing?: DirectPairing | undefined;
  peerIsPerson: (peer: string) => boolean;
  /** The agent side of one conversation: a monitor answering through `sender`. */
  openAgentSide: (p: { peer: string; sender: GroupSender }) => { handle: DispatchHandler; close(): void };
  /** Sends a line to `peer` (on `sessionId` when still live). */
  send: (p: { peer: string; text: string; sessionId: string | undefined }) => Promise<void>;
  restored?: readonly DirectPeerRecord[] | undefined;
  persist: (urgency: "now" | "soon") => void;
  now: () => number;
  logger: Logger;
  onEvent?: ((e: DirectEvent | { type: "refused"; peer: string; reason: DirectRefusal; text: string }) => void) | undefined;
}

/** Peers whose records are kept (the most recently active); older ones are forgotten. */
export const MAX_KNOWN_PEERS = 200;
/** A refused sender hears the notice at most this often. */
const NOTICE_EVERY_MS = 3600_000;
const MAX_NOTICED = 1000;

interface Open {
  conversation: DirectConversation;
  agent: { handle: DispatchHandler; close(): void };
}

export class DirectConversations {
  readonly #p: DirectConversationsParams;
  readonly #open = new Map<string, Open>();
  /** Records of peers with no conversation in memory, by lower-cased aid; the least recently let go are forgotten first. */
  readonly #records = new BoundedMap<string, DirectPeerRecord>(MAX_KNOWN_PEERS);
  /** Each peer's intake, so an asynchronous pairing check never reorders its messages. */
  readonly #intake = new Map<string, Promise<void>>();
  readonly #noticedAt = new BoundedMap<string, number>(MAX_NOTICED);
  #closed = false;

  constructor(p: DirectConversationsParams) {
    this.#p = p;
    // Saved most recently active first: written oldest first, so the newest is the last forgotten.
    for (const r of [...(p.restored ?? [])].reverse()) this.#records.set(r.peer.toLowerCase(), r);
  }

  /**
   * A direct message from the network. Decided and journaled before this returns — the network
   * keeps no copy — unless the pairing hook must be asked (then in order behind the peer's others).
   */
  receive(m: IncomingDirect): void {
    if (this.#closed) return;
    const who = m.peer.toLowerCase();
    const access = this.#p.access(m.peer);
    if (!this.#intake.has(who) && access.admit !== "pairing-check") {
      return this.#admit(m, access.admit === true ? undefined : { reason: access.reason });
    }
    const prev = this.#intake.get(who) ?? Promise.resolve();
    const next = prev
      .then(() => this.#take(m))
      .catch((err: unknown) => this.#p.logger.log("error", "direct.intake-failed", { peer: m.peer, ...errorFields(err) }))
      .finally(() => {
        if (this.#intake.get(who) === next) this.#intake.delete(who);
      });
    this.#intake.set(who, next);
  }

  /** After a restart: every peer with messages waiting is answered (those a reply may have gone out for are reported). */
  resume(): void {
    for (const [who, r] of [...this.#records]) if (r.pending.length > 0) this.#conversation(who, r.peer).resume();
  }

  /** Every peer's record, the most recently active first, at most MAX_KNOWN_PEERS. */
  snapshot(): DirectPeerRecord[] {
    const all = [...this.#records.values(), ...[...this.#open.values()].map((o) => o.conversation.snapshot())];
    return all.sort((a, b) => (b.exchange?.lastActivityAt ?? 0) - (a.exchange?.lastActivityAt ?? 0)).slice(0, MAX_KNOWN_PEERS);
  }

  /** How many exchanges are open now. */
  get openCount(): number {
    return this.#open.size;
  }

  close(): void {
    this.#closed = true;
    for (const o of this.#open.values()) {
      o.conversation.close();
      o.agent.close();
    }
  }

  async #take(m: IncomingDirect): Promise<void> {
    if (this.#isDuplicate(m)) return;
    const refused = await this.#refusal(m.peer);
    if (!this.#closed) this.#admit(m, refused);
  }

  /** Into the peer's conversation, or refused; a frame seen before is dropped. */
  #admit(m: IncomingDirect, refused: { reason: DirectRefusal; reply?: string | undefined } | undefined): void {
    if (this.#isDuplicate(m)) return;
    if (refused !== undefined) return this.#refuse(m, refused);
    this.#conversation(m.peer.toLowerCase(), m.peer).receive({ key: directMessageKey(m), sessionId: m.sessionId, text: m.text, at: m.at });
  }

  #isDuplicate(m: IncomingDirect): boolean {
    const key = directMessageKey(m);
    const who = m.peer.toLowerCase();
    const known = this.#open.get(who)?.conversation ?? this.#records.get(who);
    if (!known || !(known instanceof DirectConversation ? known.knows(key) : isKnown(known, key))) return false;
    this.#p.logger.log("debug", "direct.duplicate", { peer: m.peer, key });
    return true;
  }

  /** Why the sender is refused, or undefined when admitted (asking the pairing hook when the policy says so). */
  async #refusal(peer: string): Promise<{ reason: DirectRefusal; reply?: string | undefined } | undefined> {
    const access = this.#p.access(peer);
    if (access.admit === true) return undefined;
    if (access.admit === false) return { reason: access.reason };
    const pairing = this.#p.pairing;
    const who = { identityId: this.#p.identityId, aid: this.#p.aid, peer };
    if (pairing && (await pairing.isApproved(who))) return undefined;
    const asked = pairing ? await pairing.request({ ...who, now: this.#p.now() }) : {};
    return { reason: "pairing-required", reply: asked.reply };
  }

  /** Nothing reaches the model. The log says why; the sender hears at most one line (the pairing reply, or the notice once an hour). */
  #refuse(m: IncomingDirect, r: { reason: DirectRefusal; reply?: string | undefined }): void {
    this.#p.logger.log("info", "direct.refused", { peer: m.peer, reason: r.reason, sessionId: m.sessionId, chars: m.text.length });
    this.#p.onEvent?.({ type: "refused", peer: m.peer, reason: r.reason, text: m.text });
    const line = r.reason === "pairing-required" ? r.reply : this.#noticeFor(m.peer);
    if (line === undefined) return;
    void this.#p.send({ peer: m.peer, text: line, sessionId: m.sessionId }).catch((err: unknown) => this.#p.logger.log("warn", "direct.notice-failed", { peer: m.peer, ...errorFields(err) }));
  }

  #noticeFor(peer: string): string | undefined {
    const notice = this.#p.settings.refusalNotice;
    if (notice === undefined) return undefined;
    const who = peer.toLowerCase();
    const now = this.#p.now();
    const last = this.#noticedAt.get(who);
    if (last !== undefined && now - last < NOTICE_EVERY_MS) return undefined;
    this.#noticedAt.set(who, now);
    return notice;
  }

  /** The peer's conversation, opened (from its record) when needed; making room first. */
  #conversation(who: string, peer: string): DirectConversation {
    const found = this.#open.get(who);
    if (found) return found.conversation;
    this.#makeRoom();
    let agent: Open["agent"] | undefined;
    const conversation = new DirectConversation({
      identityId: this.#p.identityId,
      peer,
      settings: this.#p.settings,
      maxRetries: this.#p.maxRetries,
      retryBackoffMs: this.#p.retryBackoffMs,
      historySize: this.#p.historySize,
      restored: this.#records.get(who),
      peerIsPerson: () => this.#p.peerIsPerson(peer),
      dispatch: (batch, ctx) => agent!.handle(batch, ctx),
      send: (text, sessionId) => this.#p.send({ peer, text, sessionId }),
      persist: this.#p.persist,
      now: this.#p.now,
      logger: this.#p.logger,
      onEvent: this.#p.onEvent,
      onIdle: (c) => this.#letGo(who, c),
    });
    agent = this.#p.openAgentSide({ peer, sender: conversation.sender });
    this.#records.delete(who);
    this.#open.set(who, { conversation, agent });
    return conversation;
  }

  /** At the cap, the least recently active exchange ends (the owner's last). */
  #makeRoom(): void {
    if (this.#open.size < this.#p.settings.maxConversations) return;
    const owner = this.#p.owner?.toLowerCase();
    const victims = [...this.#open].sort(([a, x], [b, y]) => Number(a === owner) - Number(b === owner) || x.conversation.lastActivityAt - y.conversation.lastActivityAt);
    for (const [who, o] of victims) {
      if (this.#open.size < this.#p.settings.maxConversations) break;
      o.conversation.end("evicted");
      // Still answering: it stays until its dispatch settles (then it is let go).
      if (!o.conversation.active) this.#letGo(who, o.conversation);
    }
  }

  /** Nothing open, nothing in flight: the conversation goes, its record stays. */
  #letGo(who: string, c: DirectConversation): void {
    const o = this.#open.get(who);
    if (!o || o.conversation !== c) return;
    this.#records.set(who, c.snapshot());
    this.#open.delete(who);
    c.close();
    o.agent.close();
    this.#p.persist("soon");
  }
}

const isKnown = (r: DirectPeerRecord, key: string): boolean => r.seen.includes(key) || r.pending.some((p) => p.key === key);
