// A group feed's paged pull: page after page after a cursor until the service has no more. A page
// too large to carry (or not answered in time) is asked again at half the size and grows back
// after one that came through; a single message too large to receive even alone is skipped. What
// a page holds is the feed's (`take`); the feed also says when this pull is stale.
import type { Logger } from "../types.ts";
import type { PullPage } from "../wire/responses.ts";
import { highestId, oversizeSkipId } from "./feed-sequence.ts";
import type { GroupFeedCounters } from "./group-feed.ts";

export interface PagedPullParams {
  groupId: string;
  /** The configured page size, and the largest a shrunk page grows back to. */
  pageSize: number;
  /** One pull_messages request; rejects when it fails. */
  pull(afterMsgId: number, limit: number): Promise<PullPage>;
  counters: Pick<GroupFeedCounters, "pageShrinks" | "droppedOversize">;
  logger: Logger;
  /** The feed moved on (another connection, a close): the pull stops at its next step. */
  stale(): boolean;
  /** A message too large to receive even alone was skipped: the feed moves past its id. */
  skipTo(skipped: number): void;
  /** Hands a page (pulled after `after`) to the feed: false when it refused it. */
  take(page: PullPage, after: number): boolean | Promise<boolean>;
}

/** Pulls everything after `after`. False when the feed refused a page or the pull went stale; throws what a retry must handle. */
export async function pullPages(p: PagedPullParams, after: number): Promise<boolean> {
  let limit = p.pageSize;
  for (;;) {
    let page: PullPage;
    try {
      page = await p.pull(after, limit);
    } catch (err) {
      if (p.stale()) return false;
      const code = (err as { code?: unknown }).code;
      const tooLarge = code === "RESPONSE_TOO_LARGE";
      if (limit > 1 && (tooLarge || code === "REQUEST_TIMEOUT")) {
        // A page too large to carry (or to answer in time): the same pull, half the page.
        limit = Math.max(1, Math.floor(limit / 2));
        p.counters.pageShrinks++;
        p.logger.log("info", "transport.pull-page-shrunk", { groupId: p.groupId, after, limit, cause: code });
        continue;
      }
      if (!tooLarge) throw err;
      // One message too large to receive at all: skip it, counted and logged with its id.
      const skipped = oversizeSkipId(after, err);
      p.counters.droppedOversize++;
      const bytes = (err as { context?: { bytes?: unknown } }).context?.bytes;
      p.logger.log("warn", "transport.message-dropped", { groupId: p.groupId, reason: "oversize", msgId: String(skipped), bytes });
      p.skipTo(skipped);
      after = skipped;
      continue;
    }
    if (p.stale()) return false;
    // A page that came through: grow back towards the configured size.
    limit = Math.min(p.pageSize, limit * 2);
    if (!(await p.take(page, after))) return false;
    if (p.stale()) return false;
    if (!page.hasMore) return true;
    const last = highestId(page.messages, after);
    if (last <= after) {
      // has_more without progress would loop forever against a confused server.
      p.logger.log("warn", "transport.pull-no-progress", { groupId: p.groupId, after });
      return true;
    }
    after = last;
  }
}
