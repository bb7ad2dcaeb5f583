// Session control requests on the message socket (`create_session_req`, `invite_agent_req`) and
// the pairing of their acks: by request_id when the ack carries a known one, else (invites) by
// session_id, else the oldest — the official SDK pairs by order alone.
import { NetworkError } from "./errors.ts";

export const ACK_OF = { create_session_req: "create_session_ack", invite_agent_req: "invite_agent_ack" } as const;
export type ControlCommand = keyof typeof ACK_OF;

interface PendingAck {
  requestId: string;
  /** The session an invite is for (undefined for create). */
  sessionId: string | undefined;
  resolve: (data: Record<string, unknown>) => void;
  reject: (err: Error) => void;
  /** Rejects the request when no ack comes in time; cleared when settled or failed. */
  timer: ReturnType<typeof setTimeout>;
}

export class ControlRequests {
  readonly #aid: string;
  readonly #timeoutMs: number;
  readonly #pending: { [K in ControlCommand]: PendingAck[] } = { create_session_req: [], invite_agent_req: [] };

  constructor(params: { aid: string; timeoutMs: number }) {
    this.#aid = params.aid;
    this.#timeoutMs = params.timeoutMs;
  }

  /** Sends through `send` (false = socket not open) and resolves with the ack's `data`. */
  request(cmd: ControlCommand, data: Record<string, unknown>, send: () => boolean): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const requestId = String(data.request_id);
      const queue = this.#pending[cmd];
      const timer = setTimeout(() => {
        const i = queue.findIndex((p) => p.requestId === requestId);
        if (i >= 0) queue.splice(i, 1);
        reject(new NetworkError("BAD_REPLY", `no ${ACK_OF[cmd]} within ${this.#timeoutMs} ms`, { aid: this.#aid }));
      }, this.#timeoutMs);
      timer.unref?.();
      queue.push({ requestId, sessionId: typeof data.session_id === "string" ? data.session_id : undefined, resolve, reject, timer });
      if (!send()) {
        queue.pop();
        clearTimeout(timer);
        reject(new NetworkError("CLOSED", "socket not open", { aid: this.#aid }));
      }
    });
  }

  settle(cmd: ControlCommand, data: Record<string, unknown>): void {
    const queue = this.#pending[cmd];
    const byId = typeof data.request_id === "string" ? queue.findIndex((p) => p.requestId === data.request_id) : -1;
    const bySession = byId < 0 && typeof data.session_id === "string" ? queue.findIndex((p) => p.sessionId === data.session_id) : -1;
    const p = queue.splice(byId >= 0 ? byId : bySession >= 0 ? bySession : 0, 1)[0];
    if (!p) return;
    clearTimeout(p.timer);
    p.resolve(data);
  }

  /** Every request in flight fails with `err` (socket closed, agent closed). */
  failAll(err: Error): void {
    for (const queue of Object.values(this.#pending)) {
      for (const p of queue.splice(0)) {
        clearTimeout(p.timer);
        p.reject(err);
      }
    }
  }
}
