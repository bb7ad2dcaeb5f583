// What keeps a session with the group service worth having, apart from the messages it carries:
// `register_online` answered (the service pushes only to registered members), the group heartbeat
// every slot, and a session that went silent noticed.
// - A register_online that got no answer (its frame may have been lost, e.g. sent before the
//   service joined the session) is retried within seconds on backoff (1 s, 2 s, 4 s … 30 s), not
//   at the next heartbeat slot; one the service answered with an error is asked again at the next
//   slot (a 1010 on backoff).
// - Every slot beats and then renews the registration; an error answer to either is logged and
//   never stops the next beat.
// - A request that timed out with nothing at all from the service since it went out means the
//   session is silent while the socket is up: it is handed back to be rebuilt (once per session).
//   Pulls do not count: their answer may be too large to come at all (the feed shrinks the page).
// Timers: the heartbeat and the register retry, both cleared when the session ends and on close.
import type { Logger } from "../types.ts";
import { errorFields } from "../log.ts";
import { computeBackoffDelay, type BackoffSettings } from "../util/backoff.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import type { TimedOutRequest } from "./pending-requests.ts";

export interface UpkeepCounters {
  /** register_online that failed or went unanswered. */
  registerFailures: number;
  heartbeatFailures: number;
  /** Sessions that answered nothing for a whole request timeout and were rebuilt. */
  silentSessions: number;
}

export interface SessionUpkeepParams {
  /** One request on the current session; rejects on a non-zero code (REQUEST_FAILED) or with no answer. */
  call(action: "register_online" | "heartbeat", timeoutMs?: number): Promise<unknown>;
  /** 0 disables the heartbeat. */
  heartbeatMs: number;
  /** How long register_online may go unanswered before it is asked again. */
  registerTimeoutMs: number;
  registerRetry: BackoffSettings;
  random: () => number;
  counters: UpkeepCounters;
  logger: Logger;
  peer: string;
  /** Registered after a spell unregistered: the service may not have pushed everything meanwhile. */
  onCaughtUp(): void;
  /** The session answered nothing for a request timeout while it was up: build a new one. */
  onSilent(sessionId: string): void;
}

/** Requests whose answer may be too large to arrive at all: their timeout says nothing about the session. */
const LARGE_ANSWERS: ReadonlySet<string> = new Set(["pull_messages", "pull_events"]);

/** The request was answered (a result code came back), as opposed to lost or timed out. */
const answered = (err: unknown): number | undefined => {
  const e = err as { code?: unknown; context?: { resultCode?: unknown } };
  return e.code === "REQUEST_FAILED" && typeof e.context?.resultCode === "number" ? e.context.resultCode : undefined;
};

