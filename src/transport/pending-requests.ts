import { TransportError } from "./errors.ts";
import type { ServerFrame } from "../wire/frames.ts";

export type ResponseFrame = Extract<ServerFrame, { kind: "response" }>;

/** A request that got no answer in time: what it was, and `mark()` as it was when the request went out. */
export interface TimedOutRequest {
  action: string;
  groupId: string | undefined;
  mark: number;
}

interface Pending {
  action: string;
  groupId: string | undefined;
  resolve(frame: ResponseFrame): void;
  reject(err: Error): void;
  /** Fires the request timeout; cleared when the response arrives or the request is abandoned. */
  timer: ReturnType<typeof setTimeout>;
}

/** Requests in flight, matched to responses by `request_id`, each with its own timeout. */
export class PendingRequests {
  readonly #pending = new Map<string, Pending>();
  readonly #onTimeout: (request: TimedOutRequest) => void;
  readonly #mark: () => number;

  /** `mark`: read as each request goes out and handed back with it on a timeout (e.g. how many frames had come in). */
  constructor(onTimeout: (request: TimedOutRequest) => void, mark: () => number = () => 0) {
    this.#onTimeout = onTimeout;
    this.#mark = mark;
  }

  get size(): number {
    return this.#pending.size;
  }

  track(requestId: string, action: string, groupId: string | undefined, timeoutMs: number): Promise<ResponseFrame> {
    const mark = this.#mark();
    return new Promise<ResponseFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.#pending.delete(requestId)) return;
        this.#onTimeout({ action, groupId, mark });
        reject(
          new TransportError("REQUEST_TIMEOUT", `${action} got no response within ${timeoutMs} ms`, {
            action,
            ...(groupId !== undefined ? { groupId } : {}),
            requestId,
          }),
        );
      }, timeoutMs);
      // The socket keeps the process alive while a request matters; the timer must not.
      timer.unref?.();
      this.#pending.set(requestId, { action, groupId, resolve, reject, timer });
    });
  }

  /** Does a request wait for this id? */
  has(requestId: string): boolean {
    return this.#pending.has(requestId);
  }

  /** Resolves the matching request. False when no request waits for this id. */
  resolve(frame: ResponseFrame): boolean {
    const p = this.#pending.get(frame.requestId);
    if (!p) return false;
    this.#pending.delete(frame.requestId);
    clearTimeout(p.timer);
    p.resolve(frame);
    return true;
  }

  /** Rejects one request (a send error, an unparseable response to it). False when unknown. */
  reject(requestId: string, make: (action: string, groupId: string | undefined) => Error): boolean {
    const p = this.#pending.get(requestId);
    if (!p) return false;
    this.#pending.delete(requestId);
    clearTimeout(p.timer);
    p.reject(make(p.action, p.groupId));
    return true;
  }

  rejectAll(make: (action: string, groupId: string | undefined) => Error): void {
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of all) {
      clearTimeout(p.timer);
      p.reject(make(p.action, p.groupId));
    }
  }
}
