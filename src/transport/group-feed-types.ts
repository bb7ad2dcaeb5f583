// What a group feed is given and what it reports: its status, its counters (part of the
// connection's) and its parameters — the pull, the ack, the handler and the retry delay.
import type { GroupMessage, Logger } from "../types.ts";
import type { PullPage } from "../wire/responses.ts";

export type GroupFeedStatus = "offline" | "syncing" | "live" | "retrying" | "closed";

export interface GroupFeedCounters {
  handlerErrors: number;
  pullFailures: number;
  messagesFed: number;
  heldOverflows: number;
  /** Pushes that skipped an id (a message we never saw) and were replaced by a pull. */
  gapResyncs: number;
  /** Pulls retried with a smaller page after a timeout or a response too large to read. */
  pageShrinks: number;
  /** Messages too large to receive even alone: skipped (the cursor moves past them), logged with their id. */
  droppedOversize: number;
}

export interface GroupFeedParams {
  groupId: string;
  onMessages(groupId: string, messages: GroupMessage[]): void | Promise<void>;
  /** One pull_messages request; rejects when it fails. */
  pull(afterMsgId: number, limit: number): Promise<PullPage>;
  /** Fire-and-forget ack_messages. */
  ack(msgId: number): void;
  /** Delay before retry number `attempt` after a handler or pull failure. */
  retryDelay(attempt: number): number;
  counters: GroupFeedCounters;
  logger: Logger;
  pageSize: number;
  /** Pushes held during a pull beyond this are dropped and re-pulled instead. */
  maxHeld: number;
}
