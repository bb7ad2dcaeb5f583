// The standalone agent back-end: any OpenAI-compatible chat completions endpoint through the
// `openai` SDK, with the seed-002 conversation store per (identity, group).
import OpenAI from "openai";
import type { AgentBackend, GenerateRequest, GenerateResult, LlmSettings, Logger, Usage } from "../types.ts";
import { childLogger, silentLogger } from "../log.ts";
import { parseIntent } from "../monitor/intent.ts";
import { createConversationRegistry, type ChatMessage, type ConversationRegistry } from "./conversation-store.ts";

export const DEFAULT_MODEL = "gpt-4o-mini";
/** The reply that means "stay silent" (the monitor's intent gate uses the same token). */
export const NO_REPLY_TOKEN = "NO_REPLY";

type Source = "config" | "env" | "default" | "none";

export interface ResolvedLlmSettings {
  baseUrl?: string;
  apiKey?: string;
  model: string;
  /** True when there is something to talk to: an API key, or an explicit base URL (local servers often need no key). */
  configured: boolean;
  /** Where each value came from, for the one-line startup notice. Never the key itself. */
  sources: { baseUrl: Source; apiKey: Source; model: Source };
  timeoutMs: number;
  maxRetries: number;
  maxTokens: number;
  temperature?: number;
  stream: boolean;
  historyTokenLimit: number;
}

const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() ? v.trim() : undefined);

/** Config wins over `OPENAI_BASE_URL` / `OPENAI_API_KEY` / `OPENAI_MODEL`; model defaults to gpt-4o-mini. */
export function resolveLlmSettings(llm: LlmSettings, env: NodeJS.ProcessEnv = process.env): ResolvedLlmSettings {
  const pick = (fromConfig: string | undefined, envName: string): [string | undefined, Source] => {
    const c = nonEmpty(fromConfig);
    if (c) return [c, "config"];
    const e = nonEmpty(env[envName]);
    return e ? [e, "env"] : [undefined, "none"];
  };
  const [baseUrl, baseSrc] = pick(llm.baseUrl, "OPENAI_BASE_URL");
  const [apiKey, keySrc] = pick(llm.apiKey, "OPENAI_API_KEY");
  const [model, modelSrc] = pick(llm.model, "OPENAI_MODEL");
  return {
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    model: model ?? DEFAULT_MODEL,
    configured: Boolean(apiKey || baseUrl),
    sources: { baseUrl: baseSrc, apiKey: keySrc, model: model ? modelSrc : "default" },
    timeoutMs: llm.timeoutMs,
    maxRetries: llm.maxRetries,
    maxTokens: llm.maxTokens,
    ...(llm.temperature !== undefined ? { temperature: llm.temperature } : {}),
    stream: llm.stream,
    historyTokenLimit: llm.historyTokenLimit,
  };
}

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

function toLlmError(err: unknown, request: GenerateRequest, timedOut: boolean): LlmError {
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

interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

function toUsage(u: RawUsage | null | undefined): Usage | undefined {
  if (!u) return undefined;
  const cached = u.prompt_tokens_details?.cached_tokens;
  return {
    promptTokens: u.prompt_tokens ?? 0,
    completionTokens: u.completion_tokens ?? 0,
    ...(typeof cached === "number" ? { cachedTokens: cached } : {}),
  };
}

/** A reply that means the model chose silence: nothing is stored as its turn. Same rule as the monitor's intent gate. */
export function isSilentReply(text: string): boolean {
  return !parseIntent(text).reply;
}

/** The dynamic part of the system prompt: what follows the stable prefix and its separator. */
function situationOf(request: GenerateRequest): string {
  const { systemPrompt, stablePrefix } = request;
  if (!systemPrompt.startsWith(stablePrefix)) return systemPrompt;
  return systemPrompt.slice(stablePrefix.length).replace(/^\n\n/, "");
}

/**
 * The user turn of one dispatch: the situation block, then the messages. The system message
 * stays the stable prefix alone, so the provider's prompt cache keeps hitting.
 */
export function userTurnContent(request: Pick<GenerateRequest, "systemPrompt" | "stablePrefix" | "body">): string {
  return `${situationOf(request as GenerateRequest)}\n\n${request.body}`;
}

/** The chat completions request body for `messages`, as this back-end sends it (without `stream`). */
export function chatRequestBody(settings: Pick<ResolvedLlmSettings, "model" | "maxTokens" | "temperature">, messages: ChatMessage[]) {
  return {
    model: settings.model,
    messages,
    max_tokens: settings.maxTokens,
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
  };
}

/**
 * What the back-end would send for `request` after the stored `history` (the conversation's
 * chat messages, system message first), without changing any store: for `inspect --as-sent`.
 */
export function previewChatRequest(p: {
  settings: Pick<ResolvedLlmSettings, "model" | "maxTokens" | "temperature">;
  history: ChatMessage[] | undefined;
  request: Pick<GenerateRequest, "systemPrompt" | "stablePrefix" | "body">;
}) {
  const history = p.history?.length ? p.history : [{ role: "system" as const, content: p.request.stablePrefix }];
  return chatRequestBody(p.settings, joinUserTurns([...history, { role: "user", content: userTurnContent(p.request) }]));
}

/** Consecutive user messages (a summary, then a turn) as one: servers want user and assistant to alternate. */
export function joinUserTurns(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (last && last.role === "user" && m.role === "user") out[out.length - 1] = { role: "user", content: `${last.content}\n\n${m.content}` };
    else out.push(m);
  }
  return out;
}