export class SessionUpkeep {
  readonly #p: SessionUpkeepParams;
  /** The session being kept; undefined between sessions. */
  #session: string | undefined;
  #registered = false;
  /** Unanswered register_online in a row on this session: the retry's backoff step. */
  #unanswered = 0;
  /** Session already reported silent (reported once). */
  #silent: string | undefined;
  /** Armed while a session is up; re-armed after each beat; cleared when it ends and on close. */
  #heartbeatTimer: ReturnType<typeof setTimeout> | undefined;
  /** Armed after an unanswered register_online; cleared by the next register, when the session ends and on close. */
  #registerRetryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(p: SessionUpkeepParams) {
    this.#p = p;
  }

  get registered(): boolean {
    return this.#registered;
  }

  /** A new session: nothing registered yet; the heartbeat armed. */
  begin(sessionId: string): void {
    this.end();
    this.#session = sessionId;
    this.#armHeartbeat(sessionId);
  }

  /** The session is gone: its timers with it. */
  end(): void {
    this.#session = undefined;
    this.#registered = false;
    this.#unanswered = 0;
    this.#clearTimers();
  }

  close(): void {
    this.end();
  }

  /**
   * A request of `sessionId` timed out. `framesSince`: frames the service sent after it went out.
   * None at all → the session is silent.
   */
  noteTimeout(sessionId: string | undefined, request: TimedOutRequest, framesSince: number): void {
    if (LARGE_ANSWERS.has(request.action)) return;
    if (sessionId === undefined || sessionId !== this.#session || framesSince > 0 || this.#silent === sessionId) return;
    this.#silent = sessionId;
    this.#p.counters.silentSessions++;
    this.#p.logger.log("warn", "transport.session-silent", { peer: this.#p.peer, sessionId, action: request.action, note: "no answer and no push since the request went out: building a new session" });
    this.#p.onSilent(sessionId);
  }

  /** register_online on `sessionId`. Never rejects. */
  async register(sessionId: string, catchUp: boolean): Promise<void> {
    this.#clearRetry();
    try {
      await this.#p.call("register_online", this.#p.registerTimeoutMs);
      if (this.#session !== sessionId) return;
      const was = this.#registered;
      this.#registered = true;
      this.#unanswered = 0;
      if (catchUp && !was) this.#p.onCaughtUp();
    } catch (err) {
      if (this.#session !== sessionId) return;
      this.#p.counters.registerFailures++;
      const code = answered(err);
      if (code !== undefined && code !== RESULT_CODES.RATE_LIMITED) {
        // The service heard us and said no (e.g. to a repeat): asking again at once changes
        // nothing. The heartbeat goes on; the next slot asks again.
        this.#p.logger.log("warn", "transport.register-refused", { peer: this.#p.peer, sessionId, resultCode: code, ...errorFields(err) });
        return;
      }
      // No answer: the frame may never have reached the service. Pulls still work meanwhile.
      this.#registered = false;
      const delay = computeBackoffDelay(this.#unanswered++, this.#p.registerRetry, this.#p.random);
      this.#p.logger.log("warn", "transport.register-failed", { peer: this.#p.peer, sessionId, retryInMs: delay, ...errorFields(err) });
      this.#registerRetryTimer = setTimeout(() => {
        this.#registerRetryTimer = undefined;
        void this.register(sessionId, true);
      }, delay);
      this.#registerRetryTimer.unref?.();
    }
  }

  #armHeartbeat(sessionId: string): void {
    if (this.#heartbeatTimer !== undefined) clearTimeout(this.#heartbeatTimer);
    this.#heartbeatTimer = undefined;
    if (this.#p.heartbeatMs <= 0) return;
    this.#heartbeatTimer = setTimeout(() => {
      this.#heartbeatTimer = undefined;
      void this.#beat(sessionId);
    }, this.#p.heartbeatMs);
    this.#heartbeatTimer.unref?.();
  }

  /** One slot: the heartbeat, then the registration renewed. A failure of either is logged; the next slot comes regardless. */
  async #beat(sessionId: string): Promise<void> {
    if (this.#session !== sessionId) return;
    try {
      await this.#p.call("heartbeat");
    } catch (err) {
      if (this.#session !== sessionId) return;
      this.#p.counters.heartbeatFailures++;
      // Answered with an error: the service may have let our registration lapse (its online TTL,
      // a restart); the renewal below then pulls whatever it did not push meanwhile.
      if (answered(err) !== undefined) this.#registered = false;
      this.#p.logger.log("warn", "transport.heartbeat-failed", { peer: this.#p.peer, sessionId, ...errorFields(err) });
    }
    // A service may forget a registration and still answer heartbeats: renew it every slot
    // (idempotent), unless a retry of it is already on its way.
    if (this.#session === sessionId && this.#registerRetryTimer === undefined) await this.register(sessionId, true);
    if (this.#session === sessionId) this.#armHeartbeat(sessionId);
  }

  #clearRetry(): void {
    if (this.#registerRetryTimer !== undefined) clearTimeout(this.#registerRetryTimer);
    this.#registerRetryTimer = undefined;
  }

  #clearTimers(): void {
    this.#clearRetry();
    if (this.#heartbeatTimer !== undefined) clearTimeout(this.#heartbeatTimer);
    this.#heartbeatTimer = undefined;
  }
}
