// Seed 002 (AgentContext) for the standalone back-end: one conversation per (identity, group).
//   [0] system    — the stable ACP prefix; set once, never changed (provider prefix cache)
//   [1] user      — optional summary of compressed older turns
//   …   user      — situation + formatted messages of one dispatch
//   …   assistant — the model's reply, with usage metadata (`NO_REPLY`, tagged silent, when it stayed silent);
//                   once settled, the text as sent — or `NO_REPLY` tagged `unsent` when the group never saw it
// Entries carry tags (seed 002's kwargs: `dispatch`, `trigger`) and a store-wide `turn`
// number. Dispatch ids restart at 1 with the process, turns never do, so rollback and range
// removal go by turn.
import { z } from "zod";
import { sanitizeSender } from "../monitor/sanitize.ts";
import type { Logger, TriggerType, Usage } from "../types.ts";
import { silentLogger } from "../log.ts";

export type ConversationTags = Readonly<Record<string, string | number>>;

/** What a summary entry stands for, kept structured so a later summary can absorb it. */
export interface SummaryInfo {
  fromTurn: number;
  toTurn: number;
  turns: number;
  messages: number;
  senders: string[];
  triggers: Record<string, number>;
  replies: number;
  /** Our latest replies (newest last), shortened — so the model does not repeat itself. */
  recentReplies: string[];
}

export interface ConversationEntry {
  role: "system" | "user" | "assistant";
  content: string;
  /** 0 for the system message; the turn (one dispatch) an entry belongs to otherwise. */
  turn: number;
  tags: ConversationTags;
  /** User entries: who spoke in the batch and how many messages it had. */
  senders?: string[];
  messageCount?: number;
  /** Assistant entries. */
  usage?: Usage;
  model?: string;
  /** An assistant entry the group never saw (tag `unsent`): what the model wrote. Never sent to the model. */
  draft?: string;
  summary?: SummaryInfo;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface SerializedConversation {
  version: 1;
  nextTurn: number;
  entries: ConversationEntry[];
}

const SENDERS_SHOWN = 8;
const REPLIES_KEPT = 3;
const REPLY_SNIPPET = 80;
// Compress down to this share of the limit, not just under it: one big cut every so often keeps
// the prefix (system + summary + older turns) byte-stable for many dispatches in between, which
// is what the provider's prefix cache pays for. Cutting one turn per dispatch would miss it
// every time.
const COMPACT_TO = 0.6;
const PER_MESSAGE_TOKENS = 4;

/**
 * Rough token count without a tokenizer: CJK and other wide scripts cost about one token per
 * character, Latin text about one per four. Used only to decide when to compress.
 */
export function estimateTokens(text: string): number {
  let wide = 0;
  let narrow = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0x2e80) wide += 1;
    else narrow += 1;
  }
  return wide + Math.ceil(narrow / 4);
}

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

function summarize(removed: readonly ConversationEntry[]): SummaryInfo {
  const info: SummaryInfo = {
    fromTurn: Number.POSITIVE_INFINITY,
    toTurn: 0,
    turns: 0,
    messages: 0,
    senders: [],
    triggers: {},
    replies: 0,
    recentReplies: [],
  };
  const senders = new Set<string>();
  const turns = new Set<number>();
  for (const e of removed) {
    if (e.summary) {
      info.fromTurn = Math.min(info.fromTurn, e.summary.fromTurn);
      info.turns += e.summary.turns;
      info.messages += e.summary.messages;
      info.replies += e.summary.replies;
      for (const s of e.summary.senders) senders.add(s);
      for (const [k, v] of Object.entries(e.summary.triggers)) info.triggers[k] = (info.triggers[k] ?? 0) + v;
      info.recentReplies.push(...e.summary.recentReplies);
      info.toTurn = Math.max(info.toTurn, e.summary.toTurn);
      continue;
    }
    info.fromTurn = Math.min(info.fromTurn, e.turn);
    info.toTurn = Math.max(info.toTurn, e.turn);
    if (e.role === "user") {
      turns.add(e.turn);
      info.messages += e.messageCount ?? 0;
      for (const s of e.senders ?? []) senders.add(s);
      const trigger = String(e.tags.trigger ?? "normal");
      info.triggers[trigger] = (info.triggers[trigger] ?? 0) + 1;
    } else if (e.role === "assistant" && e.tags.silent !== 1) {
      info.replies += 1;
      info.recentReplies.push(shorten(e.content));
    }
  }
  info.turns += turns.size;
  info.senders = [...senders];
  info.recentReplies = info.recentReplies.slice(-REPLIES_KEPT);
  if (!Number.isFinite(info.fromTurn)) info.fromTurn = info.toTurn;
  return info;
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= REPLY_SNIPPET ? flat : `${chars.slice(0, REPLY_SNIPPET).join("")}…`;
}

