// What the standalone back-end sends the model: the user turn of a dispatch, the request body,
// consecutive user turns joined, and the rule that a reply means silence.
import type { GenerateRequest } from "../types.ts";
import { parseIntent } from "../monitor/intent.ts";
import type { ResolvedLlmSettings } from "./llm-settings.ts";
import type { ChatMessage } from "./conversation-entry.ts";

/** The reply that means "stay silent" (the monitor's intent gate uses the same token). */
export const NO_REPLY_TOKEN = "NO_REPLY";

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
