// Group requests on the current session: unique request ids (`<aid>-<boot ms>-<random>-<seq>`, so
// a restarted process never reuses one), the response matched by id with a timeout, and a result
// code other than 0 turned into a typed error. Sending itself is the caller's (the channel).
import { TransportError } from "./errors.ts";
import { PendingRequests, type ResponseFrame, type TimedOutRequest } from "./pending-requests.ts";
import type { WireRequest } from "../wire/frames.ts";
import type { Plain } from "../wire/plain.ts";

export class SessionRequests {
  readonly pending: PendingRequests;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  /** Sends one payload on the current session; false when there is none (nothing sent). */
  readonly #send: (payload: string) => boolean;
  #seq = 0;

  constructor(params: {
    aid: string;
    /** Boot time (ms): part of every request id. */
    now: number;
    random: () => number;
    timeoutMs: number;
    send: (payload: string) => boolean;
    onTimeout: (request: TimedOutRequest) => void;
    /** Read as each request goes out; handed back with it on a timeout. */
    mark?: () => number;
  }) {
    this.#prefix = `${params.aid}-${params.now}-${Math.floor(params.random() * 0x10000).toString(16).padStart(4, "0")}`;
    this.#timeoutMs = params.timeoutMs;
    this.#send = params.send;
    this.pending = new PendingRequests(params.onTimeout, params.mark);
  }

  /** The response frame, whatever its code; NOT_CONNECTED when nothing could be sent. `timeoutMs` overrides the default for this request. */
  frame(action: string, groupId?: string, params?: Plain, timeoutMs = this.#timeoutMs): Promise<ResponseFrame> {
    const requestId = `${this.#prefix}-${++this.#seq}`;
    const request: WireRequest = { action, request_id: requestId, ...(groupId ? { group_id: groupId } : {}), ...(params ? { params } : {}) };
    const response = this.pending.track(requestId, action, groupId, timeoutMs);
    if (!this.#send(JSON.stringify(request))) {
      this.pending.reject(requestId, () => new TransportError("NOT_CONNECTED", `not connected: ${action} was not sent`, { action, ...(groupId ? { groupId } : {}), requestId }));
    }
    return response;
  }
}

export function requestFailed(frame: ResponseFrame, groupId: string | undefined): TransportError {
  return new TransportError("REQUEST_FAILED", `${frame.action} failed with code ${frame.code}${frame.error ? `: ${frame.error}` : ""}`, {
    action: frame.action,
    ...(groupId ? { groupId } : {}),
    requestId: frame.requestId,
    resultCode: frame.code,
  });
}