// Mechanical summary, no model call: counts, who spoke, and our own last words. It costs
// nothing, cannot fail, and is what the model most needs to avoid repeating itself.
function renderSummary(s: SummaryInfo): string {
  // Names as the prompt shows them: a raw name could open a line, forge a marker or pass for another aid.
  const shown = s.senders.slice(0, SENDERS_SHOWN).map((s) => sanitizeSender(s)).join(", ");
  const more = s.senders.length > SENDERS_SHOWN ? ` and ${s.senders.length - SENDERS_SHOWN} more` : "";
  const triggers = Object.entries(s.triggers)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");
  const lines = [
    `[Earlier in this group, compressed: ${s.turns} dispatches, ${s.messages} messages${shown ? ` from ${shown}${more}` : ""}${triggers ? ` (${triggers})` : ""}. You replied ${s.replies} times.]`,
  ];
  if (s.recentReplies.length > 0) {
    lines.push(`Your last replies then: ${s.recentReplies.map((r) => `“${r}”`).join(" / ")}`);
  }
  return lines.join("\n");
}

const usageSchema = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  cachedTokens: z.number().optional(),
});

const summarySchema = z.object({
  fromTurn: z.number().int(),
  toTurn: z.number().int(),
  turns: z.number().int().min(0),
  messages: z.number().int().min(0),
  senders: z.array(z.string()),
  triggers: z.record(z.string(), z.number()),
  replies: z.number().int().min(0),
  recentReplies: z.array(z.string()),
});

const entrySchema = z.object({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
  turn: z.number().int().min(0),
  tags: z.record(z.string(), z.union([z.string(), z.number()])),
  senders: z.array(z.string()).optional(),
  messageCount: z.number().int().min(0).optional(),
  usage: usageSchema.optional(),
  model: z.string().optional(),
  draft: z.string().optional(),
  summary: summarySchema.optional(),
});

const serializedSchema = z.object({
  version: z.literal(1),
  nextTurn: z.number().int().min(1),
  entries: z
    .array(entrySchema)
    .min(1)
    .refine((es) => es[0]?.role === "system" && es.slice(1).every((e) => e.role !== "system"), {
      message: "expected exactly one system message, first",
    }),
});

/** Where conversations are kept between runs; a {@link StateStore} fits. */
export interface ConversationPersistence {
  loadConversation(identityId: string, groupId: string): unknown | undefined;
  saveConversation(identityId: string, groupId: string, data: unknown): void;
}

export interface ConversationRegistry {
  /**
   * The conversation of (identity, group), loaded from persistence on first use. A stored one
   * whose system message differs from `systemPrompt` (persona or rules changed between runs)
   * is restarted with the new system message; its turns are carried over.
   */
  get(identityId: string, groupId: string, systemPrompt: string): ConversationStore;
  peek(identityId: string, groupId: string): ConversationStore | undefined;
  /** Writes one conversation through persistence (no-op without persistence). Errors are logged. */
  save(identityId: string, groupId: string): void;
  saveAll(): void;
  readonly historyTokenLimit: number;
}

export function createConversationRegistry(p: {
  historyTokenLimit: number;
  persistence?: ConversationPersistence;
  logger?: Logger;
}): ConversationRegistry {
  const logger = p.logger ?? silentLogger;
  const stores = new Map<string, { identityId: string; groupId: string; store: ConversationStore }>();
  // JSON of an [identity, group] pair: no separator can collide with characters inside the ids.
  const keyOf = (identityId: string, groupId: string): string => JSON.stringify([identityId, groupId]);

  function load(identityId: string, groupId: string): ConversationStore | undefined {
    let raw: unknown;
    try {
      raw = p.persistence?.loadConversation(identityId, groupId);
    } catch (err) {
      logger.log("error", "conversation.load-failed", { identityId, groupId, error: String(err) });
      return undefined;
    }
    if (raw === undefined) return undefined;
    try {
      return ConversationStore.fromJSON(raw);
    } catch (err) {
      logger.log("warn", "conversation.invalid", { identityId, groupId, error: String(err) });
      return undefined;
    }
  }

  function save(identityId: string, groupId: string): void {
    const found = stores.get(keyOf(identityId, groupId));
    if (!found || !p.persistence) return;
    try {
      p.persistence.saveConversation(identityId, groupId, found.store.toJSON());
    } catch (err) {
      logger.log("error", "conversation.save-failed", { identityId, groupId, error: String(err) });
    }
  }

  return {
    historyTokenLimit: p.historyTokenLimit,
    get(identityId, groupId, systemPrompt) {
      const key = keyOf(identityId, groupId);
      const found = stores.get(key);
      if (found && found.store.systemPrompt === systemPrompt) return found.store;
      let store = found?.store ?? load(identityId, groupId);
      if (store && store.systemPrompt !== systemPrompt) {
        logger.log("info", "conversation.system-changed", { identityId, groupId, turns: store.entries.length - 1 });
        const fresh = ConversationStore.fromJSON({
          ...store.toJSON(),
          entries: [{ role: "system", content: systemPrompt, turn: 0, tags: {} }, ...store.entries.slice(1)],
        });
        store = fresh;
      }
      store ??= new ConversationStore(systemPrompt);
      stores.set(key, { identityId, groupId, store });
      return store;
    },
    peek(identityId, groupId) {
      return stores.get(keyOf(identityId, groupId))?.store;
    },
    save,
    saveAll() {
      for (const { identityId, groupId } of stores.values()) save(identityId, groupId);
    },
  };
}
