// Seed 002 (AgentContext) for the standalone back-end: one conversation per (identity, group).
//   [0] system    — the stable ACP prefix; set once, never changed (provider prefix cache)
//   [1] user      — optional summary of compressed older turns
//   …   user      — situation + formatted messages of one dispatch
//   …   assistant — the model's reply, with usage metadata (`NO_REPLY`, tagged silent, when it stayed silent);
//                   once settled, the text as sent — or `NO_REPLY` tagged `unsent` when the group never saw it
// Entries carry tags (seed 002's kwargs: `dispatch`, `trigger`) and a store-wide `turn`
// number. Dispatch ids restart at 1 with the process, turns never do, so rollback and range
// removal go by turn.
import type { TriggerType, Usage } from "../types.ts";
import { serializedSchema, type ChatMessage, type ConversationEntry, type SerializedConversation } from "./conversation-entry.ts";
import { renderSummary, summarize } from "./conversation-summary.ts";
import { estimateTokens } from "../monitor/token-estimate.ts";

// Compress down to this share of the limit, not just under it: one big cut every so often keeps
// the prefix (system + summary + older turns) byte-stable for many dispatches in between, which
// is what the provider's prefix cache pays for. Cutting one turn per dispatch would miss it
// every time.
const COMPACT_TO = 0.6;
const PER_MESSAGE_TOKENS = 4;

const entryTokens = (e: ConversationEntry): number => estimateTokens(e.content) + PER_MESSAGE_TOKENS;

/** Per-(identity, group) history. Not safe for concurrent dispatches; the group lock serialises them. */
export class ConversationStore {
  readonly #entries: ConversationEntry[];
  #nextTurn: number;

  constructor(systemPrompt: string) {
    this.#entries = [{ role: "system", content: systemPrompt, turn: 0, tags: {} }];
    this.#nextTurn = 1;
  }

  get systemPrompt(): string {
    return this.#entries[0]!.content;
  }

  get entries(): readonly ConversationEntry[] {
    return this.#entries;
  }

