// What a failed model call is, as one typed error: a stable code, whether trying again can help,
// and the identity, group and dispatch it was for. The message is for the log only.
import OpenAI from "openai";
import type { GenerateRequest } from "../types.ts";

export type LlmErrorCode =
  | "LLM_NOT_CONFIGURED"
  | "LLM_TIMEOUT"
  | "LLM_ABORTED"
  | "LLM_CONNECTION"
  | "LLM_RATE_LIMITED"
  | "LLM_AUTH"
  | "LLM_BAD_REQUEST"
  | "LLM_SERVER"
  | "LLM_BAD_RESPONSE";

/**
 * A model call failed. `retryable` says whether trying the same dispatch later can help (the
 * SDK already retried `maxRetries` times). The message is for the log, never for a group.
 */
export class LlmError extends Error {
  readonly code: LlmErrorCode;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly identityId: string | undefined;
  readonly groupId: string | undefined;
  readonly dispatchId: number | undefined;
  constructor(p: {
    code: LlmErrorCode;
    message: string;
    retryable: boolean;
    status?: number;
    request?: Pick<GenerateRequest, "identityId" | "groupId" | "dispatchId">;
    cause?: unknown;
  }) {
    super(p.message, { cause: p.cause });
    this.name = "LlmError";
    this.code = p.code;
    this.retryable = p.retryable;
    this.status = p.status;
    this.identityId = p.request?.identityId;
    this.groupId = p.request?.groupId;
    this.dispatchId = p.request?.dispatchId;
  }
}

/** The SDK's failure (or our own stream-idle timeout) as an {@link LlmError}. */
export function toLlmError(err: unknown, request: GenerateRequest, timedOut: boolean): LlmError {
  if (err instanceof LlmError) return err;
  const base = { request, cause: err };
  // Our own stream-idle timer aborts through the SDK, which reports a user abort: name it.
  if (timedOut || err instanceof OpenAI.APIConnectionTimeoutError) {
    return new LlmError({ ...base, code: "LLM_TIMEOUT", message: "model call timed out", retryable: true });
  }
  if (err instanceof OpenAI.APIUserAbortError) {
    return new LlmError({ ...base, code: "LLM_ABORTED", message: "model call aborted", retryable: false });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new LlmError({ ...base, code: "LLM_CONNECTION", message: `cannot reach the model: ${err.message}`, retryable: true });
  }
  if (err instanceof OpenAI.APIError) {
    const status = err.status;
    const message = `model endpoint answered ${status ?? "?"}: ${err.message}`;
    if (status === 429) return new LlmError({ ...base, code: "LLM_RATE_LIMITED", message, status, retryable: true });
    if (status === 401 || status === 403) return new LlmError({ ...base, code: "LLM_AUTH", message, status, retryable: false });
    if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 409) {
      return new LlmError({ ...base, code: "LLM_BAD_REQUEST", message, status, retryable: false });
    }
    return new LlmError({ ...base, code: "LLM_SERVER", message, ...(status !== undefined ? { status } : {}), retryable: true });
  }
  return new LlmError({ ...base, code: "LLM_BAD_RESPONSE", message: `unexpected model response: ${String(err)}`, retryable: true });
}