export interface BackendStats {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
}

export function createOpenAIBackend(p: {
  llm: LlmSettings;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  conversations?: ConversationRegistry;
  /** Sees each request body just before it is sent (`start --show-prompts`). */
  onRequest?: (body: ReturnType<typeof chatRequestBody>, request: GenerateRequest) => void;
}): AgentBackend & { stats(): BackendStats; readonly settings: ResolvedLlmSettings; readonly conversations: ConversationRegistry } {
  const settings = resolveLlmSettings(p.llm, p.env ?? process.env);
  const logger = p.logger ?? silentLogger;
  if (!settings.configured) {
    throw new LlmError({
      code: "LLM_NOT_CONFIGURED",
      message: "no model configured: set llm.baseUrl / llm.apiKey or OPENAI_BASE_URL / OPENAI_API_KEY",
      retryable: false,
    });
  }
  const conversations = p.conversations ?? createConversationRegistry({ historyTokenLimit: settings.historyTokenLimit, logger });
  const client = new OpenAI({
    // Passed explicitly so the SDK never falls back to process.env behind the resolved values.
    baseURL: settings.baseUrl ?? "https://api.openai.com/v1",
    // Local OpenAI-compatible servers usually take no key, but the SDK insists on one.
    apiKey: settings.apiKey ?? "not-needed",
    timeout: settings.timeoutMs,
    maxRetries: settings.maxRetries,
    // "info" carries the SDK's retry notices; they land in our log at debug level.
    logLevel: "info",
    logger: sdkLogger(logger),
  });
  const stats: BackendStats = { calls: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0 };
  const chains = new Map<string, Promise<void>>();

  const params = (messages: ChatMessage[]) => chatRequestBody(settings, messages);

  async function callPlain(messages: ChatMessage[], signal: AbortSignal | undefined) {
    const res = await client.chat.completions.create({ ...params(messages), stream: false }, signal ? { signal } : {});
    const choice = res.choices[0];
    if (!choice) throw new Error("response has no choices");
    return { text: choice.message.content ?? "", usage: toUsage(res.usage), model: res.model };
  }

  async function callStream(messages: ChatMessage[], signal: AbortSignal | undefined, onIdle: () => void) {
    const stream = await client.chat.completions.create(
      { ...params(messages), stream: true, stream_options: { include_usage: true } },
      signal ? { signal } : {},
    );
    // The SDK's timeout ends when the headers arrive; a stream that then stalls would hang the
    // group's dispatch lock forever, so every chunk must arrive within timeoutMs of the last.
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        stalled = true;
        onIdle();
        stream.controller.abort();
      }, settings.timeoutMs);
      idle.unref();
    };
    let text = "";
    let usage: Usage | undefined;
    let model: string | undefined;
    let stalled = false;
    try {
      arm();
      for await (const chunk of stream) {
        arm();
        model ??= chunk.model;
        text += chunk.choices[0]?.delta?.content ?? "";
        if (chunk.usage) usage = toUsage(chunk.usage);
      }
    } finally {
      clearTimeout(idle);
    }
    // An aborted SDK stream simply ends; partial text must not pass for a reply.
    if (stalled) throw new Error("stream stalled");
    if (signal?.aborted) throw new OpenAI.APIUserAbortError();
    return { text, usage, model };
  }

  return {
    name: "openai",
    settings,
    conversations,
    stats: () => ({ ...stats }),
    generate(request: GenerateRequest): Promise<GenerateResult> {
      return serialPerGroup(JSON.stringify([request.identityId, request.groupId]), () => generateNow(request));
    },
    settled(s) {
      // The stored turn becomes what the group saw: the trimmed text, or silence with the reason.
      const conv = conversations.peek(s.identityId, s.groupId);
      if (!conv) return;
      const changed = conv.settleAssistant(s.dispatchId, s.sent ? { sent: true, text: s.text } : { sent: false, reason: s.reason, silentContent: NO_REPLY_TOKEN });
      if (changed) conversations.save(s.identityId, s.groupId);
    },
    async close() {
      conversations.saveAll();
    },
  };

  // The group client already runs one dispatch per group at a time; this makes the back-end
  // safe on its own, because a rollback of one call must never eat another call's turn.
  async function serialPerGroup<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = chains.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = prev.then(() => mine);
    chains.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (chains.get(key) === tail) chains.delete(key);
    }
  }

  async function generateNow(request: GenerateRequest): Promise<GenerateResult> {
    const { identityId, groupId, dispatchId, trigger } = request;
    const log = childLogger(logger, { identityId, groupId, dispatchId });
    const conv = conversations.get(identityId, groupId, request.stablePrefix);
    const content = userTurnContent(request);
    // The two-phase "decide" call is a question about this batch, not a turn of the
    // conversation: it is sent with the history but not kept. The reply call that follows
    // records the batch once.
    const ephemeral = request.phase === "decide";
    let turn = -1;
    let messages: ChatMessage[];
    if (ephemeral) {
      messages = [...conv.toChatMessages(), { role: "user", content }];
    } else {
      turn = conv.appendUser({
        content,
        dispatch: dispatchId,
        trigger,
        senders: request.messages.map((m) => m.sender),
        messageCount: request.messages.length,
      });
      const folded = conv.compact(conversations.historyTokenLimit);
      if (folded > 0) log.log("info", "conversation.compressed", { foldedTurns: folded, estimatedTokens: conv.estimatedTokens() });
      messages = conv.toChatMessages();
    }

    messages = joinUserTurns(messages);
    if (p.onRequest) {
      try {
        p.onRequest(params(messages), request);
      } catch (err) {
        log.log("warn", "llm.on-request-failed", { error: String(err) });
      }
    }
    stats.calls += 1;
    let timedOut = false;
    const started = Date.now();
    let result: { text: string; usage: Usage | undefined; model: string | undefined };
    try {
      result = settings.stream
        ? await callStream(messages, request.signal, () => (timedOut = true))
        : await callPlain(messages, request.signal);
    } catch (err) {
      stats.errors += 1;
      if (turn >= 0) conv.rollbackTo(turn);
      const e = toLlmError(err, request, timedOut);
      // Detail for debugging; the failure's one warn line is the group client's retry line.
      log.log("debug", "llm.failed", {
        code: e.code,
        status: e.status,
        retryable: e.retryable,
        error: e.message,
        model: settings.model,
        stream: settings.stream,
        ms: Date.now() - started,
      });
      throw e;
    }

    const { text, usage, model } = result;
    if (usage) {
      stats.promptTokens += usage.promptTokens;
      stats.completionTokens += usage.completionTokens;
      stats.cachedTokens += usage.cachedTokens ?? 0;
    }
    const intent = parseIntent(text);
    if (!ephemeral) {
      // The turn is stored as the group will read it: without a tacked-on NO_REPLY. A silent
      // turn is stored as the bare token, so user and assistant keep alternating (some servers
      // reject two user turns in a row) and the model sees how it stayed silent before.
      conv.appendAssistant({
        turn,
        content: intent.reply ? intent.text : NO_REPLY_TOKEN,
        dispatch: dispatchId,
        trigger,
        ...(intent.reply ? {} : { silent: true }),
        ...(usage ? { usage } : {}),
        ...(model ? { model } : {}),
      });
      conversations.save(identityId, groupId);
    }
    log.log("debug", "llm.reply", {
      phase: request.phase ?? "reply",
      chars: text.length,
      silent: !intent.reply,
      promptTokens: usage?.promptTokens,
      completionTokens: usage?.completionTokens,
      cachedTokens: usage?.cachedTokens,
      ms: Date.now() - started,
    });
    return { text, ...(usage ? { usage } : {}) };
  }
}

// The SDK logs retries and warnings on its own; route them into our structured log.
function sdkLogger(logger: Logger) {
  const at = (level: "debug" | "info" | "warn" | "error") => (message: string, ...rest: unknown[]) =>
    logger.log(level, "llm.sdk", { message, ...(rest.length ? { detail: rest.map(String).join(" ") } : {}) });
  return { debug: at("debug"), info: at("debug"), warn: at("warn"), error: at("error") };
}
