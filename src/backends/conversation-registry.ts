// The conversations of one back-end, one per (identity, group): loaded from persistence on first
// use, restarted when the system message changed, and saved back. Persistence errors are logged,
// never thrown: a lost history must not stop the agent.
import type { Logger } from "../types.ts";
import { silentLogger } from "../log.ts";
import { ConversationStore } from "./conversation-store.ts";

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
