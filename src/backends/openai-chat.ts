// One chat completions call through the `openai` SDK, plain or streamed, with the SDK built from
// the resolved settings and its own log lines routed into ours. Knows nothing of conversations.
import OpenAI from "openai";
import type { Logger, Usage } from "../types.ts";
import { chatRequestBody } from "./chat-request.ts";
import type { ChatMessage } from "./conversation-entry.ts";
import type { ResolvedLlmSettings } from "./llm-settings.ts";

/** What the model answered: its text, the usage it reported, and the model that answered. */
export interface ModelReply {
  text: string;
  usage: Usage | undefined;
  model: string | undefined;
}

export function createOpenAIClient(settings: ResolvedLlmSettings, logger: Logger): OpenAI {
  return new OpenAI({
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
}

/** One model call: the client, its settings, the messages, and whom to tell of a stalled stream. */
export interface ChatCall {
  client: OpenAI;
  settings: ResolvedLlmSettings;
  messages: ChatMessage[];
  signal: AbortSignal | undefined;
  onIdle: () => void;
}

/**
 * Asks the model once, streamed when `settings.stream`. `onIdle` is told when a stream stalled
 * past `timeoutMs` between chunks (the call then fails, and the failure is a timeout).
 */
export function completeChat(p: ChatCall): Promise<ModelReply> {
  return p.settings.stream ? callStream(p) : callPlain(p);
}

async function callPlain(p: Omit<ChatCall, "onIdle">): Promise<ModelReply> {
  const res = await p.client.chat.completions.create({ ...chatRequestBody(p.settings, p.messages), stream: false }, p.signal ? { signal: p.signal } : {});
  const choice = res.choices[0];
  if (!choice) throw new Error("response has no choices");
  return { text: choice.message.content ?? "", usage: toUsage(res.usage), model: res.model };
}

async function callStream(p: ChatCall): Promise<ModelReply> {
  const { signal } = p;
  const stream = await p.client.chat.completions.create(
    { ...chatRequestBody(p.settings, p.messages), stream: true, stream_options: { include_usage: true } },
    signal ? { signal } : {},
  );
  // The SDK's timeout ends when the headers arrive; a stream that then stalls would hang the
  // group's dispatch lock forever, so every chunk must arrive within timeoutMs of the last.
  let idle: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      stalled = true;
      p.onIdle();
      stream.controller.abort();
    }, p.settings.timeoutMs);
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

// The SDK logs retries and warnings on its own; route them into our structured log.
function sdkLogger(logger: Logger) {
  const at = (level: "debug" | "info" | "warn" | "error") => (message: string, ...rest: unknown[]) =>
    logger.log(level, "llm.sdk", { message, ...(rest.length ? { detail: rest.map(String).join(" ") } : {}) });
  return { debug: at("debug"), info: at("debug"), warn: at("warn"), error: at("error") };
}
