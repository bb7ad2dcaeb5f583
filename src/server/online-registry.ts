// Which sessions of which aids the group service pushes to: `register_online` adds one,
// `heartbeat` keeps it, `unregister_online` or the session's end removes it, and one not kept for
// the online TTL lapses. Lapsed entries are pruned on read with the server clock, never by a timer.
import type { Logger } from "../types.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import type { ActionResult } from "./actions.ts";

/** Sessions one aid may have registered online at once (a few processes); a newer one replaces the least recently seen. */
export const MAX_ONLINE_SESSIONS_PER_AID = 8;

/** Session-level actions: they need no group. */
export const ONLINE_ACTIONS: ReadonlySet<string> = new Set(["register_online", "unregister_online", "heartbeat"]);

export class OnlineRegistry {
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #log: Logger;
  /** aid → its sessions registered online (an aid may run several processes) → last register/heartbeat (server time). */
  readonly #online = new Map<string, Map<string, number>>();

  constructor(p: { now: () => number; ttlMs: number; logger: Logger }) {
    this.#now = p.now;
    this.#ttlMs = p.ttlMs;
    this.#log = p.logger;
  }

  /** Sessions of `aid` still online now; expired ones are pruned here. */
  liveSessions(aid: string): string[] {
    const sessions = this.#online.get(aid);
    if (!sessions) return [];
    const t = this.#now();
    for (const [sessionId, seen] of sessions) if (t - seen > this.#ttlMs) sessions.delete(sessionId);
    if (sessions.size === 0) this.#online.delete(aid);
    return [...sessions.keys()];
  }

  /** Aids with any registration left (lapsed ones included until read through {@link liveSessions}). */
  aids(): string[] {
    return [...this.#online.keys()];
  }

  /** One of {@link ONLINE_ACTIONS} from `from` on `sessionId`; always answered OK. */
  handle(from: string, sessionId: string, action: string): ActionResult {
    if (action === "register_online") {
      let sessions = this.#online.get(from);
      if (!sessions) this.#online.set(from, (sessions = new Map()));
      // Bounded: every push goes to each registered session, so many registrations would multiply it.
      if (!sessions.has(sessionId) && sessions.size >= MAX_ONLINE_SESSIONS_PER_AID) {
        let stalest: [string, number] | undefined;
        for (const entry of sessions) if (stalest === undefined || entry[1] < stalest[1]) stalest = entry;
        sessions.delete(stalest![0]);
      }
      sessions.set(sessionId, this.#now());
      this.#log.log("info", "group-service.online", { aid: from, sessionId });
    } else if (action === "heartbeat") {
      // Keeps a registration alive; a heartbeat never registers by itself.
      const seen = this.#online.get(from)?.get(sessionId);
      if (seen !== undefined && this.#now() - seen <= this.#ttlMs) this.#online.get(from)!.set(sessionId, this.#now());
    } else if (action === "unregister_online") {
      this.#online.get(from)?.delete(sessionId);
      this.#log.log("info", "group-service.offline", { aid: from, sessionId });
    }
    return { code: RESULT_CODES.OK, data: null, error: "" };
  }

  /** A push to this session found it gone: no more pushes to it. */
  drop(aid: string, sessionId: string): void {
    this.#online.get(aid)?.delete(sessionId);
  }

  /** The session ended: forget it, and the aid once it has none left. */
  endSession(aid: string, sessionId: string): void {
    this.#online.get(aid)?.delete(sessionId);
    if (this.#online.get(aid)?.size === 0) this.#online.delete(aid);
  }

  /** Forgets the registrations of `aid`, or everyone's. */
  forget(aid?: string): void {
    if (aid === undefined) this.#online.clear();
    else this.#online.delete(aid);
  }
}
