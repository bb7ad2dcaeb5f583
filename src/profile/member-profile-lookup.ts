// The shell that feeds a member directory from senders' own agent.md: when a sender of unknown
// type speaks, fetch its profile once (again only after `retryAfterMs`), at most `maxInFlight`
// at a time, and record the type it declares. Fire-and-forget for the caller; never throws.
import type { MemberDirectory } from "../members/member-types.ts";
import { errorFields } from "../log.ts";
import type { Logger } from "../types.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import { isFetchableAid } from "./profile-host.ts";
import { fetchAgentMd, type FetchLike } from "./publish.ts";

export class ProfileLookup {
  readonly #directory: MemberDirectory;
  readonly #fetch: FetchLike;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #retryAfterMs: number;
  readonly #maxInFlight: number;
  /** aid → local time of the last attempt; bounded like the directory. */
  readonly #tried = new BoundedMap<string, number>(10_000);
  readonly #inFlight = new Map<string, Promise<void>>();
  #closed = false;

  constructor(p: { directory: MemberDirectory; fetch: FetchLike; logger: Logger; now: () => number; retryAfterMs?: number; maxInFlight?: number }) {
    this.#directory = p.directory;
    this.#fetch = p.fetch;
    this.#logger = p.logger;
    this.#now = p.now;
    this.#retryAfterMs = p.retryAfterMs ?? 3_600_000;
    this.#maxInFlight = p.maxInFlight ?? 4;
  }

  /** Call for each inbound sender; starts a fetch when worth it. Runs per message: nothing is allocated when none is. */
  noteSender(aid: string): void {
    const key = aid.toLowerCase();
    if (this.#inFlight.has(key)) return;
    void this.#start(key)?.catch((err: unknown) => this.#logger.log("error", "profile.lookup-failed", { aid, ...errorFields(err) }));
  }

  /** Resolves when the fetch this call started (or joined) is done; at once when none is needed. */
  lookup(aid: string): Promise<void> {
    const key = aid.toLowerCase();
    return this.#inFlight.get(key) ?? this.#start(key) ?? Promise.resolve();
  }

  /** Starts a fetch for `key` (lower case, none in flight) when it is worth one; else undefined. */
  #start(key: string): Promise<void> | undefined {
    if (this.#closed || !this.#directory.needsLookup(key) || this.#inFlight.size >= this.#maxInFlight) return undefined;
    // A sender name a group service made up ("127.0.0.1:8080/admin?") is never a request.
    if (!isFetchableAid(key)) return undefined;
    const now = this.#now();
    const last = this.#tried.get(key);
    if (last !== undefined && now - last < this.#retryAfterMs) return undefined;
    this.#tried.set(key, now);
    const task = fetchAgentMd({ aid: key, fetch: this.#fetch, logger: this.#logger })
      .then((r) => {
        if (this.#closed || !r.ok) return;
        // A profile that names another aid says nothing about this one.
        if (r.profile.aid !== undefined && r.profile.aid.toLowerCase() !== key) return;
        this.#directory.recordProfile(key, r.profile.type, r.profile.name);
        this.#logger.log("debug", "profile.member-type", { aid: key, type: r.profile.type });
      })
      .finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, task);
    return task;
  }

  /** Later results are ignored; fetches in flight end on their own timeout. */
  close(): void {
    this.#closed = true;
  }
}
