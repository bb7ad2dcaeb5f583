// One direct conversation of one identity with one peer: the peer's messages held until the agent
// side (the monitor's dispatch pipeline, run as a direct conversation) answers them — one dispatch
// at a time, at once, all that arrived meanwhile in the next — what we said (for the duplicate
// check and the prompt), the journal that makes each message answered once, and the exchange's
// limits (exchange.ts) with their timers. It never talks to a socket: it sends through `send`.
import type { DirectSettings, DispatchBatch, DispatchHandler, DispatchOutcome, GroupContext, GroupSender, InboundMessage, Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { GroupMemory } from "../group/memory.ts";
import { admitInbound, afterReply, deadlines, endExchange, openExchange, type Exchange, type ExchangeEnd } from "./exchange.ts";
import { DirectJournal, directKeyOf, type DirectJournalSnapshot, type PendingDirect } from "./journal.ts";

/** What survives a restart per (identity, peer). */
export interface DirectPeerRecord extends DirectJournalSnapshot {
  peer: string;
  lastSelfSpeakAt: number | null;
  replyHashes: string[];
  replyTexts: string[];
  exchange?: Exchange;
  /** The peer's newest session: our answer goes there. */
  sessionId?: string;
}

/** What happened in a direct conversation, for a live view (the CLI's transcript). */
export type DirectEvent =
  | { type: "received"; peer: string; text: string; at: number }
  | { type: "sent"; peer: string; text: string; at: number }
  | { type: "not-answered"; peer: string; reason: string }
  | { type: "ended"; peer: string; reason: ExchangeEnd };

export interface DirectConversationParams {
  identityId: string;
  peer: string;
  settings: DirectSettings;
  /** Retries of a failed dispatch and their backoff (this × 2^n), as for groups. */
  maxRetries: number;
  retryBackoffMs: number;
  /** Own replies remembered for the duplicate check. */
  historySize: number;
  restored?: DirectPeerRecord | undefined;
  /** Is the peer a known person (the owner, `humans`, agent.md)? A person has no turn cap and no rest. */
  peerIsPerson: () => boolean;
  /** The agent side for this conversation (the monitor built with `sender`). */
  dispatch: DispatchHandler;
  /** Sends one line to the peer, on `sessionId` when it is still live; rejects when it did not leave. */
  send: (text: string, sessionId: string | undefined) => Promise<void>;
  /** The conversation's record changed: `now` before a send and after a settle, `soon` otherwise. */
  persist: (urgency: "now" | "soon") => void;
  /** Local clock (ms). */
  now: () => number;
  logger: Logger;
  onEvent?: ((e: DirectEvent) => void) | undefined;
  /** The exchange ended and nothing is in flight: the owner may let the conversation go. */
  onIdle: (c: DirectConversation) => void;
}

// A direct conversation has no vitality; the record shows a quiet one.
const QUIET = { state: "DORMANT" as const, messagesIn5m: 0, uniqueSpeakersIn5m: 0, myMessagesIn5m: 0, updatedAt: 0 };

export class DirectConversation {
  readonly peer: string;
  readonly key: string;
  readonly #p: DirectConversationParams;
  readonly #memory: GroupMemory;
  readonly #journal: DirectJournal;
  /** The monitor's sender: marks the batch in the journal, saves, then sends. */
  readonly sender: GroupSender;
  #exchange: Exchange | undefined;
  #sessionId: string | undefined;
  /** Messages waiting for the next dispatch, oldest first. */
  #held: InboundMessage[] = [];
  #busy = false;
  #closed = false;
  #dispatchId = 0;
  #attempt = 0;
  #carried: DispatchBatch["carried"];
  /** The batch being answered now (what a send marks in the journal). */
  #inFlight: ReadonlySet<string> = new Set();
  #sent = 0;
  /** Ends an idle exchange; re-armed on every message either way, cleared at its end and on close. */
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Ends the exchange at its maximum length; armed when it opens, cleared at its end and on close. */
  #lengthTimer: ReturnType<typeof setTimeout> | undefined;
  /** Waits out the backoff before a failed dispatch is tried again; cleared when it fires and on close. */
  #retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(p: DirectConversationParams) {
    this.#p = p;
    this.peer = p.peer;
    this.key = directKeyOf(p.peer);
    const r = p.restored;
    this.#memory = new GroupMemory({ historySize: p.historySize, restored: r ? { lastSelfSpeakAt: r.lastSelfSpeakAt, replyHashes: r.replyHashes, replyTexts: r.replyTexts } : undefined });
    this.#journal = new DirectJournal(r);
    this.#exchange = r?.exchange;
    this.#sessionId = r?.sessionId;
    this.sender = { sendMessage: ({ content }) => this.#sendReply(content) };
    this.#armTimers();
  }

  /** Local time of the last message either way (0 when none): the least recently active is closed first. */
  get lastActivityAt(): number {
    return this.#exchange?.lastActivityAt ?? 0;
  }

  /** An exchange is open (not ended), or work is pending. */
  get active(): boolean {
    return (this.#exchange !== undefined && this.#exchange.ended === undefined) || this.#busy || this.#held.length > 0 || this.#retryTimer !== undefined;
  }

  /** A received message already settled or waiting (a duplicate frame). */
  knows(key: string): boolean {
    return this.#journal.knows(key);
  }

  /** One message from the peer (admitted by the policy, not a duplicate). */
  receive(m: { key: string; sessionId: string; text: string; at: number }): void {
    if (this.#closed) return;
    const log = this.#p.logger;
    this.#sessionId = m.sessionId;
    this.#p.onEvent?.({ type: "received", peer: this.peer, text: m.text, at: m.at });
    const verdict = admitInbound({ exchange: this.#exchange, text: m.text, peerIsPerson: this.#p.peerIsPerson(), settings: this.#p.settings, now: this.#p.now() });
    this.#exchange = verdict.exchange;
    if (!verdict.answer) {
      this.#journal.settle(new Set([m.key]));
      log.log("info", "direct.not-answered", { peer: this.peer, reason: verdict.reason, key: m.key });
      this.#p.onEvent?.({ type: "not-answered", peer: this.peer, reason: verdict.reason });
      if (verdict.reason !== "resting") this.#ended(verdict.reason);
      else this.#armTimers();
      this.#p.persist("now");
      this.#maybeIdle();
      return;
    }
    if (verdict.opened) log.log("info", "direct.exchange-opened", { peer: this.peer, sessionId: m.sessionId });
    const pending: PendingDirect = { key: m.key, sessionId: m.sessionId, text: m.text, at: m.at };
    for (const d of this.#journal.receive(pending)) log.log("warn", "direct.dropped", { peer: this.peer, key: d.key, reason: "over-capacity" });
    const waiting = new Set(this.#journal.pending.map((p) => p.key));
    this.#held = this.#held.filter((h) => waiting.has(h.msgId));
    this.#held.push(this.#inbound(pending));
    this.#armTimers();
    // On disk before anything else happens: the network keeps no copy of a direct message.
    this.#p.persist("now");
    this.#kick();
  }

  /**
   * After a restart: messages a reply may have gone out for are settled (reported, never answered
   * twice); the others are answered now.
   */
  resume(): void {
    const maybe = this.#journal.pending.filter((p) => p.sending === true);
    if (maybe.length > 0) {
      this.#journal.settle(new Set(maybe.map((p) => p.key)));
      this.#p.logger.log("warn", "direct.maybe-answered", { peer: this.peer, keys: maybe.map((p) => p.key), note: "a reply was being sent when the agent stopped: not answered again" });
      this.#p.persist("now");
    }
    const held = new Set(this.#held.map((h) => h.msgId));
    for (const p of this.#journal.pending) if (!held.has(p.key)) this.#held.push(this.#inbound(p));
    this.#kick();
    this.#maybeIdle();
  }

  /** Ends an open exchange from outside (evicted for room). */
  end(reason: ExchangeEnd): void {
    if (this.#exchange === undefined || this.#exchange.ended !== undefined) return;
    this.#exchange = endExchange(this.#exchange, reason, this.#p.now());
    this.#ended(reason);
    this.#p.persist("soon");
  }

  snapshot(): DirectPeerRecord {
    const said = this.#memory.snapshot();
    return {
      peer: this.peer,
      ...this.#journal.snapshot(),
      lastSelfSpeakAt: said.lastSelfSpeakAt,
      replyHashes: said.replyHashes,
      replyTexts: said.replyTexts,
      ...(this.#exchange ? { exchange: this.#exchange } : {}),
      ...(this.#sessionId ? { sessionId: this.#sessionId } : {}),
    };
  }

  /** Stops: timers cleared; what is pending stays in the journal for the next run. */
  close(): void {
    this.#closed = true;
    this.#clearTimers();
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  #inbound(p: PendingDirect): InboundMessage {
    // Addressed by definition: every line of a direct conversation is for us (and its sender pays).
    return { msgId: p.key, groupId: this.key, sender: this.peer, content: p.text, contentType: "text", timestamp: p.at, metadata: null, isMention: true, engaged: false };
  }

  #kick(): void {
    if (this.#busy || this.#closed || this.#held.length === 0 || this.#retryTimer !== undefined) return;
    this.#busy = true;
    void this.#drain()
      .catch((err: unknown) => this.#p.logger.log("error", "direct.dispatch-failed", { peer: this.peer, ...errorFields(err) }))
      .finally(() => {
        this.#busy = false;
        this.#kick();
        this.#maybeIdle();
      });
  }

  async #drain(): Promise<void> {
    while (!this.#closed && this.#held.length > 0 && this.#retryTimer === undefined) {
      const messages = this.#held;
      this.#held = [];
      if (this.#exchange?.ended !== undefined) {
        // The exchange ended after these came in (our silence, the cap): a person's lines open a
        // new one; an agent's are not answered — it is to stop.
        if (!this.#p.peerIsPerson()) {
          this.#p.logger.log("info", "direct.not-answered", { peer: this.peer, reason: `ended:${this.#exchange.ended.reason}`, keys: messages.map((m) => m.msgId) });
          this.#done(new Set(messages.map((m) => m.msgId)));
          continue;
        }
        this.#exchange = openExchange(this.#p.now());
        this.#armTimers();
      }
      const batch: DispatchBatch = {
        identityId: this.#p.identityId,
        groupId: this.key,
        dispatchId: ++this.#dispatchId,
        messages,
        vitality: { ...QUIET, updatedAt: this.#p.now() },
        mentionInfo: { mentioned: true, mentionCount: messages.length, batchesMerged: 1, triggerType: "mention" },
        now: this.#p.now(),
        attempt: this.#attempt,
        ...(this.#carried ? { carried: this.#carried } : {}),
      };
      this.#inFlight = new Set(messages.map((m) => m.msgId));
      let outcome: DispatchOutcome;
      try {
        outcome = await this.#p.dispatch(batch, this.#context());
      } catch (error) {
        outcome = { kind: "retry", reason: "backend-failed", error };
      } finally {
        this.#inFlight = new Set();
      }
      this.#settle(batch, outcome);
    }
  }

  #context(): GroupContext {
    const self = this;
    return {
      memory: this.#memory,
      mentionWaiting: false,
      held: () => [...self.#held],
      get endedBy() {
        return self.#exchange?.ended?.reason;
      },
    };
  }

  #settle(batch: DispatchBatch, outcome: DispatchOutcome): void {
    const ids = new Set(batch.messages.map((m) => m.msgId));
    if (outcome.kind === "retry") {
      this.#carried = outcome.carry;
      if (this.#attempt >= this.#p.maxRetries) {
        this.#p.logger.log("warn", "direct.dropped", { peer: this.peer, keys: [...ids], reason: "retries-exhausted", ...errorFields(outcome.error) });
        return this.#done(ids);
      }
      this.#attempt++;
      const delay = this.#p.retryBackoffMs * 2 ** (this.#attempt - 1);
      this.#p.logger.log("warn", "direct.retry", { peer: this.peer, attempt: this.#attempt, retryInMs: delay, reason: outcome.reason, ...errorFields(outcome.error) });
      this.#held = [...batch.messages, ...this.#held];
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        this.#kick();
      }, delay);
      this.#retryTimer.unref?.();
      return;
    }
    // Closing: nothing surely answered; the journal keeps the batch for the next run.
    if (outcome.kind === "skipped" && outcome.reason === "group-closed") return;
    if (outcome.kind === "sent") {
      this.#memory.recordSent({ msgId: outcome.msgId, timestamp: outcome.sentAt ?? this.#p.now(), content: outcome.text, key: outcome.key });
      const before = this.#exchange;
      if (before !== undefined && before.ended === undefined) {
        this.#exchange = afterReply({ exchange: before, peerIsPerson: this.#p.peerIsPerson(), settings: this.#p.settings, now: this.#p.now() });
        if (this.#exchange.ended !== undefined) this.#ended(this.#exchange.ended.reason);
        else this.#armTimers();
      }
    } else if ((outcome.reason === "silent" || outcome.reason === "empty-after-trim") && this.#exchange !== undefined && this.#exchange.ended === undefined) {
      // Our silence ends the exchange: the model found nothing left to say.
      this.#exchange = endExchange(this.#exchange, "our-end", this.#p.now());
      this.#ended("our-end");
    }
    this.#done(ids);
  }

  /** The batch is settled for good: off the journal, on disk. */
  #done(ids: ReadonlySet<string>): void {
    this.#attempt = 0;
    this.#carried = undefined;
    this.#journal.settle(ids);
    this.#p.persist("now");
  }

  async #sendReply(text: string): Promise<{ msgId: string; timestamp: number }> {
    const keys = this.#inFlight;
    // Marked and on disk first: after a crash mid-send the message is not answered a second time.
    this.#journal.markSending(keys, true);
    this.#p.persist("now");
    try {
      await this.#p.send(text, this.#sessionId);
    } catch (err) {
      this.#journal.markSending(keys, false);
      this.#p.persist("now");
      throw err;
    }
    const at = this.#p.now();
    this.#p.onEvent?.({ type: "sent", peer: this.peer, text, at });
    return { msgId: `${this.key}/${++this.#sent}`, timestamp: at };
  }

  #ended(reason: ExchangeEnd): void {
    this.#clearTimers();
    const ex = this.#exchange;
    this.#p.logger.log("info", "direct.exchange-ended", { peer: this.peer, reason, agentTurns: ex?.agentTurns, lastedMs: ex ? this.#p.now() - ex.startedAt : undefined });
    this.#p.onEvent?.({ type: "ended", peer: this.peer, reason });
    // So that its side stops too: an agent hears the end marker when a cap or the length ended it.
    if ((reason === "agent-turn-cap" || reason === "max-length") && this.#p.settings.announceEnd && !this.#p.peerIsPerson()) {
      const marker = this.#p.settings.endMarkers[0]!;
      void this.#p.send(marker, this.#sessionId).catch((err: unknown) => this.#p.logger.log("warn", "direct.end-marker-failed", { peer: this.peer, ...errorFields(err) }));
    }
  }

  #maybeIdle(): void {
    if (!this.#closed && !this.active) this.#p.onIdle(this);
  }

  /** The idle and length timers from the exchange's deadlines; none once it ended. */
  #armTimers(): void {
    this.#clearTimers();
    const ex = this.#exchange;
    if (this.#closed || ex === undefined || ex.ended !== undefined) return;
    const { idleAt, lengthAt } = deadlines(ex, this.#p.settings);
    const now = this.#p.now();
    this.#idleTimer = setTimeout(() => this.#expire("idle"), Math.max(0, idleAt - now));
    this.#idleTimer.unref?.();
    this.#lengthTimer = setTimeout(() => this.#expire("max-length"), Math.max(0, lengthAt - now));
    this.#lengthTimer.unref?.();
  }

  #expire(reason: "idle" | "max-length"): void {
    this.#idleTimer = this.#lengthTimer = undefined;
    this.end(reason);
    this.#maybeIdle();
  }

  #clearTimers(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    if (this.#lengthTimer) clearTimeout(this.#lengthTimer);
    this.#idleTimer = this.#lengthTimer = undefined;
  }
}