  /** Appends one dispatch's input and returns its turn (the rollback mark). */
  appendUser(p: { content: string; dispatch: number; trigger: TriggerType; senders?: string[]; messageCount?: number }): number {
    const turn = this.#nextTurn++;
    this.#entries.push({
      role: "user",
      content: p.content,
      turn,
      tags: { dispatch: p.dispatch, trigger: p.trigger },
      ...(p.senders ? { senders: [...new Set(p.senders)] } : {}),
      ...(p.messageCount !== undefined ? { messageCount: p.messageCount } : {}),
    });
    return turn;
  }

  appendAssistant(p: { turn: number; content: string; dispatch: number; trigger: TriggerType; silent?: boolean; usage?: Usage; model?: string }): void {
    this.#entries.push({
      role: "assistant",
      content: p.content,
      turn: p.turn,
      tags: { dispatch: p.dispatch, trigger: p.trigger, ...(p.silent ? { silent: 1 } : {}) },
      ...(p.usage ? { usage: p.usage } : {}),
      ...(p.model ? { model: p.model } : {}),
    });
  }

  /**
   * What became of the reply of dispatch `dispatch`: sent, it holds the text as the group saw it;
   * not sent, it reads as silence (`silentContent`) tagged `unsent` with the reason, and the
   * model's words stay only in `draft`. Only the newest assistant entry can be settled (the
   * group lock keeps a reply's fate ahead of the next model call; dispatch ids restart with the
   * process, so an older entry with the same id is another run's). False when it is not that one.
   */
  settleAssistant(dispatch: number, s: { sent: true; text: string } | { sent: false; reason: string; silentContent: string }): boolean {
    for (let i = this.#entries.length - 1; i > 0; i--) {
      const e = this.#entries[i]!;
      if (e.role !== "assistant") continue;
      if (e.tags.dispatch !== dispatch) return false;
      const draft = e.draft ?? e.content;
      const { silent: _s, unsent: _u, ...tags } = e.tags;
      const { draft: _d, ...rest } = e;
      this.#entries[i] = s.sent
        ? { ...rest, content: s.text, tags }
        : { ...rest, content: s.silentContent, tags: { ...tags, silent: 1, unsent: s.reason }, draft };
      return true;
    }
    return false;
  }

  /** Entries whose tag `key` equals `value` (seed 002 `filter_human_messages_by_attribute`). */
  filterByTag(key: string, value: string | number): ConversationEntry[] {
    return this.#entries.filter((e) => e.tags[key] === value);
  }

  /** Drops every entry of `turn` and later — undoes a dispatch whose model call failed. */
  rollbackTo(turn: number): void {
    let keep = this.#entries.length;
    while (keep > 1 && this.#entries[keep - 1]!.turn >= turn) keep -= 1;
    this.#entries.splice(keep);
  }

  /**
   * Removes the turns `fromTurn..toTurn` (and an existing summary right before them) and puts
   * one summary entry in their place (seed 002 `remove_message_range` + summary). Returns the
   * removed entries.
   */
  removeRange(fromTurn: number, toTurn: number): ConversationEntry[] {
    let start = this.#entries.findIndex((e, i) => i > 0 && e.turn >= fromTurn);
    if (start < 0) return [];
    let end = start;
    while (end < this.#entries.length && this.#entries[end]!.turn <= toTurn) end += 1;
    const prev = this.#entries[start - 1];
    if (prev?.summary) start -= 1;
    const removed = this.#entries.slice(start, end);
    const info = summarize(removed);
    this.#entries.splice(start, end - start, {
      role: "user",
      content: renderSummary(info),
      turn: info.toTurn,
      tags: { summary: `${info.fromTurn}-${info.toTurn}` },
      summary: info,
    });
    return removed;
  }

  estimatedTokens(): number {
    let sum = 0;
    for (const e of this.#entries) sum += entryTokens(e);
    return sum;
  }

  /**
   * Over `limit` (estimated tokens), folds the oldest turns into the summary until the history
   * is at most {@link COMPACT_TO} of the limit. The newest turn is never folded: it is the one
   * being asked about. Returns how many turns were folded (0 = nothing to do).
   */
  compact(limit: number): number {
    if (this.estimatedTokens() <= limit) return 0;
    const target = Math.floor(limit * COMPACT_TO);
    const newest = this.#entries.at(-1)!.turn;
    let folded = 0;
    // The summary's own size is only known once written, so fold, re-measure, and repeat.
    // Each round folds at least one turn, so this ends.
    for (let total = this.estimatedTokens(); total > target; total = this.estimatedTokens()) {
      const from = this.#entries.find((e) => e.turn > 0 && !e.summary)?.turn;
      if (from === undefined || from >= newest) break;
      let to = from;
      for (const e of this.#entries) {
        if (e.role === "system" || e.summary) continue;
        if (e.turn >= newest || total <= target) break;
        total -= entryTokens(e);
        to = e.turn; // whole turns only: a user entry is never split from its reply
      }
      folded += new Set(this.removeRange(from, to).filter((e) => !e.summary).map((e) => e.turn)).size;
    }
    return folded;
  }

  /** The request body for the chat completions API. */
  toChatMessages(): ChatMessage[] {
    return this.#entries.map((e) => ({ role: e.role, content: e.content }));
  }

  toJSON(): SerializedConversation {
    return { version: 1, nextTurn: this.#nextTurn, entries: this.#entries.map((e) => ({ ...e })) };
  }

  /** Throws a zod error when `data` is not a serialized conversation. */
  static fromJSON(data: unknown): ConversationStore {
    const parsed = serializedSchema.parse(data);
    const store = new ConversationStore(parsed.entries[0]!.content);
    for (const e of parsed.entries.slice(1)) store.#entries.push(e as ConversationEntry);
    store.#nextTurn = Math.max(parsed.nextTurn, (parsed.entries.at(-1)?.turn ?? 0) + 1);
    return store;
  }
}
