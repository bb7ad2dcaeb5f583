// One identity's model-call slots: at most `concurrency` calls at once across its groups, mentions
// first, each call bounded by `timeoutMs`. A back-end that never settles, or ignores the abort
// signal, loses its slot at the timeout or at close: the caller gets a typed error, and the slot
// goes to the next call. Owns no timer beyond each call's own, cleared when the call ends.
import PQueue from "p-queue";
import type { AgentBackend, GenerateRequest, GenerateResult, ReplySettlement } from "../types.ts";

export type ModelCallErrorCode = "MODEL_TIMEOUT" | "MODEL_ABORTED";

/** A model call that did not finish: timed out (retryable), or cut off by its signal or close. */
export class ModelCallError extends Error {
  readonly code: ModelCallErrorCode;
  readonly retryable: boolean;
  readonly groupId: string;
  readonly dispatchId: number;
  constructor(code: ModelCallErrorCode, request: Pick<GenerateRequest, "groupId" | "dispatchId">, message: string) {
    super(message);
    this.name = "ModelCallError";
    this.code = code;
    // A timeout is worth a retry with backoff; an abort means the group or identity is closing.
    this.retryable = code === "MODEL_TIMEOUT";
    this.groupId = request.groupId;
    this.dispatchId = request.dispatchId;
  }
}

export interface ModelCallLimiter {
  /** `backend` behind the slots: same name, `generate` queued, bounded and abortable. */
  readonly backend: AgentBackend;
  /** Calls running now (each holds a slot). */
  readonly running: number;
  /** Rejects every queued and running call with MODEL_ABORTED; later calls reject at once. Never waits on a back-end. */
  close(): void;
}

export function createModelCallLimiter(p: { backend: AgentBackend; concurrency: number; timeoutMs: number }): ModelCallLimiter {
  const queue = new PQueue({ concurrency: p.concurrency });
  // Aborted by close(): every running race ends, whatever the back-end does.
  const lifetime = new AbortController();

  async function bounded(request: GenerateRequest): Promise<GenerateResult> {
    const timeout = new AbortController();
    const signal = AbortSignal.any([timeout.signal, lifetime.signal, ...(request.signal ? [request.signal] : [])]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const cutOff = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(
          timeout.signal.aborted
            ? new ModelCallError("MODEL_TIMEOUT", request, `model call timed out after ${p.timeoutMs} ms`)
            : new ModelCallError("MODEL_ABORTED", request, "model call aborted (group or identity closing)"),
        );
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      // Armed once per call, cleared in finally: the slot is held at most this long.
      timer = setTimeout(() => timeout.abort(), p.timeoutMs);
      timer.unref?.();
    });
    try {
      // The back-end sees the combined signal, so a well-behaved one stops its request too.
      const call = Promise.resolve().then(() => p.backend.generate({ ...request, signal }));
      // A call abandoned at the timeout may still reject later: nobody is waiting for it then.
      call.catch(() => {});
      return await Promise.race([call, cutOff]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }

  return {
    backend: {
      name: p.backend.name,
      generate(request) {
        if (lifetime.signal.aborted) return Promise.reject(new ModelCallError("MODEL_ABORTED", request, "model calls are closed"));
        // The signal also rejects a call still waiting for a slot (close, or its group closing).
        const waiting = request.signal ? AbortSignal.any([lifetime.signal, request.signal]) : lifetime.signal;
        return queue.add(() => bounded(request), { priority: request.mentionInfo.mentioned ? 1 : 0, signal: waiting }).catch((err: unknown) => {
          // The queue rejects with the signal's own AbortError: callers get one typed error.
          if (err instanceof ModelCallError || !waiting.aborted) throw err;
          throw new ModelCallError("MODEL_ABORTED", request, "model call aborted (group or identity closing)");
        });
      },
      ...(p.backend.settled ? { settled: (s: ReplySettlement) => p.backend.settled!(s) } : {}),
      ...(p.backend.close ? { close: () => p.backend.close!() } : {}),
    },
    get running() {
      return queue.pending;
    },
    close() {
      lifetime.abort();
    },
  };
}
