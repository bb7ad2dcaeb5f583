// What the local group service is given: its options, their validation (errors name the field),
// and where its history lives.
import type { Logger } from "../types.ts";
import { isPlain } from "../wire/plain.ts";
import type { GroupDefinition } from "./actions.ts";
import { createFileHistoryStore, createMemoryHistoryStore, type GroupHistoryStore } from "./history-store.ts";
import type { RateLimit } from "./rate-limit.ts";

export interface GroupServiceOptions {
  /** Distance between consecutive msg ids. Default 1; more plays a service whose ids increase but skip numbers. */
  msgIdStep?: number;
  /** The access point's domain: the service is `group.<domain>`. */
  domain: string;
  groups: Record<string, GroupDefinition>;
  /** Per member and group; over it send_message answers 1010. Default 10 per 10 s; null disables. */
  rateLimit?: RateLimit | null;
  /** Larger inbound payloads are counted and dropped. Default 1 MiB. */
  maxFrameBytes?: number;
  /** Longer send_message content answers 1009. Default 10000. */
  maxMessageChars?: number;
  /** Content plus metadata as JSON above this many bytes answers 1009. Default MAX_MESSAGE_BYTES (64 KiB). */
  maxMessageBytes?: number;
  /** A pull page or push batch stops before this many bytes of messages (at least one message). Default MAX_PAGE_BYTES (512 KiB). */
  maxPageBytes?: number;
  /** Largest pull_messages page. Default 100. */
  maxPullLimit?: number;
  /**
   * How a new message reaches registered members: `message_batch_push` (default), the deprecated
   * `message_push`, or nothing; plus an optional `group_notify new_message`; `echo: false` leaves
   * the sender out of its own message's push (like a service that does not echo).
   */
  delivery?: { push?: "batch" | "message" | "none"; notify?: boolean; echo?: boolean };
  logger?: Logger;
  /**
   * A registration not refreshed by `heartbeat` (or a new `register_online`) for this long is
   * offline: no more pushes to it. Default 5 minutes, like the real service; clients beat every 3.
   */
  onlineTtlMs?: number;
  /** Server clock for message timestamps, rate limits and the online TTL. Default Date.now. */
  now?: () => number;
  /** Keep history in this store (pass the same one to a restarted service). */
  history?: GroupHistoryStore;
  /** Or in this JSON-lines file. */
  historyFile?: string;
  /**
   * Reads a member's published agent.md (e.g. `memberTypeFromStore` over the local network's
   * store): `get_members` then carries each member's `type`, and `refresh_member_types` answers.
   */
  memberProfile?: (aid: string) => { type: "human" | "agent" | "unknown"; code: 0 | 1024 | 1025; declared?: string };
  /**
   * The operator's rule for who else is a person: e.g. an aid whose latest sign-in came from a
   * person's client (`acp-group chat`, with the local network's `peopleFromChat`). Such a member is
   * `human` in `get_members`, like one the group's definition marks human.
   */
  isPerson?: (aid: string) => boolean;
}

export class GroupServiceError extends Error {
  readonly code: "INVALID_OPTIONS" | "GROUP_NOT_FOUND" | "INVALID_MESSAGE";
  readonly groupId: string | undefined;
  constructor(code: GroupServiceError["code"], message: string, groupId?: string) {
    super(message);
    this.name = "GroupServiceError";
    this.code = code;
    this.groupId = groupId;
  }
}

export function validateOptions(o: GroupServiceOptions): void {
  const problems: string[] = [];
  if (typeof o.domain !== "string" || !/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(o.domain)) problems.push(`domain: expected a domain such as acp.local, got \`${String(o.domain)}\``);
  if (!isPlain(o.groups)) problems.push(`groups: expected an object, got ${typeof o.groups}`);
  else {
    for (const [id, g] of Object.entries(o.groups)) {
      if (!isPlain(g) || !isPlain(g.members)) problems.push(`groups.${id}.members: expected an object`);
    }
  }
  if (o.rateLimit) {
    if (!Number.isInteger(o.rateLimit.messages) || o.rateLimit.messages < 1) problems.push(`rateLimit.messages: expected ≥ 1, got ${o.rateLimit.messages}`);
    if (!Number.isInteger(o.rateLimit.perMs) || o.rateLimit.perMs < 1) problems.push(`rateLimit.perMs: expected ≥ 1, got ${o.rateLimit.perMs}`);
  }
  if (o.history && o.historyFile) problems.push("history, historyFile: expected at most one of them");
  if (problems.length > 0) throw new GroupServiceError("INVALID_OPTIONS", `invalid group service options\n  ${problems.join("\n  ")}`);
}

/** The history file, or memory; bad lines in the file are skipped and counted in the log. */
export function openHistory(file: string | undefined, log: Logger): GroupHistoryStore {
  if (!file) return createMemoryHistoryStore();
  const store = createFileHistoryStore(file);
  if (store.skippedLines > 0) log.log("warn", "server.history-lines-skipped", { file, skipped: store.skippedLines });
  return store;
}
